// In-memory stand-ins for the ports of src/vfs: a TransferCatalog that answers as the
// service's contract says (PasswordRequired, AccessDenied, NotFound, the owner's view
// with the key), a FileContent over byte buffers, and a clock the test moves.
import { createHash } from 'node:crypto'
import { NetworkError, ServiceError } from '../../src/api/errors.js'
import type { FileDto, Transfer } from '../../src/api/types.js'
import type { ContentHandle, FileContent, RemoteFile } from '../../src/read/source.js'
import type { Account, DetailsOptions, InboxListing, SentRef, TransferCatalog } from '../../src/vfs/catalog.js'
import { toBuffer } from '../../src/read/bytes.js'
import type { TransferFileSystem } from '../../src/vfs/filesystem.js'
import { ManualClock } from '../support/manual-clock.js'

/** The manual clock, from the date the fake transfers are made around. */
export class FakeClock extends ManualClock {
  constructor(start = Date.UTC(2026, 10, 25, 12, 0, 0)) {
    super(start)
  }
}

let fileCounter = 0

export function makeFile(transferid: string, filename: string | null, bytes: Buffer | number = 16): FileDto {
  const data = typeof bytes === 'number' ? Buffer.alloc(bytes, 0x61) : bytes
  fileCounter++
  return {
    filename,
    filesize: data.length,
    downloadurl: `https://files.test/${transferid}/${fileCounter}`,
    fileid: `f${String(fileCounter).padStart(6, '0')}`,
    thumbid: '', previewurl: null, smallpreview: null, mediumpreview: null, largepreview: null,
    hascustompreview: null, hascustomthumbnail: null, videopreview: null, downloads: null,
    filetype: null, filetypedescription: null, category: '', transferid,
    md5: createHash('md5').update(data).digest('hex'),
    suspecteddamage: null,
  }
}

export function makeTransfer(fields: Partial<Transfer> & { id: string }): Transfer {
  return {
    to: [], recipients: [], failedRecipients: 0, from: 'alice@example.com', subject: 'A subject', message: '',
    expiredate: Date.UTC(2027, 0, 1), sentdate: Date.UTC(2026, 10, 20, 9, 30), notify: false,
    status: 'STATUS_COMPLETE', trackid: null, url: `https://transfer.test/d/${fields.id}`, size: null,
    customlogourl: null, compressedfileurl: '', compressedfilestatus: 'ready', compressedfileformat: 'zip',
    torrentstatus: '', torrenturl: '', days: 7, isexpired: false, source: null, key: `secret-key-${fields.id}`,
    fileserver: '', fileserverurl: '', fileserverurl_main: '', footertext: '', containsmorefiles: null,
    files: [], filesdb: false, hasfilesonotherfileserver: false,
    fileExplorer: { filesToken: null, parentItemId: null, offset: 0, limit: 0, total: 0, itemsLeft: 0, hasMore: false, items: [] },
    numberoffiles: 0, numberofdownloads: 0, downloads: [], antivirusscanstatus: '', passwordprotected: false,
    iconcolor: '', iconletter: '', ftphost: '', region: null, protocol: null, e2ee: null, kind: null,
    ftpcorppasswordrequired: false, udpthreshold: 0, permanent: false, maxdays: 30, allowediting: false,
    alloweditingexpiredate: false, blockdownloads: null, infected: false, infected_deleted: [],
    ...fields,
  }
}

function serviceError(status: 'NotFound' | 'PasswordRequired' | 'AccessDenied', http: number): ServiceError {
  return new ServiceError(status, http, status)
}

export class FakeCatalog implements TransferCatalog {
  readonly transfers = new Map<string, Transfer>()
  readonly passwords = new Map<string, string>()
  inboxIds: string[] = []
  sent: SentRef[] = []
  accountInfo: Account = { storageinuse: 3 * 1024 * 1024, storagelimit: 10 * 1024 * 1024 }
  offline = false
  readonly calls = { inboxSince: 0, inbox: 0, details: 0, byTrackId: 0, account: 0, sentIds: 0 }
  /** Every details/byTrackId call's password, to check what was sent. */
  readonly passwordsTried: Array<string | undefined> = []

  totalCalls(): number {
    return Object.values(this.calls).reduce((a, b) => a + b, 0)
  }

  add(transfer: Transfer, where: 'inbox' | 'sent' | 'nowhere' = 'inbox', password?: string): Transfer {
    this.transfers.set(transfer.id, transfer)
    if (password !== undefined) this.passwords.set(transfer.id, password)
    if (where === 'inbox') this.inboxIds.push(transfer.id)
    if (where === 'sent') this.sent.push({ id: transfer.id })
    return transfer
  }

