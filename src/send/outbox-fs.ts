// The outbox subtree as a file system: paths relative to the outbox root ("/",
// "/holiday.jpg", "/a@b.com/report.pdf"), the writable half of FileSystemCore. Every
// byte goes to a staging file on disk as it is written (a file handle per open);
// entries are handed to the SendEngine once settled.
//
// Choices: symbolic links are stored (cp -a and rsync -a need them) and reported back,
// but never sent and never followed by us; chmod/chown are stored and reported, not
// applied; extended attributes are not implemented (storing system.posix_acl_* would
// break cp -a's modes: it sets them through the ACL instead of chmod).
import { constants as C, type Stats } from 'node:fs'
import { longPathFs as disk } from '../base/long-paths.js'
import type { FileHandle } from 'node:fs/promises'
import { FsError, type NodeAttr, type OpenFlags } from '../vfs/core.js'
import type { Clock } from '../base/clock.js'
import type { SendEngine } from './engine.js'
import type { Journal } from './journal.js'
import { isWithin, splitPath } from './names.js'
import type { SendSettings } from './options.js'
import type { SentLog } from './ports.js'
import type { WriterMarks } from './writers.js'
import type { OpenFile, OpenFiles } from './handles.js'
import { toFsError, type AttrStore, type DiskGuard } from './staging.js'
import type { WriteFailures } from './write-failures.js'
import type { SendStatus } from '../status/mount-status.js'
import { buildSendStatus } from './status.js'
import type { OutboxTree } from './tree.js'
import { shownPerm } from './sent-access.js'

const ONE_ID = 0xffffffff // chown's "leave unchanged" (-1 as unsigned)
/** A time the disk keeps in ns, as the seconds utimes takes. */
/**
 * The millisecond the mount shows of a time on disk: Node's Stats round to the nearest. A
 * time left out is set again to exactly that: handing back the disk's own nanoseconds lost
 * up to a microsecond each time (Node passes seconds as a double, libuv cuts them to whole
 * microseconds), and over a few changes of the other time it showed a millisecond less.
 */
const shownMs = (ns: bigint): number => Number((ns + 500_000n) / 1_000_000n)

export class OutboxFs {
  private closed = false

  /** Made by openOutbox (open-outbox.ts), which wires the parts and resumes what a run left. */
  constructor(
    private readonly tree: OutboxTree,
    private readonly engine: SendEngine,
    private readonly journal: Journal,
    private readonly attrs: AttrStore,
    private readonly disk: DiskGuard,
    private readonly marks: WriterMarks,
    private readonly failures: WriteFailures,
    private readonly handles: OpenFiles,
    private readonly clock: Clock,
    private readonly uid: number,
    private readonly gid: number,
    readonly sentLog: SentLog,
  ) {}

  // ---- status and control ------------------------------------------------------------------

  status(): SendStatus {
    return buildSendStatus(this.clock.now(), this.engine.entries.values(), this.engine.finished)
  }

  /** The sends as the status has them (StagingTree's, for the state attribute). */
  sends(): SendStatus['entries'] {
    return this.status().entries
  }

  retryFailed(): void {
    this.engine.retryFailed()
  }

  /** New send settings (a changed group list may turn folders into recipient folders). */
  async updateSettings(patch: Partial<SendSettings>): Promise<void> {
    Object.assign(this.engine.options, patch)
    if (patch.recipientGroups) {
      // Only entries the new list really changes are touched: touching the others would
      // abort their sends and, for one whose Complete was answered meanwhile, send it again.
      const shape = (k: string): string => JSON.stringify(this.tree.describe(k))
      const before = new Map([...this.engine.entries.keys()].map((k) => [k, shape(k)]))
      this.tree.setGroups(patch.recipientGroups)
      const now = await this.tree.scan()
      for (const k of new Set([...before.keys(), ...now])) if (before.get(k) !== shape(k)) this.engine.touch(k)
    }
    this.engine.retryFailed()
  }

  /** Resolves when nothing is being sent or written in the background (for tests and shutdown). */
  idle(): Promise<void> {
    return this.engine.idle()
  }

