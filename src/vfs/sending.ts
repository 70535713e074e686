// The mount with sending: the read-only tree (TransferFileSystem) plus the writable parts.
// `/outbox/**` is the outbox staging (src/send OutboxFs); a file copied into a `sent/`
// transfer folder is staged in a second OutboxFs whose top-level folders are transfer
// ids, shown over the transfer's remote files until it is added; `sent/<folder>/.forward`
// is write-only (addresses, one per line, forwarded on close); `/.status` is a symbolic
// link to the status text the mount keeps on disk (a regular file here would be read
// through the kernel's 30 s attribute cache, cut to an old size).
import { FsError, type FileSystemCore, type NodeAttr, type OpenFlags, type StatFs } from './core.js'
import type { Bytes } from '../read/bytes.js'
import type { TransferFileSystem } from './filesystem.js'
import { HandleTable } from './handles.js'
import { splitPath } from './nodes.js'
import { FORWARD_FILE, isMissingPath, parseAddresses, where, type SendingParts, type StagingTree } from './sending-paths.js'

export { FORWARD_FILE, parseAddresses, type SendingParts, type StagingTree } from './sending-paths.js'

const S_IFREG = 0o100000
const S_IFLNK = 0o120000
const O_ACCMODE = 0o3
const O_RDONLY = 0
/** bytes: the longest address list a `.forward` handle takes. */
const MAX_FORWARD_BYTES = 64 * 1024

type Handle =
  | { kind: 'inner'; fh: number }
  | { kind: 'outbox'; fh: number }
  | { kind: 'additions'; fh: number }
  /** `done`: bytes of `written` already forwarded (whole lines). */
  | { kind: 'forward'; transferid: string; written: Buffer; done: number }

export class SendingFileSystem implements FileSystemCore {
  private readonly handles = new HandleTable<Handle>()

  constructor(
    readonly inner: TransferFileSystem,
    private readonly parts: SendingParts,
  ) {}

  // ---- where a sent folder's paths go --------------------------------------------------

  private async transferIdOf(folder: string): Promise<string> {
    const entry = (await this.inner.store.sent()).byName.get(folder)
    if (!entry || entry.ref.via !== 'id') throw new FsError('ENOENT')
    return entry.ref.token
  }

  private async staged(w: { folder: string; rest: string[] }): Promise<string> {
    return `/${await this.transferIdOf(w.folder)}/${w.rest.join('/')}`
  }

  /** The staged path exists (in the additions staging)? */
  private async isStaged(p: string): Promise<boolean> {
    try {
      await this.parts.additions.getattr(p)
      return true
    } catch (err) {
      if (isMissingPath(err)) return false
      throw err
    }
  }

  /** Makes the transfer's staging folder and every parent folder of `p` (a staged path). */
  private async stageParents(p: string): Promise<void> {
    const parts = splitPath(p)
    for (let i = 1; i < parts.length; i++) {
      const dir = '/' + parts.slice(0, i).join('/')
      if (await this.isStaged(dir)) continue
      await this.parts.additions.mkdir(dir, 0o755).catch((err: unknown) => {
        if (!(err instanceof FsError && err.code === 'EEXIST')) throw err
      })
    }
  }

  // ---- reading -----------------------------------------------------------------------------

  async getattr(path: string): Promise<NodeAttr> {
    const w = where(path)
    switch (w.area) {
      case 'outbox': return this.parts.outbox.getattr(w.p)
      case 'status': {
        if (this.parts.statusLink === null) return this.inner.getattr(path)
        const base = await this.inner.getattr('/')
        return { ...base, mode: S_IFLNK | 0o777, size: Buffer.byteLength(this.parts.statusLink), nlink: 1 }
      }
      case 'forward': {
        const base = await this.inner.getattr(`/sent/${w.folder}`)
        return { ...base, mode: S_IFREG | 0o200, size: 0, nlink: 1 }
      }
      case 'sent': {
        if (w.rest.length === 0) return this.inner.getattr(path)
        try {
          return await this.parts.additions.getattr(await this.staged(w))
        } catch (err) {
          if (!isMissingPath(err)) throw err
          return this.inner.getattr(path)
        }
      }
      default: return this.inner.getattr(path)
    }
  }

