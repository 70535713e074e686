// The read-only tree of the mount (inbox, sent, an empty outbox, by-id, .status), plus
// its one writable node, a locked transfer's `.password`. Everything else that would
// change the tree answers EROFS; the outbox and additions to sent transfers are the
// sending layer over it (sending.ts).
import type { ContentHandle, FileContent } from '../read/source.js'
import type { Bytes } from '../read/bytes.js'
import { idleStatus, type TransferCatalog, type StatusSource } from './catalog.js'
import { FsError, type FileSystemCore, type NodeAttr, type OpenFlags, type StatFs } from './core.js'
import type { Transfer } from '../api/types.js'
import { HandleTable } from './handles.js'
import { filesBelow, firstFileBelow, type FilesListed, type ListedFile } from './listed.js'
import { ArrivalWatch, DEFAULT_ARRIVAL_OPTIONS, type ArrivalOptions } from './arrivals.js'
import type { Arrival } from './inbox-news.js'
import type { TransferEntry } from './folder-listing.js'
import { MetadataStore } from './metadata.js'
import { mimeTypeOf } from './mime.js'
import { NAME_MAX_BYTES } from './names.js'
import { isDirectory, linkFile, transferJson, transferOf, TreeResolver, type Node } from './nodes.js'
import type { TreeDir } from './transfer-tree.js'
import { systemClock, type Clock } from '../base/clock.js'
import { vfsSettings, type VfsSettings } from './settings.js'

const S_IFDIR = 0o040000
const S_IFREG = 0o100000
const O_ACCMODE = 0o3
const O_RDONLY = 0
const O_WRONLY = 1
const O_TRUNC = 0o1000

const BLOCK_SIZE = 4096
/** Free space `df` shows for an account without a storage limit: plenty, so copy dialogs do not balk. */
const UNLIMITED_FREE_BYTES = 2 ** 50
const FILE_SLOTS = 1_000_000
/** Newest transfers whose files a listing of `inbox/` tells about (for their thumbnails). */
const PREVIEW_AHEAD_TRANSFERS = 20
/** Longest password a `.password` handle takes: anything longer is not a password. */
const MAX_PASSWORD_BYTES = 4096

export interface TransferFileSystemOptions {
  catalog: TransferCatalog
  content: FileContent
  settings?: Partial<VfsSettings>
  clock?: Clock
  status?: StatusSource
  /** Told the files of each transfer folder listed (the desktop's thumbnails). */
  onFilesListed?: FilesListed
  /** Look for new transfers in the background (arrivals.ts), telling each one here. */
  arrivals?: { onArrivals: (arrivals: Arrival[]) => void; options?: Partial<ArrivalOptions> }
}

type OpenHandle =
  | { kind: 'remote'; content: ContentHandle; size: number }
  | { kind: 'memory'; data: Buffer }
  | { kind: 'password'; entry: TransferEntry; written: Buffer }

export class TransferFileSystem implements FileSystemCore {
  readonly store: MetadataStore
  private readonly tree: TreeResolver
  private readonly handles = new HandleTable<OpenHandle>()
  private readonly settings: VfsSettings
  private readonly clock: Clock
  private readonly content: FileContent
  private readonly status: StatusSource
  private readonly mountedAt: Date
  private readonly onFilesListed: FilesListed | undefined
  private readonly arrivals: ArrivalWatch | undefined

  constructor(options: TransferFileSystemOptions) {
    this.settings = vfsSettings(options.settings)
    this.clock = options.clock ?? systemClock
    this.content = options.content
    this.status = options.status ?? idleStatus
    this.store = new MetadataStore(options.catalog, this.settings, this.clock)
    this.tree = new TreeResolver(this.store)
    this.mountedAt = new Date(this.clock.now())
    this.onFilesListed = options.onFilesListed
    if (options.arrivals) {
      this.store.inboxNews.listener = options.arrivals.onArrivals
      this.arrivals = new ArrivalWatch(this.store, options.catalog, this.clock, { ...DEFAULT_ARRIVAL_OPTIONS, ...options.arrivals.options })
      this.arrivals.start()
    }
  }