  /**
   * As if the process died now: no timer fires and nothing more is sent or written.
   * Resolves once writes already begun have ended (a real death cuts them; the files
   * they replace are replaced atomically either way).
   */
  async halt(): Promise<void> {
    this.closed = true
    this.engine.halt()
    this.marks.halt()
    // The OS closes a dead process's files (unsynced bytes stay in the page cache).
    const open = this.handles.drain()
    await Promise.all([this.journal.halt(), this.attrs.halt(), ...open.map((h) => h.handle.close().catch(() => undefined))])
  }

  /** A clean stop: sends pause (they resume on the next start), attributes are saved, files closed. */
  async shutdown(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.engine.stop()
    await this.attrs.flush().catch(() => undefined)
    for (const h of this.handles.drain()) await h.handle.close().catch(() => undefined)
  }

  // ---- helpers -------------------------------------------------------------------------------

  /**
   * Waits out an entry being removed after its send, then records the change before it
   * happens. The touch and the check run together: either the finishing send sees the
   * change and keeps the entry, or this sees the finishing and waits for it.
   */
  private async enter(p: string, content = true): Promise<void> {
    for (;;) {
      await this.engine.gate(p)
      this.touchPath(p, content)
      if (!this.engine.finishingAt(p)) return
    }
  }

  private real(p: string): string {
    return this.tree.real(p)
  }

  private live(): void {
    if (this.closed) throw new FsError('EIO', 'the outbox is shut down')
  }

  private touchPath(p: string, content = true): void {
    const key = this.tree.entryOf(p)
    if (key) this.engine.touch(key, content, p)
  }

  /** A change at `p` for every entry at, under or containing it. */
  private async touchEntriesAt(p: string): Promise<void> {
    for (const k of await this.tree.entriesAt(p)) this.engine.touch(k, true, isWithin(p, k) ? p : k)
  }

  private async run<T>(op: () => Promise<T>): Promise<T> {
    this.live()
    try {
      return await op()
    } catch (err) {
      throw toFsError(err)
    }
  }

  /**
   * A step that puts bytes into the file at `p` (null: a file already unlinked). When it
   * fails, the file is marked: what is staged may be a fraction of what was written, and
   * its entry is not sent until the file is written again from its start or removed.
   */
  private async writing<T>(p: string | null, step: () => Promise<T>): Promise<T> {
    try {
      return await step()
    } catch (err) {
      if (p !== null) {
        const e = toFsError(err)
        await this.failures.mark(p, `a write failed (${e.code}${e.message && e.message !== e.code ? `: ${e.message}` : ''})`).catch(() => undefined)
        this.touchPath(p)
      }
      throw err
    }
  }

  private attrOf(p: string, st: Stats): NodeAttr {
    const stored = this.attrs.get(p)
    const type = st.mode & C.S_IFMT
    const isDir = type === C.S_IFDIR
    return {
      mode: type | shownPerm(stored?.mode, isDir ? 'dir' : type === C.S_IFLNK ? 'link' : 'file'),
      size: isDir ? 4096 : st.size,
      mtime: st.mtime,
      atime: st.atime,
      ctime: st.ctime,
      // A folder's count is the disk's: 2 plus its subfolders, as tools that walk trees expect.
      nlink: isDir ? st.nlink : 1,
      uid: stored?.uid ?? this.uid,
      gid: stored?.gid ?? this.gid,
    }
  }

  // ---- reading ---------------------------------------------------------------------------------

  getattr(p: string): Promise<NodeAttr> {
    return this.run(async () => this.attrOf(p, await disk.lstat(this.real(p))))
  }

  readdir(p: string): Promise<string[]> {
    return this.run(() => disk.readdir(this.real(p)))
  }

  read(_p: string, fh: number, position: number, length: number): Promise<Buffer> {
    return this.run(async () => {
      const buf = Buffer.alloc(length)
      const { bytesRead } = await this.handles.get(fh).handle.read(buf, 0, length, position)
      return buf.subarray(0, bytesRead)
    })
  }

  readlink(p: string): Promise<string> {
    return this.run(() => disk.readlink(this.real(p)))
  }

