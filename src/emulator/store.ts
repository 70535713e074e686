// Accounts, sessions, transfers and their files. Everything is in memory except file bytes,
// which live under the data directory (one file per stored file, one per upload in progress).
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { Writable } from 'node:stream'
import { crc32 } from 'node:zlib'
import type { Download, TransferState } from '../api/types.js'
import type { ServiceClock } from './clock.js'
import { SETTINGS } from './settings.js'

export interface ContactGroupDef {
  id: string
  name: string
  emails: string[]
}

export interface User {
  id: string
  email: string
  password: string
  name: string
  admin: boolean
  companyid: string
  canstorefilesforever: boolean
  twoFactor: boolean
  maxrecipients: number
  storagelimit: number
  defaultdays: number
  maxdays: number
  contactgroups: ContactGroupDef[]
  created: number
}

export interface NewUser {
  email: string
  password: string
  name?: string
  admin?: boolean
  companyid?: string
  canstorefilesforever?: boolean
  twoFactor?: boolean
  maxrecipients?: number
  storagelimit?: number
  defaultdays?: number
  contactgroups?: Array<{ name: string; emails: string[] }>
}

interface Session {
  userId: string
  expires: number
  /** The refresh token issued with this logintoken, while it is unused. */
  refreshtoken: string | null
}

interface RefreshRecord {
  userId: string
  expires: number
  used: boolean
}

export interface StoredFile {
  fileid: string
  name: string
  size: number
  md5: string
  crc32: number
  path: string
  mtime: number
  downloads: Download[]
}

export interface Recipient {
  email: string
  trackid: string
  delivered: boolean
}

export interface PendingUpload {
  name: string
  chunks: number
  chunksize: number
  received: Set<number>
  /** Bytes of the last chunk, once it arrived (the file's size follows from it). */
  lastChunkSize: number | null
  path: string
  /** Set while the file is being hashed and moved into the transfer. */
  assembling: boolean
  /** Settles when the upload's file exists on disk. */
  ready: Promise<void>
}

export interface StoredTransfer {
  id: string
  key: string
  senderId: string | null
  from: string | null
  recipients: Recipient[]
  subject: string
  message: string
  password: string | null
  confirmation: boolean
  notify: boolean
  days: number
  permanent: boolean
  sentdate: number
  expiredate: number
  status: TransferState
  transfersize: number | null
  source: string | null
  companyid: string | null
  fileRequestId: string | null
  fileRequestShareId: string | null
  incomingpageid: string | null
  customfields: Array<{ id: string; value: string }>
  portalId: string | null
  allowforwarding: boolean
  files: StoredFile[]
  uploads: Map<string, PendingUpload>
  /** EntireTransfer records (SingleFile records live on their file). */
  transferDownloads: Download[]
  wrongPasswords: number
  captcha: string | null
  dir: string
}

export interface Portal {
  portalId: string
  friendlyName: string
  deleted: boolean
}

export type SessionLookup = { user: User } | { error: 'expired' | 'unknown' }
export type RefreshOutcome =
  | { logintoken: string; logintokenExpireDate: number; refreshtoken: string }
  | { error: 'RefreshTokenExpired' | 'RefreshTokenAlreadyUsed' }

const token = () => randomBytes(24).toString('base64url')

export class Store {
  readonly users = new Map<string, User>()
  readonly transfers = new Map<string, StoredTransfer>()
  readonly portals = new Map<string, Portal>()
  private readonly sessions = new Map<string, Session>()
  private readonly refreshTokens = new Map<string, RefreshRecord>()

  /** Told of each file stored (the service makes its thumbnail then, as a real one would). */
  onFileStored: ((file: StoredFile) => void) | undefined

  constructor(readonly dataDir: string, readonly clock: ServiceClock) {}