  async readdir(path: string): Promise<string[]> {
    const w = where(path)
    if (w.area === 'outbox') return this.parts.outbox.readdir(w.p)
    if (w.area === 'forward') throw new FsError('ENOTDIR')
    if (w.area !== 'sent') return this.inner.readdir(path)
    const remote = await this.inner.readdir(path).catch((err: unknown) => {
      if (isMissingPath(err)) return null
      throw err
    })
    const local = await this.parts.additions.readdir(await this.staged(w)).catch((err: unknown) => {
      if (isMissingPath(err)) return null
      throw err
    })
    if (remote === null && local === null) throw new FsError('ENOENT')
    const names = new Set([...(remote ?? []), ...(local ?? [])])
    if (w.rest.length === 0) names.add(FORWARD_FILE)
    return [...names]
  }

  async readlink(path: string): Promise<string> {
    const w = where(path)
    if (w.area === 'status' && this.parts.statusLink !== null) return this.parts.statusLink
    if (w.area === 'outbox') return this.parts.outbox.readlink(w.p)
    if (w.area === 'sent' && w.rest.length > 0) return this.parts.additions.readlink(await this.staged(w))
    throw new FsError('EINVAL')
  }

  async read(path: string, fh: number, length: number, position: number): Promise<Bytes> {
    const h = this.handles.get(fh)
    switch (h.kind) {
      case 'inner': return this.inner.read(path, h.fh, length, position)
      case 'outbox': return this.parts.outbox.read(path, h.fh, length, position)
      case 'additions': return this.parts.additions.read(path, h.fh, length, position)
      case 'forward': throw new FsError('EBADF', '.forward is write-only')
    }
  }

  statfs(path: string): Promise<StatFs> {
    return this.inner.statfs(path)
  }

  async getxattr(path: string, name: string): Promise<Buffer> {
    if (await this.isLocal(path)) throw new FsError('ENODATA')
    return this.inner.getxattr(path, name)
  }

  async listxattr(path: string): Promise<string[]> {
    if (await this.isLocal(path)) return []
    return this.inner.listxattr(path)
  }

  async setxattr(path: string, name: string, value: Buffer): Promise<void> {
    // Nothing is stored, so cp -a and mv fall back to chmod (docs/design.md, FUSE).
    if (await this.isLocal(path)) throw new FsError('EOPNOTSUPP')
    return this.inner.setxattr(path, name, value)
  }

  async removexattr(path: string, name: string): Promise<void> {
    if (await this.isLocal(path)) throw new FsError('EOPNOTSUPP')
    return this.inner.removexattr(path, name)
  }

  /** Served from local staging (the outbox, or a file being added to a sent transfer)? */
  private async isLocal(path: string): Promise<boolean> {
    const w = where(path)
    if (w.area === 'outbox' || w.area === 'forward') return true
    if (w.area !== 'sent' || w.rest.length === 0) return false
    return this.isStaged(await this.staged(w))
  }

  // ---- opening and closing ---------------------------------------------------------------------

  async open(path: string, flags: OpenFlags): Promise<number> {
    const w = where(path)
    const writing = (flags & O_ACCMODE) !== O_RDONLY
    if (w.area === 'outbox') return this.handles.add({ kind: 'outbox', fh: await this.parts.outbox.open(w.p, flags) })
    if (w.area === 'forward') {
      if (!writing) throw new FsError('EACCES', '.forward is write-only')
      return this.handles.add({ kind: 'forward', transferid: await this.transferIdOf(w.folder), written: Buffer.alloc(0), done: 0 })
    }
    if (w.area === 'sent' && w.rest.length > 0) {
      const p = await this.staged(w)
      if (await this.isStaged(p)) return this.handles.add({ kind: 'additions', fh: await this.parts.additions.open(p, flags) })
      if (writing) {
        // Overwriting a file of the transfer: the new bytes are staged and replace it once added.
        const attr = await this.inner.getattr(path)
        await this.stageParents(p)
        return this.handles.add({ kind: 'additions', fh: await this.parts.additions.create(p, attr.mode & 0o7777 | 0o200) })
      }
    }
    return this.handles.add({ kind: 'inner', fh: await this.inner.open(path, flags) })
  }