  async getattr(path: string): Promise<NodeAttr> {
    return this.attrOf(await this.tree.resolve(path))
  }

  async readdir(path: string): Promise<string[]> {
    const node = await this.tree.resolve(path)
    if (!isDirectory(node)) throw new FsError('ENOTDIR')
    const names = await this.tree.list(node)
    if (node.kind === 'inbox') this.arrivals?.looked()
    if (this.onFilesListed) this.tellListed(path, node)
    this.prepareRead(node)
    return names
  }

  /**
   * A listing leads to reads of what it shows: the read path gets ready for the first
   * file (a connection to its file server), so the first read does not wait for that.
   */
  private prepareRead(node: Node): void {
    const openTree = (entry: TransferEntry): TreeDir | null => {
      const contents = this.store.peekContents(entry)
      return contents?.state === 'open' ? contents.tree : null
    }
    let dir: TreeDir | null = null
    if (node.kind === 'folder') dir = node.dir
    else if (node.kind === 'transfer') dir = openTree(node.entry)
    else if (node.kind === 'inbox') {
      const listing = this.store.peekInbox()
      const newest = listing?.names[0]
      if (listing && newest !== undefined) dir = openTree(listing.byName.get(newest)!)
    }
    const file = dir && firstFileBelow(dir)
    if (file) this.content.prepare(file)
  }

  /**
   * The files a listing is likely to lead to, to the listener: a transfer's or a folder's
   * files at every depth, and for `inbox/` those of its newest transfers, so that their
   * thumbnails are ready when a file manager opens the folder (it looks for them at once,
   * and makes its own by reading the whole file when none is there). A locked transfer
   * has no files to give. A listener's failure is not the readdir's.
   */
  private tellListed(path: string, node: Node): void {
    const files: ListedFile[] = []
    const base = path.replace(/\/+$/, '')
    const add = (transfer: Transfer, dir: TreeDir, at: string) => filesBelow(dir, at, this.mtimeOf(transfer).getTime(), files)
    const addOpen = (entry: TransferEntry, at: string) => {
      const contents = this.store.peekContents(entry)
      if (contents?.state === 'open') add(contents.transfer, contents.tree, at)
    }
    if (node.kind === 'folder') add(node.transfer, node.dir, base)
    else if (node.kind === 'transfer') addOpen(node.entry, base)
    else if (node.kind === 'inbox') {
      const listing = this.store.peekInbox()
      if (listing) for (const name of listing.names.slice(0, PREVIEW_AHEAD_TRANSFERS)) addOpen(listing.byName.get(name)!, `${base}/${name}`)
    }
    if (files.length === 0) return
    try {
      this.onFilesListed?.(files)
    } catch {
      // Thumbnails are a nicety; the listing stands.
    }
  }

  async open(path: string, flags: OpenFlags): Promise<number> {
    const node = await this.tree.resolve(path)
    const access = flags & O_ACCMODE
    if (node.kind === 'password') {
      if (access !== O_WRONLY) throw new FsError('EACCES', '.password is write-only')
      return this.handles.add({ kind: 'password', entry: node.entry, written: Buffer.alloc(0) })
    }
    if (isDirectory(node)) throw new FsError('EISDIR')
    if (access !== O_RDONLY || (flags & O_TRUNC) !== 0) throw new FsError('EROFS')
    switch (node.kind) {
      case 'file': {
        const remote = node.file.remote
        return this.handles.add({ kind: 'remote', content: this.content.open(remote), size: remote.size })
      }
      case 'transfer-json':
        return this.handles.add({ kind: 'memory', data: transferJson(node.entry, node.contents) })
      case 'link':
        return this.handles.add({ kind: 'memory', data: linkFile(node.transfer) })
      case 'status':
        return this.handles.add({ kind: 'memory', data: Buffer.from(this.status.text(), 'utf8') })
      default:
        throw new FsError('EISDIR')
    }
  }