  createUser(spec: NewUser): User {
    if (this.userByEmail(spec.email)) throw new Error(`an account for ${spec.email} exists`)
    const user: User = {
      id: randomUUID(),
      email: spec.email,
      password: spec.password,
      name: spec.name ?? spec.email.split('@')[0]!,
      admin: spec.admin ?? false,
      companyid: spec.companyid ?? '',
      canstorefilesforever: spec.canstorefilesforever ?? false,
      twoFactor: spec.twoFactor ?? false,
      maxrecipients: spec.maxrecipients ?? SETTINGS.defaultMaxRecipients,
      storagelimit: spec.storagelimit ?? SETTINGS.defaultStorageLimit,
      defaultdays: spec.defaultdays ?? SETTINGS.defaultDays,
      maxdays: SETTINGS.defaultMaxDays,
      contactgroups: (spec.contactgroups ?? []).map((g) => ({ id: randomUUID(), name: g.name, emails: [...g.emails] })),
      created: this.clock.now(),
    }
    this.users.set(user.id, user)
    return user
  }

  userByEmail(email: string): User | undefined {
    const wanted = email.toLowerCase()
    for (const user of this.users.values()) if (user.email.toLowerCase() === wanted) return user
    return undefined
  }

  // --- sessions ---

  openSession(user: User): { logintoken: string; logintokenExpireDate: number; refreshtoken: string } {
    const now = this.clock.now()
    const logintoken = token()
    const refreshtoken = token()
    const expires = now + SETTINGS.loginTokenTtlMs
    this.sessions.set(logintoken, { userId: user.id, expires, refreshtoken })
    this.refreshTokens.set(refreshtoken, { userId: user.id, expires: now + SETTINGS.refreshTokenTtlMs, used: false })
    return { logintoken, logintokenExpireDate: expires, refreshtoken }
  }

  lookupSession(logintoken: string): SessionLookup {
    const session = this.sessions.get(logintoken)
    if (!session) return { error: 'unknown' }
    if (session.expires <= this.clock.now()) return { error: 'expired' }
    const user = this.users.get(session.userId)
    return user ? { user } : { error: 'unknown' }
  }

  /** Exchanges a refresh token (once) for a new logintoken and refresh token. */
  refresh(refreshtoken: string): RefreshOutcome {
    const record = this.refreshTokens.get(refreshtoken)
    if (!record) return { error: 'RefreshTokenExpired' }
    if (record.used) return { error: 'RefreshTokenAlreadyUsed' }
    if (record.expires <= this.clock.now()) return { error: 'RefreshTokenExpired' }
    record.used = true
    for (const session of this.sessions.values()) if (session.refreshtoken === refreshtoken) session.refreshtoken = null
    const user = this.users.get(record.userId)
    if (!user) return { error: 'RefreshTokenExpired' }
    return this.openSession(user)
  }

  /** Destroys a logintoken and its refresh token, or every token of its user. */
  logout(logintoken: string, allDevices: boolean): void {
    const session = this.sessions.get(logintoken)
    if (!session) return
    if (allDevices) {
      for (const [t, s] of this.sessions) if (s.userId === session.userId) this.sessions.delete(t)
      for (const [t, r] of this.refreshTokens) if (r.userId === session.userId) this.refreshTokens.delete(t)
      return
    }
    this.sessions.delete(logintoken)
    if (session.refreshtoken) this.refreshTokens.delete(session.refreshtoken)
  }

  // --- transfers ---

  async createTransfer(fields: Omit<StoredTransfer, 'id' | 'key' | 'files' | 'uploads' | 'transferDownloads' |
    'wrongPasswords' | 'captcha' | 'dir' | 'recipients'> & { to: string[] }): Promise<StoredTransfer> {
    const id = randomBytes(8).toString('hex')
    const { to, ...rest } = fields
    const transfer: StoredTransfer = {
      ...rest,
      id,
      key: randomBytes(16).toString('hex'),
      recipients: [],
      files: [],
      uploads: new Map(),
      transferDownloads: [],
      wrongPasswords: 0,
      captcha: null,
      dir: join(this.dataDir, 'transfers', id),
    }
    for (const email of to) this.addRecipient(transfer, email)
    await mkdir(join(transfer.dir, 'files'), { recursive: true })
    await mkdir(join(transfer.dir, 'uploads'), { recursive: true })
    this.transfers.set(id, transfer)
    return transfer
  }