  async create(path: string, mode: number): Promise<number> {
    const w = where(path)
    if (w.area === 'outbox') return this.handles.add({ kind: 'outbox', fh: await this.parts.outbox.create(w.p, mode) })
    if (w.area === 'sent' && w.rest.length > 0) {
      const p = await this.staged(w)
      await this.stageParents(p)
      return this.handles.add({ kind: 'additions', fh: await this.parts.additions.create(p, mode) })
    }
    return this.inner.create(path, mode)
  }

  async write(path: string, fh: number, data: Buffer, position: number): Promise<number> {
    const h = this.handles.get(fh)
    switch (h.kind) {
      case 'outbox': return this.parts.outbox.write(path, h.fh, data, position)
      case 'additions': return this.parts.additions.write(path, h.fh, data, position)
      case 'inner': return this.inner.write(path, h.fh, data, position)
      case 'forward': {
        const end = position + data.length
        if (end > MAX_FORWARD_BYTES) throw new FsError('EFBIG')
        const written = Buffer.alloc(Math.max(h.written.length, end))
        h.written.copy(written)
        data.copy(written, position)
        h.written = written
        // Whole lines are forwarded as they are written: a refusal (unknown address, too
        // many recipients) fails the write itself, which shells report (a failed close they ignore).
        const lines = written.lastIndexOf(0x0a) + 1
        if (lines > h.done) await this.forwardFrom(h, lines)
        return data.length
      }
    }
  }

  private async forwardFrom(h: Extract<Handle, { kind: 'forward' }>, end: number): Promise<void> {
    const to = parseAddresses(h.written.subarray(h.done, end).toString('utf8'))
    h.done = end
    if (to.length > 0) await this.parts.forward(h.transferid, to)
  }

  /** `.forward`: a last line without a newline is forwarded on flush (the last op close() waits for). */
  async flush(path: string, fh: number): Promise<void> {
    const h = this.handles.get(fh)
    switch (h.kind) {
      case 'outbox': return this.parts.outbox.flush(path, h.fh)
      case 'additions': return this.parts.additions.flush(path, h.fh)
      case 'inner': return this.inner.flush(path, h.fh)
      case 'forward':
        if (h.written.length > h.done) await this.forwardFrom(h, h.written.length)
    }
  }

  async fsync(path: string, fh: number, datasync: boolean): Promise<void> {
    const h = this.handles.get(fh)
    if (h.kind === 'outbox') return this.parts.outbox.fsync(path, h.fh, datasync)
    if (h.kind === 'additions') return this.parts.additions.fsync(path, h.fh, datasync)
    if (h.kind === 'inner') return this.inner.fsync(path, h.fh, datasync)
  }

  async release(path: string, fh: number): Promise<void> {
    const h = this.handles.remove(fh)
    if (h.kind === 'outbox') return this.parts.outbox.release(path, h.fh)
    if (h.kind === 'additions') return this.parts.additions.release(path, h.fh)
    if (h.kind === 'inner') return this.inner.release(path, h.fh)
  }

  async ftruncate(path: string, fh: number, size: number): Promise<void> {
    const h = this.handles.get(fh)
    if (h.kind === 'outbox') return this.parts.outbox.ftruncate(path, h.fh, size)
    if (h.kind === 'additions') return this.parts.additions.ftruncate(path, h.fh, size)
    if (h.kind === 'inner') return this.inner.ftruncate(path, h.fh, size)
    h.written = h.written.subarray(0, Math.min(size, h.written.length))
    h.done = Math.min(h.done, h.written.length)
  }

  // ---- paths -------------------------------------------------------------------------------------

