// The Sender port over the real client (src/api). Chunks of every upload of the mount go
// through one shared queue, so at most `maxChunksInFlight` are in flight (and in memory)
// whatever number of entries upload at once. Each chunk is one ranged upload call of the
// client, which sends it with its MD5 and retries 406 / 449 / 5xx / network errors;
// a chunk failing for good stops the file's other chunks and fails the upload (the
// engine retries the send later, resending only the chunks not confirmed).
import { constants as C } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import { longPathFs as disk } from '../base/long-paths.js'
import PQueue from 'p-queue'
import { allOrFirstFailure } from '../base/all-or-first-failure.js'
import { planChunks } from '../api/chunk-plan.js'
import { ServiceError } from '../api/errors.js'
import type { TransferClient } from '../api/client.js'
import type { InitializeRequest, Transfer } from '../api/types.js'
import type { InitializeAnswer, Sender, UploadFileRequest } from './ports.js'

/** count: chunks uploading at once across the whole mount (design: at most 4). */
export const MAX_CHUNKS_IN_FLIGHT = 4

export interface ServiceSenderOptions {
  maxChunksInFlight?: number
}

export class ServiceSender implements Sender {
  private readonly chunks: PQueue
  /** Chunk buffers reused from one chunk to the next: memory stays at the chunks in flight. */
  private readonly spare: Buffer[] = []
  private readonly maxSpare: number

  constructor(
    private readonly client: TransferClient,
    opts: ServiceSenderOptions = {},
  ) {
    this.maxSpare = opts.maxChunksInFlight ?? MAX_CHUNKS_IN_FLIGHT
    this.chunks = new PQueue({ concurrency: this.maxSpare })
  }

  /** Chunks queued or uploading right now (tests, status). */
  get chunksPending(): number {
    return this.chunks.size + this.chunks.pending
  }

  async initialize(req: InitializeRequest, signal: AbortSignal): Promise<InitializeAnswer> {
    const r = await this.client.transfers.initialize(req, { signal })
    return { transferid: r.transferid, transferkey: r.transferkey, transferurl: r.transferurl }
  }

  async uploadFile(req: UploadFileRequest): Promise<void> {
    const plan = planChunks(req.size, req.chunkSize)
    const pending: number[] = []
    for (let i = 0; i < plan.chunks; i++) if (!req.confirmed.has(i)) pending.push(i)
    if (pending.length === 0) return
    const handle = await openQuietly(req.filePath)
    try {
      await allOrFirstFailure(this.chunks, pending.map((index) => async (signal: AbortSignal) => {
        // Every other index counts as confirmed: this call sends exactly one chunk.
        const others = { [Symbol.iterator]: function* () { for (let i = 0; i < plan.chunks; i++) if (i !== index) yield i } }
        const buf = this.takeBuffer(plan.chunkSize)
        await this.client.upload.uploadFile({
          transferUrl: req.transferurl, transferId: req.transferid, transferKey: req.transferkey,
          fileName: req.fileName, source: { size: req.size, read: readerOf(handle, req.fileName, buf) }, chunkSize: plan.chunkSize,
          confirmed: others, signal,
          onChunkConfirmed: (i) => req.onChunkConfirmed(i),
        })
        // Only after a clean answer: a request cut short may still hold the bytes.
        this.giveBuffer(buf)
      }), req.signal)
    } finally {
      await handle.close()
    }
  }

  async complete(transferid: string, transferkey: string): Promise<Transfer> {
    return this.client.transfers.complete(transferid, transferkey)
  }

  async transferStatus(transferid: string, password: string | null, signal: AbortSignal): Promise<Pick<Transfer, 'status' | 'url'>> {
    // Without files or downloads: only the status and link are wanted. A protected
    // transfer answers its sender too only with the password.
    const t = await this.client.transfers.details(transferid, { withDetails: false, ...(password !== null ? { password } : {}), signal })
    return { status: t.status, url: t.url }
  }

  async forward(transferid: string, to: string[]): Promise<void> {
    await this.client.transfers.forward(transferid, to)
  }

  private takeBuffer(size: number): Buffer {
    const i = this.spare.findIndex((b) => b.length >= size)
    return i >= 0 ? (this.spare.splice(i, 1)[0] as Buffer) : Buffer.allocUnsafeSlow(size)
  }

  private giveBuffer(buf: Buffer): void {
    if (this.spare.length < this.maxSpare) this.spare.push(buf)
  }
}

/**
 * Opens a staged file to upload it without touching its atime (O_NOATIME): the outbox shows
 * the staged file's atime as the user's file's, which an upload is no access to. Only the
 * file's owner may ask for that (EPERM otherwise): then it is opened as usual.
 */
async function openQuietly(file: string): Promise<FileHandle> {
  try {
    return await disk.open(file, C.O_RDONLY | (C.O_NOATIME ?? 0))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') throw err
    return disk.open(file, 'r')
  }
}

/** Reads bytes [start, end) of the staged file into `into` (a chunk buffer at least that long). */
function readerOf(h: FileHandle, name: string, into: Buffer): (start: number, end: number) => Promise<Buffer> {
  return async (start, end) => {
    const buf = into.subarray(0, end - start)
    let got = 0
    while (got < buf.length) {
      const { bytesRead } = await h.read(buf, got, buf.length - got, start + got)
      if (bytesRead === 0) throw new Error(`the staged file shrank while being sent (${name})`)
      got += bytesRead
    }
    return buf
  }
}

/** Where the key of a transfer sent from this machine is kept (the sent log). */
export interface TransferKeys {
  keyOf(transferid: string): Promise<InitializeAnswer | null>
}

/**
 * The Sender of files added to transfers already sent (copied into a `sent/` folder):
 * "initialize" answers the existing transfer (its id is the entry's one "recipient"),
 * uploads and Complete are the service's. A file whose name the transfer already holds
 * is replaced; Complete on a complete transfer sends no e-mail again.
 */
export class ExistingTransferSender implements Sender {
  constructor(
    private readonly inner: Sender,
    private readonly keys: TransferKeys,
    /** Told once files were added (the mount shows them in the transfer's folder). */
    private readonly onAdded: (transferid: string) => Promise<void> = async () => undefined,
  ) {}

  async initialize(req: InitializeRequest, _signal: AbortSignal): Promise<InitializeAnswer> {
    const id = req.to?.[0]
    const answer = id ? await this.keys.keyOf(id) : null
    if (!answer) {
      throw new ServiceError(`transfer ${id ?? '?'} was not sent from this machine`, 400, 'InvalidParameter', null,
        'files can be added only to transfers sent from this machine')
    }
    return answer
  }

  uploadFile(req: UploadFileRequest): Promise<void> {
    return this.inner.uploadFile(req)
  }

  async complete(transferid: string, transferkey: string): Promise<Transfer> {
    const t = await this.inner.complete(transferid, transferkey)
    await this.onAdded(transferid)
    return t
  }

  transferStatus(transferid: string, password: string | null, signal: AbortSignal): Promise<Pick<Transfer, 'status' | 'url'>> {
    return this.inner.transferStatus(transferid, password, signal)
  }

  forward(transferid: string, to: string[]): Promise<void> {
    return this.inner.forward(transferid, to)
  }
}