  addRecipient(transfer: StoredTransfer, email: string): Recipient {
    const recipient = { email, trackid: randomBytes(10).toString('hex'), delivered: true }
    transfer.recipients.push(recipient)
    return recipient
  }

  byTrackId(trackid: string): { transfer: StoredTransfer; recipient: Recipient } | undefined {
    for (const transfer of this.transfers.values()) {
      const recipient = transfer.recipients.find((r) => r.trackid === trackid)
      if (recipient) return { transfer, recipient }
    }
    return undefined
  }

  isExpired(transfer: StoredTransfer): boolean {
    return !transfer.permanent && transfer.expiredate <= this.clock.now()
  }

  newFilePath(transfer: StoredTransfer): { fileid: string; path: string } {
    const fileid = randomBytes(8).toString('hex')
    return { fileid, path: join(transfer.dir, 'files', fileid) }
  }

  newUploadPath(transfer: StoredTransfer): string {
    return join(transfer.dir, 'uploads', randomBytes(8).toString('hex'))
  }

  /** Adds a file to a transfer, replacing (and deleting) one of the same name. */
  async putFile(transfer: StoredTransfer, file: StoredFile): Promise<void> {
    const index = transfer.files.findIndex((f) => f.name === file.name)
    if (index >= 0) {
      const old = transfer.files[index]!
      transfer.files[index] = file
      await rm(old.path, { force: true })
    } else {
      transfer.files.push(file)
    }
    this.onFileStored?.(file)
  }

  /**
   * Streams bytes into a new stored file of the transfer (seeding, demo); hashes on the way,
   * unless the content's digests are known (then its size is the written file's).
   */
  async writeFile(transfer: StoredTransfer, name: string, source: NodeJS.ReadableStream | AsyncIterable<Buffer>, mtime?: number,
    digests?: { md5: string; crc32: number }): Promise<StoredFile> {
    const { fileid, path } = this.newFilePath(transfer)
    let found: { md5: string; crc32: number; size: number }
    if (digests) {
      await pipeline(source, createWriteStream(path))
      found = { ...digests, size: (await stat(path)).size }
    } else {
      const hasher = new FileHasher()
      await pipeline(source as AsyncIterable<Buffer>, hasher.tap(), createWriteStream(path))
      found = hasher.result()
    }
    const file: StoredFile = { fileid, name, path, mtime: mtime ?? this.clock.now(), downloads: [], ...found }
    await this.putFile(transfer, file)
    return file
  }

  async removeAll(): Promise<void> {
    await rm(join(this.dataDir, 'transfers'), { recursive: true, force: true })
  }
}

/** MD5 and CRC-32 of a byte stream, computed as it passes. */
export class FileHasher {
  private readonly md5 = createHash('md5')
  private crc = 0
  private size = 0

  update(chunk: Buffer): void {
    this.md5.update(chunk)
    this.crc = crc32(chunk, this.crc)
    this.size += chunk.length
  }

  /** A pass-through transform stage for pipelines. */
  tap(): (source: AsyncIterable<Buffer>) => AsyncGenerator<Buffer> {
    const self = this
    return async function* (source) {
      for await (const chunk of source) {
        const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array)
        self.update(buf)
        yield buf
      }
    }
  }

  result(): { md5: string; crc32: number; size: number } {
    return { md5: this.md5.digest('hex'), crc32: this.crc >>> 0, size: this.size }
  }
}

/** A writable that discards, for pipelines that only hash. */
export function sink(): Writable {
  return new Writable({ write(_chunk, _enc, cb) { cb() } })
}