  /** The op on a staged path (outbox or an addition), else `elsewhere` (the inner tree's answer). */
  private async local<T>(path: string, op: (tree: StagingTree, p: string) => Promise<T>, elsewhere: () => Promise<T>): Promise<T> {
    const w = where(path)
    if (w.area === 'outbox') return op(this.parts.outbox, w.p)
    if (w.area === 'sent' && w.rest.length > 0) {
      const p = await this.staged(w)
      if (await this.isStaged(p)) return op(this.parts.additions, p)
    }
    return elsewhere()
  }

  truncate(path: string, size: number): Promise<void> {
    // `echo a@b.c > .forward` truncates first: nothing to cut.
    if (where(path).area === 'forward') return Promise.resolve()
    return this.local(path, (t, p) => t.truncate(p, size), () => this.inner.truncate(path, size))
  }

  unlink(path: string): Promise<void> {
    return this.local(path, (t, p) => t.unlink(p), () => this.inner.unlink(path))
  }

  rmdir(path: string): Promise<void> {
    return this.local(path, (t, p) => t.rmdir(p), () => this.inner.rmdir(path))
  }

  async mkdir(path: string, mode: number): Promise<void> {
    const w = where(path)
    if (w.area === 'outbox') return this.parts.outbox.mkdir(w.p, mode)
    if (w.area === 'sent' && w.rest.length > 0) {
      const p = await this.staged(w)
      const remote = await this.inner.getattr(path).then(() => true, (err: unknown) => {
        if (isMissingPath(err)) return false
        throw err
      })
      if (remote || (await this.isStaged(p))) throw new FsError('EEXIST')
      await this.stageParents(p)
      return this.parts.additions.mkdir(p, mode)
    }
    return this.inner.mkdir(path, mode)
  }

  async symlink(target: string, path: string): Promise<void> {
    const w = where(path)
    if (w.area === 'outbox') return this.parts.outbox.symlink(target, w.p)
    if (w.area === 'sent' && w.rest.length > 0) {
      const p = await this.staged(w)
      await this.stageParents(p)
      return this.parts.additions.symlink(target, p)
    }
    return this.inner.symlink(target, path)
  }

  async rename(from: string, to: string): Promise<void> {
    const a = where(from)
    const b = where(to)
    if (a.area === 'outbox' && b.area === 'outbox') return this.parts.outbox.rename(a.p, b.p)
    if (a.area === 'sent' && b.area === 'sent' && a.rest.length > 0 && b.rest.length > 0) {
      const pa = await this.staged(a)
      const pb = await this.staged(b)
      if (await this.isStaged(pa)) {
        if (splitPath(pa)[0] !== splitPath(pb)[0]) throw new FsError('EXDEV')
        await this.stageParents(pb)
        return this.parts.additions.rename(pa, pb)
      }
    }
    // Between the outbox and a sent folder, `mv` copies (and removes the source).
    if (a.area === 'outbox' || b.area === 'outbox' || (a.area === 'sent' && b.area === 'sent')) throw new FsError('EXDEV')
    return this.inner.rename(from, to)
  }

  // ---- metadata ---------------------------------------------------------------------------------

  /** A transfer folder of sent/ itself: cp -a and rsync -a set its times and modes; accepted, not kept. */
  private isSentFolder(path: string): boolean {
    const w = where(path)
    return w.area === 'sent' && w.rest.length === 0
  }

  chmod(path: string, mode: number): Promise<void> {
    if (this.isSentFolder(path)) return Promise.resolve()
    return this.local(path, (t, p) => t.chmod(p, mode), () => this.inner.chmod(path, mode))
  }

  chown(path: string, uid: number, gid: number): Promise<void> {
    if (this.isSentFolder(path)) return Promise.resolve()
    return this.local(path, (t, p) => t.chown(p, uid, gid), () => this.inner.chown(path, uid, gid))
  }

  utimens(path: string, atime: Date, mtime: Date): Promise<void> {
    if (this.isSentFolder(path)) return Promise.resolve()
    return this.local(path, (t, p) => t.utimens(p, atime, mtime), () => this.inner.utimens(path, atime, mtime))
  }

  async shutdown(): Promise<void> {
    await this.parts.shutdown().catch(() => undefined)
    await this.inner.shutdown()
  }
}