  async read(_path: string, fh: number, length: number, position: number): Promise<Bytes> {
    const handle = this.handles.get(fh)
    switch (handle.kind) {
      case 'memory':
        return handle.data.subarray(Math.min(position, handle.data.length), Math.min(position + length, handle.data.length))
      case 'remote':
        if (position >= handle.size || length <= 0) return Buffer.alloc(0)
        return handle.content.read(position, Math.min(length, handle.size - position))
      case 'password':
        throw new FsError('EBADF', '.password is write-only')
    }
  }

  async release(_path: string, fh: number): Promise<void> {
    const handle = this.handles.remove(fh)
    if (handle.kind === 'remote') handle.content.close()
  }

  async statfs(_path: string): Promise<StatFs> {
    const account = await this.store.account().catch(() => undefined)
    const used = Math.max(0, account?.storageinuse ?? 0)
    const limit = account?.storagelimit ?? 0
    const total = account === undefined ? used : limit > 0 ? Math.max(limit, used) : used + UNLIMITED_FREE_BYTES
    const free = Math.floor((total - used) / BLOCK_SIZE)
    return {
      bsize: BLOCK_SIZE,
      frsize: BLOCK_SIZE,
      blocks: Math.ceil(total / BLOCK_SIZE),
      bfree: free,
      bavail: free,
      files: FILE_SLOTS,
      ffree: FILE_SLOTS,
      favail: FILE_SLOTS,
      namemax: NAME_MAX_BYTES,
    }
  }

  async getxattr(path: string, name: string): Promise<Buffer> {
    // Only user.* attributes exist here. Any other namespace (security.selinux, ACLs) is
    // "not supported" rather than "absent": ls and file managers remember that per
    // filesystem and stop asking, where "absent" has them ask again for every entry.
    if (!name.startsWith('user.')) throw new FsError('EOPNOTSUPP')
    const value = this.xattrsOf(await this.tree.resolve(path)).get(name)
    if (value === undefined) throw new FsError('ENODATA')
    return Buffer.from(value, 'utf8')
  }

  async listxattr(path: string): Promise<string[]> {
    return [...this.xattrsOf(await this.tree.resolve(path)).keys()]
  }

  // --- the one writable node: .password -------------------------------------------

  /**
   * Each write tries what has been written so far (one trailing newline trimmed) as the
   * password, so a wrong one fails the write itself with EACCES: shells report a failed
   * write, but ignore a failed close.
   */
  async write(_path: string, fh: number, data: Buffer, position: number): Promise<number> {
    const handle = this.handles.get(fh)
    if (handle.kind !== 'password') throw new FsError('EBADF', 'not open for writing')
    const end = position + data.length
    if (end > MAX_PASSWORD_BYTES) throw new FsError('EFBIG')
    const written = Buffer.alloc(Math.max(handle.written.length, end))
    handle.written.copy(written)
    data.copy(written, position)
    const password = written.toString('utf8').replace(/\r?\n$/, '')
    if (password === '') {
      handle.written = written
      return data.length
    }
    try {
      await this.store.unlock(handle.entry, password)
    } catch (error) {
      handle.written = Buffer.alloc(0)
      throw error
    }
    handle.written = written
    return data.length
  }

  async flush(_path: string, fh: number): Promise<void> {
    this.handles.get(fh)
  }

  async fsync(_path: string, fh: number, _datasync: boolean): Promise<void> {
    this.handles.get(fh)
  }

  async truncate(path: string, _size: number): Promise<void> {
    const node = await this.tree.resolve(path)
    if (node.kind === 'password') return
    throw new FsError(isDirectory(node) ? 'EISDIR' : 'EROFS')
  }

  async ftruncate(_path: string, fh: number, size: number): Promise<void> {
    const handle = this.handles.get(fh)
    if (handle.kind !== 'password') throw new FsError('EROFS')
    handle.written = handle.written.subarray(0, Math.min(size, handle.written.length))
  }