  // ---- opening and closing ----------------------------------------------------------------------

  create(p: string, mode: number): Promise<number> {
    return this.run(async () => {
      if (splitPath(p).length === 0) throw new FsError('EISDIR')
      await this.enter(p)
      const handle = await disk.open(this.real(p), C.O_CREAT | C.O_RDWR | C.O_TRUNC | C.O_NOFOLLOW, 0o600)
      await this.failures.clear(p)
      this.attrs.set(p, { mode: mode & 0o7777 })
      await this.tree.refreshKind(p)
      return this.register({ path: p, handle, wrote: true, marked: true })
    })
  }

  open(p: string, flags: OpenFlags): Promise<number> {
    return this.run(async () => {
      const writer = (flags & 3) !== C.O_RDONLY
      let handle: FileHandle
      for (;;) {
        await this.engine.gate(p)
        const undo = writer ? this.handles.announceOpening(p) : () => undefined
        if (this.engine.finishingAt(p)) {
          undo()
          continue
        }
        try {
          // Always read-write and never O_APPEND: the kernel gives every write its offset.
          handle = await disk.open(this.real(p), C.O_RDWR | C.O_NOFOLLOW)
        } finally {
          undo()
        }
        break
      }
      const f: OpenFile = { path: p, handle, wrote: false, marked: writer }
      const fh = await this.register(f)
      if (flags & C.O_TRUNC) {
        this.touchPath(p)
        f.wrote = true
        await handle.truncate(0)
        await this.failures.clear(p)
      }
      return fh
    })
  }

  private async register(f: OpenFile): Promise<number> {
    const fh = await this.handles.add(f)
    if (f.path) {
      const key = this.tree.entryOf(f.path)
      if (key) this.engine.recheck(key)
    }
    return fh
  }

  flush(_p: string, fh: number): Promise<void> {
    // Written bytes are already in the OS; nothing is held in memory to flush.
    return this.run(async () => void this.handles.get(fh))
  }

  fsync(_p: string, fh: number, datasync: boolean): Promise<void> {
    return this.run(async () => {
      const f = this.handles.get(fh)
      await this.writing(f.path, () => (datasync ? f.handle.datasync() : f.handle.sync()))
    })
  }

  release(_p: string, fh: number): Promise<void> {
    return this.run(async () => {
      let f: OpenFile
      try {
        f = this.handles.get(fh)
      } catch {
        return
      }
      try {
        await this.handles.released(fh)
        // Release is asynchronous to the caller: a sync here costs nobody a wait, and
        // makes the bytes safe from power loss before the entry can settle.
        if (f.wrote) await this.writing(f.path, () => f.handle.sync()).catch(() => undefined)
      } finally {
        await this.handles.remove(fh)
        await f.handle.close()
        if (f.path) {
          this.touchPath(f.path, false)
          if (f.wrote) this.engine.ready(f.path)
        }
      }
    })
  }

  // ---- writing -----------------------------------------------------------------------------------

  write(_p: string, fh: number, data: Buffer, position: number): Promise<number> {
    return this.run(async () => {
      const f = this.handles.get(fh)
      if (f.path) await this.enter(f.path)
      f.wrote = true
      return this.writing(f.path, async () => {
        await this.disk.reserve(data.length)
        let done = 0
        while (done < data.length) {
          const { bytesWritten } = await f.handle.write(data, done, data.length - done, position + done)
          if (bytesWritten === 0) throw new FsError('EIO', 'short write')
          done += bytesWritten
        }
        return done
      })
    })
  }

  truncate(p: string, size: number): Promise<void> {
    return this.run(async () => {
      await this.enter(p)
      await this.writing(p, () => disk.truncate(this.real(p), size))
      if (size === 0) await this.failures.clear(p)
    })
  }

  ftruncate(_p: string, fh: number, size: number): Promise<void> {
    return this.run(async () => {
      const f = this.handles.get(fh)
      if (f.path) await this.enter(f.path)
      f.wrote = true
      await this.writing(f.path, () => f.handle.truncate(size))
      if (size === 0 && f.path) await this.failures.clear(f.path)
    })
  }