  private gate: Promise<void> | null = null

  /** Holds every call until the returned function is called: a slow service. */
  hold(): () => void {
    let release!: () => void
    this.gate = new Promise((resolve) => { release = resolve })
    return () => {
      this.gate = null
      release()
    }
  }

  private async online(): Promise<void> {
    if (this.gate) await this.gate
    if (this.offline) throw new NetworkError('connect ECONNREFUSED', 'ECONNREFUSED')
  }

  async inboxSince(from: number, take: number): Promise<Transfer[]> {
    this.calls.inboxSince++
    await this.online()
    return this.listInbox().filter((t) => t.sentdate > from).slice(0, take)
  }

  readonly searches: string[] = []

  /** The service's search as the contract says: the words anywhere in id, subject, message, sender or recipients, any case. */
  async inboxSearch(words: string): Promise<Transfer[]> {
    this.searches.push(words)
    await this.online()
    const w = words.toLowerCase()
    return this.listInbox().filter((t) =>
      [t.id, t.subject, t.message, t.from ?? '', ...(t.recipients ?? []).map((r) => r.email)].some((text) => (text ?? '').toLowerCase().includes(w)))
  }

  async inbox(): Promise<InboxListing> {
    this.calls.inbox++
    await this.online()
    return { transfers: this.listInbox(), account: { ...this.accountInfo } }
  }

  private listInbox(): Transfer[] {
    // The inbox shows what a recipient sees: no key; the service's default omits expired ones
    // unless asked, but the model must cope either way, so this fake returns them all.
    return this.inboxIds
      .map((id) => this.transfers.get(id))
      .filter((t): t is Transfer => t !== undefined && t.status !== 'STATUS_CANCELLED' && t.status !== 'STATUS_DELETED')
      .sort((a, b) => b.sentdate - a.sentdate)
      .map((t) => ({ ...t, key: null, files: t.passwordprotected ? [] : t.files }))
  }

  private reveal(transfer: Transfer | undefined, options: DetailsOptions | undefined): Transfer {
    this.passwordsTried.push(options?.password)
    if (!transfer) throw serviceError('NotFound', 404)
    const password = this.passwords.get(transfer.id)
    if (password !== undefined) {
      if (options?.password === undefined) throw serviceError('PasswordRequired', 401)
      if (options.password !== password) throw serviceError('AccessDenied', 401)
    }
    const gone = transfer.status === 'STATUS_CANCELLED' || transfer.status === 'STATUS_DELETED'
    return structuredClone({ ...transfer, files: gone ? [] : transfer.files })
  }

  async details(id: string, options?: DetailsOptions): Promise<Transfer> {
    this.calls.details++
    await this.online()
    return this.reveal(this.transfers.get(id), options)
  }

  async byTrackId(trackid: string, options?: DetailsOptions): Promise<Transfer> {
    this.calls.byTrackId++
    await this.online()
    const found = [...this.transfers.values()].find((t) => t.trackid === trackid)
    return { ...this.reveal(found, options), key: null }
  }

  async account(): Promise<Account> {
    this.calls.account++
    await this.online()
    return { ...this.accountInfo }
  }

  async sentIds(): Promise<SentRef[]> {
    this.calls.sentIds++
    return this.sent.map((ref) => ({ ...ref }))
  }
}

/** FileContent over buffers, keyed by download URL; counts open and closed handles. */
export class FakeContent implements FileContent {
  readonly bytes = new Map<string, Buffer>()
  opened = 0
  closed = 0
  /** Download URLs of the files the core said a read of was likely. */
  readonly prepared: string[] = []

  prepare(file: RemoteFile): void {
    this.prepared.push(file.downloadUrl)
  }

  put(file: FileDto, data: Buffer): void {
    this.bytes.set(file.downloadurl, data)
  }

  open(file: RemoteFile): ContentHandle {
    this.opened++
    const data = this.bytes.get(file.downloadUrl) ?? Buffer.alloc(file.size, 0x61)
    let closed = false
    return {
      read: async (position, length) => {
        if (closed) throw new Error('read after close')
        return Buffer.from(data.subarray(position, position + length))
      },
      close: () => {
        closed = true
        this.closed++
      },
    }
  }
}

/** A file of the tree read whole (up to 1 MiB) through open, read and release, as a reader would. */
export async function readAll(fs: TransferFileSystem, path: string): Promise<Buffer> {
  const fh = await fs.open(path, 0)
  try {
    return toBuffer(await fs.read(path, fh, 0, 1 << 20))
  } finally {
    await fs.release(path, fh)
  }
}