  // --- read-only everywhere else ---------------------------------------------------

  async create(_path: string, _mode: number): Promise<number> { throw new FsError('EROFS') }
  async unlink(_path: string): Promise<void> { throw new FsError('EROFS') }
  async rename(_from: string, _to: string): Promise<void> { throw new FsError('EROFS') }
  async mkdir(_path: string, _mode: number): Promise<void> { throw new FsError('EROFS') }
  async rmdir(_path: string): Promise<void> { throw new FsError('EROFS') }
  async chmod(_path: string, _mode: number): Promise<void> { throw new FsError('EROFS') }
  async chown(_path: string, _uid: number, _gid: number): Promise<void> { throw new FsError('EROFS') }
  async utimens(_path: string, _atime: Date, _mtime: Date): Promise<void> { throw new FsError('EROFS') }
  async symlink(_target: string, _path: string): Promise<void> { throw new FsError('EROFS') }
  async setxattr(_path: string, _name: string, _value: Buffer): Promise<void> { throw new FsError('EROFS') }
  async removexattr(_path: string, _name: string): Promise<void> { throw new FsError('EROFS') }
  async readlink(_path: string): Promise<string> { throw new FsError('EINVAL') }

  async shutdown(): Promise<void> {
    await this.arrivals?.stop()
    for (const handle of this.handles.values()) if (handle.kind === 'remote') handle.content.close()
    await this.store.whenIdle()
  }

  /** Every listing becomes stale and is fetched again on its next use. */
  refresh(): void {
    this.store.expireAll()
  }

  /** Resolves once no background refresh is running (tests, shutdown). */
  whenIdle(): Promise<void> {
    return this.store.whenIdle()
  }

  get openHandles(): number {
    return this.handles.size
  }

  // --- attributes ------------------------------------------------------------------

  private attrOf(node: Node): NodeAttr {
    const mtime = this.mtimeOf(transferOf(node))
    const base = { mtime, atime: mtime, ctime: mtime, uid: this.settings.uid, gid: this.settings.gid }
    switch (node.kind) {
      case 'outbox':
        return { ...base, mode: S_IFDIR | 0o755, size: 0, nlink: 2 }
      case 'transfer':
        return { ...base, mode: S_IFDIR | (node.entry.place === 'sent' ? 0o755 : 0o555), size: 0, nlink: 2 }
      case 'file':
        return { ...base, mode: S_IFREG | 0o444, size: node.file.remote.size, nlink: 1 }
      case 'transfer-json':
        return { ...base, mode: S_IFREG | 0o444, size: transferJson(node.entry, node.contents).length, nlink: 1 }
      case 'link':
        return { ...base, mode: S_IFREG | 0o444, size: linkFile(node.transfer).length, nlink: 1 }
      case 'password':
        return { ...base, mode: S_IFREG | 0o200, size: 0, nlink: 1 }
      case 'status': {
        const now = new Date(this.clock.now())
        const size = Buffer.byteLength(this.status.text(), 'utf8')
        return { ...base, mtime: now, atime: now, ctime: now, mode: S_IFREG | 0o444, size, nlink: 1 }
      }
      default:
        return { ...base, mode: S_IFDIR | 0o555, size: 0, nlink: 2 }
    }
  }

  /** A node's mtime: its transfer's sent date (the mount's start when unknown). */
  private mtimeOf(transfer: Transfer | null): Date {
    return transfer && transfer.sentdate > 0 ? new Date(transfer.sentdate) : this.mountedAt
  }

  private xattrsOf(node: Node): Map<string, string> {
    const attrs = new Map<string, string>()
    if (node.kind !== 'file') return attrs
    if (node.file.remote.md5) attrs.set('user.md5', node.file.remote.md5)
    if (node.transfer.url) attrs.set('user.xdg.origin.url', node.transfer.url)
    attrs.set('user.mime_type', mimeTypeOf(node.file.remote.fileName))
    return attrs
  }
}