  // ---- names -----------------------------------------------------------------------------------------

  /** enter() for every entry at, under or containing each path (a recipient folder holds many). */
  private async enterAll(...paths: string[]): Promise<void> {
    for (;;) {
      for (const p of paths) await this.engine.gate(p)
      for (const p of paths) await this.touchEntriesAt(p)
      if (!paths.some((p) => this.engine.finishingAt(p))) return
    }
  }

  unlink(p: string): Promise<void> {
    return this.run(async () => {
      await this.enter(p)
      await disk.unlink(this.real(p))
      await this.failures.removed(p)
      this.attrs.drop(p)
      await this.tree.refreshKind(p)
      await this.handles.unlinked(p)
    })
  }

  mkdir(p: string, mode: number): Promise<void> {
    return this.run(async () => {
      await this.enter(p)
      await disk.mkdir(this.real(p), 0o700)
      this.attrs.set(p, { mode: mode & 0o7777 })
      await this.tree.refreshKind(p)
    })
  }

  rmdir(p: string): Promise<void> {
    return this.run(async () => {
      if (splitPath(p).length === 0) throw new FsError('EBUSY')
      await this.enterAll(p)
      await disk.rmdir(this.real(p))
      await this.failures.removed(p)
      this.attrs.drop(p)
      await this.tree.refreshKind(p)
    })
  }

  rename(from: string, to: string): Promise<void> {
    return this.run(async () => {
      if (splitPath(from).length === 0 || splitPath(to).length === 0) throw new FsError('EBUSY')
      if (isWithin(to, from) && to !== from) throw new FsError('EINVAL')
      // Abort sends of everything the rename touches before it happens, then again for
      // what the new names make (a folder may turn into a recipient folder or back).
      await this.enterAll(from, to)
      await disk.rename(this.real(from), this.real(to))
      await this.failures.renamed(from, to)
      await this.tree.refreshKind(from)
      await this.tree.refreshKind(to)
      this.attrs.move(from, to)
      await this.handles.renamed(from, to)
      await this.touchEntriesAt(to)
      this.engine.ready(to)
    })
  }

  symlink(target: string, p: string): Promise<void> {
    return this.run(async () => {
      await this.enter(p)
      await disk.symlink(target, this.real(p))
      await this.tree.refreshKind(p)
    })
  }

  // ---- metadata: accepted, stored, reported back -------------------------------------------------------

  chmod(p: string, mode: number): Promise<void> {
    return this.run(async () => {
      await this.changeCtime(p)
      this.attrs.set(p, { mode: mode & 0o7777 })
      this.touchPath(p, false)
    })
  }

  chown(p: string, uid: number, gid: number): Promise<void> {
    return this.run(async () => {
      await this.changeCtime(p)
      const patch: { uid?: number; gid?: number } = {}
      if (uid !== -1 && uid !== ONE_ID) patch.uid = uid
      if (gid !== -1 && gid !== ONE_ID) patch.gid = gid
      this.attrs.set(p, patch)
      this.touchPath(p, false)
    })
  }

  /**
   * Modes and owners are kept beside the staged file (it stays private on disk), so the disk
   * would not see their change: a chown of the file to its own owner changes its ctime, as
   * chmod and chown do on a local disk, and nothing else. Throws ENOENT for a missing file.
   */
  private async changeCtime(p: string): Promise<void> {
    const real = this.real(p)
    const st = await disk.lstat(real)
    await disk.lchown(real, st.uid, st.gid)
  }

  utimens(p: string, atime: Date | null, mtime: Date | null): Promise<void> {
    return this.run(async () => {
      const real = this.real(p)
      // A time left out keeps the millisecond the mount shows of it.
      const kept = atime && mtime ? null : await disk.lstat(real, { bigint: true })
      const a = atime?.getTime() ?? shownMs(kept!.atimeNs)
      const m = mtime?.getTime() ?? shownMs(kept!.mtimeNs)
      // lutimes: never follow a stored link out of the staging folder.
      await disk.lutimes(real, a / 1000, m / 1000)
      this.touchPath(p, false)
    })
  }
}
