// The thin layer between fuse-native callbacks and the FileSystemCore. Its one job is
// the callback contract of fuse-native (docs/design.md, FUSE): every
// callback is answered exactly once, always with a number (0, -errno, or a byte count);
// anything else (null, undefined, an Error, a positive errno) hangs the caller forever
// or returns garbage bytes. Each op also has its own deadline, shorter than
// fuse-native's timer, so the adapter answers first and with its own errno.
import { constants } from 'node:fs'
import type Fuse from 'fuse-native'
import { bytesLength, copyBytes, giveBack, isBytes } from '../read/bytes.js'
import type { FileSystemCore, NodeAttr, StatFs } from '../vfs/core.js'
import { errorForLog, ERRNO, errnoOf } from '../vfs/errno.js'
import { silentLogger, type Logger } from '../base/log.js'
import type { ReadWindows } from './read-windows.js'

type FuseOps = Fuse.FuseOps
type FuseTimeouts = Fuse.FuseTimeouts

export interface AdapterTimeouts {
  /** ms: deadline of read. */
  readTimeoutMs: number
  /** ms: deadline of write, create, mknod, flush, fsync, release, truncate, ftruncate. */
  writeTimeoutMs: number
  /** ms: deadline of every other op. */
  metadataTimeoutMs: number
}

/** ms that fuse-native's own timer runs longer than the adapter's deadline (it must never fire first). */
export const FUSE_TIMER_MARGIN_MS = 2000

type OpClass = 'read' | 'write' | 'metadata'
const WRITE_OPS = new Set(['write', 'create', 'mknod', 'flush', 'fsync', 'release', 'truncate', 'ftruncate'])
const classOf = (op: string): OpClass => (op === 'read' ? 'read' : WRITE_OPS.has(op) ? 'write' : 'metadata')

/** fuse-native's callback: the first argument is the result code (or the byte count). */
type Answer = (code: number, ...data: unknown[]) => void

/** What an op handler resolves to: the arguments of the callback, the first a number. */
type Reply = [number, ...unknown[]]

/** Passed to handlers so that late work (after a deadline answered) touches no detached buffer. */
interface OpState {
  answered: boolean
}

const MAX_FH = 0xffff_ffff

/**
 * open's optional third answer (our fuse-native patch): the handle is direct_io, so the
 * kernel passes every read on, past the size it cached, and keeps no pages of it.
 */
const OPEN_DIRECT_IO = 1

export class FuseAdapter {
  readonly ops: FuseOps
  private accepting = true
  /** fh → path it was opened at (for the log); counts the handles not yet released. */
  private readonly handles = new Map<number, string>()
  private idleWaiters: Array<() => void> = []
  /** Where answered reads lend what follows them (read-windows.ts); none until the mount gives it. */
  private windows: ReadWindows | null = null

  constructor(
    private readonly core: FileSystemCore,
    private readonly timeouts: AdapterTimeouts,
    private readonly log: Logger = silentLogger,
  ) {
    this.ops = this.buildOps()
  }

  /**
   * fuse-native's per-op timers: each a margin above the adapter's own deadline. None for
   * read, which answers either at once (bytes at hand) or under run()'s own deadline, and
   * never throws: a timer set and cleared for each of libfuse 2's 8,192 reads per GiB
   * was ~3% of a re-read's CPU.
   */
  fuseTimeouts(): FuseTimeouts {
    const t: FuseTimeouts = { default: this.deadlineOf('metadata') + FUSE_TIMER_MARGIN_MS }
    for (const op of Object.keys(this.ops)) t[op] = op === 'read' ? false : this.deadlineOf(classOf(op)) + FUSE_TIMER_MARGIN_MS
    return t
  }

  /** From now on a read answered in full lends what follows it to libfuse's threads (read-windows.ts). */
  useWindows(windows: ReadWindows): void {
    this.windows = windows
  }

  /** A read of fh of `length` bytes was answered in full: what follows fh's furthest read goes to libfuse's threads, when at hand. */
  private lendAhead(fh: number, length: number): void {
    const { windows, core } = this
    if (!windows || !core.lendAhead) return
    try {
      const ahead = core.lendAhead(fh, length)
      if (ahead) windows.open(fh, ahead)
    } catch (err) {
      // The read was answered already; the next one simply reaches JS.
      this.log.warn(`lending ahead of a read: ${errorForLog(err)}`)
    }
  }

  get openHandles(): number {
    return this.handles.size
  }

  /** New open/create calls answer ESHUTDOWN from now on; open handles keep working. */
  stopAccepting(): void {
    this.accepting = false
  }

  /** Resolves true once no handle is open, or false after timeoutMs. */
  whenIdle(timeoutMs: number): Promise<boolean> {
    if (this.handles.size === 0) return Promise.resolve(true)
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.idleWaiters = this.idleWaiters.filter((w) => w !== done)
        resolve(false)
      }, timeoutMs)
      const done = () => {
        clearTimeout(timer)
        resolve(true)
      }
      this.idleWaiters.push(done)
    })
  }

  private deadlineOf(c: OpClass): number {
    return c === 'read' ? this.timeouts.readTimeoutMs : c === 'write' ? this.timeouts.writeTimeoutMs : this.timeouts.metadataTimeoutMs
  }

  /**
   * Runs one op: answers cb exactly once with the handler's reply, with -errno when it
   * throws (synchronously or not) or returns something malformed, or with -EIO when the
   * deadline passes first. A reply that arrives after the deadline is dropped.
   */
  private run(op: string, path: string, cb: Answer, handler: (st: OpState) => Promise<Reply>): void {
    const st: OpState = { answered: false }
    const answer = (reply: Reply) => {
      if (st.answered) return
      st.answered = true
      clearTimeout(timer)
      cb(...reply)
    }
    const deadline = this.deadlineOf(classOf(op))
    const timer = setTimeout(() => {
      this.log.debug(`${op} ${path}: no answer within ${deadline} ms → -EIO`)
      answer([-ERRNO.EIO])
    }, deadline)
    let pending: Promise<Reply>
    try {
      pending = handler(st)
    } catch (err) {
      pending = Promise.reject(err)
    }
    pending.then(
      (reply) => {
        if (typeof reply[0] !== 'number' || !Number.isInteger(reply[0])) {
          this.log.debug(`${op} ${path}: handler gave a non-number result → -EIO`)
          return answer([-ERRNO.EIO])
        }
        answer(reply)
      },
      (err: unknown) => {
        const errno = errnoOf(err)
        if (!st.answered) this.log.debug(`${op} ${path}: ${errorForLog(err)} → -${errno}`)
        answer([-errno])
      },
    )
  }

  private opened(op: string, path: string, st: OpState, fh: unknown): Reply {
    if (typeof fh !== 'number' || !Number.isInteger(fh) || fh < 0 || fh > MAX_FH) {
      this.log.debug(`${op} ${path}: core returned an invalid handle`)
      return [-ERRNO.EIO]
    }
    if (st.answered) {
      // The caller already got EIO: nobody will release this handle, so do it now.
      this.core.release(path, fh).catch(() => {})
      return [-ERRNO.EIO]
    }
    this.handles.set(fh, path)
    return op === 'open' && this.core.isLive?.(fh) === true ? [0, fh, OPEN_DIRECT_IO] : [0, fh]
  }

  private released(fh: number): void {
    if (!this.handles.delete(fh) || this.handles.size > 0) return
    const waiters = this.idleWaiters
    this.idleWaiters = []
    for (const w of waiters) w()
  }

  private buildOps(): FuseOps {
    const core = this.core
    const ops: FuseOps = {}
    const nop = (): Reply => [0]

    ops.getattr = (path: string, cb: Answer) => this.run('getattr', path, cb, async () => [0, statOf(await core.getattr(path))])
    ops.readdir = (path: string, cb: Answer) =>
      this.run('readdir', path, cb, async () => {
        const names = await core.readdir(path)
        if (!Array.isArray(names) || names.some((n) => typeof n !== 'string')) return [-ERRNO.EIO]
        return [0, names]
      })
    ops.open = (path: string, flags: number, cb: Answer) =>
      this.run('open', path, cb, async (st) => {
        if (!this.accepting) return [-ERRNO.ESHUTDOWN]
        return this.opened('open', path, st, await core.open(path, flags))
      })
    ops.read = (path: string, fh: number, buf: Buffer, len: number, pos: number, cb: Answer) => {
      // A read that reached JS fell outside the windows of fh: those behind it are done with.
      this.windows?.passed(fh, pos)
      let data: unknown
      try {
        // fuse-native hands (buf, length, position); the core, like the read path below it, takes (position, length).
        data = core.read(path, fh, pos, len)
      } catch (err) {
        data = Promise.reject(err)
      }
      // Bytes at hand are answered at once: nothing is waited for, so no deadline is set.
      if (isBytes(data)) {
        const n = copyOut(data, buf, len)
        cb(n)
        // fuse-native lets the FUSE thread go on the next tick: the window is there before its next read.
        if (n === len) this.lendAhead(fh, len)
        return
      }
      this.run('read', path, cb, async (st) => {
        const bytes = await data
        // buf is fuse-native's view of libfuse memory: detached once answered.
        if (st.answered) {
          if (isBytes(bytes)) giveBack(bytes)
          return [-ERRNO.EIO]
        }
        const n = copyOut(bytes, buf, len)
        if (n === len) this.lendAhead(fh, len)
        return [n]
      })
    }
    ops.release = (path: string, fh: number, cb: Answer) =>
      this.run('release', path, cb, async () => {
        this.windows?.close(fh)
        try {
          await core.release(path, fh)
        } finally {
          this.released(fh)
        }
        return [0]
      })
    ops.statfs = (path: string, cb: Answer) => this.run('statfs', path, cb, async () => [0, statfsOf(await core.statfs(path))])

    // xattrs: on Linux only user.* reach getxattr (our fuse-native patch answers every
    // other namespace "not supported", as the core does).
    ops.getxattr = (path: string, name: string, buf: Buffer, cb: Answer) =>
      this.run('getxattr', path, cb, async (st) => {
        const value = await core.getxattr(path, name)
        if (!Buffer.isBuffer(value)) return [-ERRNO.ENODATA]
        if (st.answered) return [-ERRNO.EIO]
        if (buf.length === 0) return [value.length] // the caller asks for the size first
        if (value.length > buf.length) return [-ERRNO.ERANGE]
        value.copy(buf)
        return [value.length]
      })
    ops.listxattr = (path: string, buf: Buffer, cb: Answer) =>
      this.run('listxattr', path, cb, async (st) => {
        const names = await core.listxattr(path)
        const list = Buffer.from(names.map((n) => n + '\0').join(''))
        if (st.answered) return [-ERRNO.EIO]
        if (buf.length === 0) return [list.length]
        if (list.length > buf.length) return [-ERRNO.ERANGE]
        list.copy(buf)
        return [list.length]
      })
    const setxattr = core.setxattr?.bind(core)
    if (setxattr) {
      ops.setxattr = (path: string, name: string, value: Buffer, _position: number, _flags: number, cb: Answer) => {
        const copy = Buffer.from(value) // detached once answered
        this.run('setxattr', path, cb, async () => {
          if (name.startsWith('system.')) return [-ERRNO.EOPNOTSUPP]
          await setxattr(path, name, copy)
          return [0]
        })
      }
    }
    const removexattr = core.removexattr?.bind(core)
    if (removexattr) {
      ops.removexattr = (path: string, name: string, cb: Answer) =>
        this.run('removexattr', path, cb, async () => {
          if (name.startsWith('system.')) return [-ERRNO.EOPNOTSUPP]
          await removexattr(path, name)
          return [0]
        })
    }

    // Writable ops: registered only when the core has them (otherwise libfuse answers ENOSYS).
    const create = core.create?.bind(core)
    if (create) {
      ops.create = (path: string, mode: number, cb: Answer) =>
        this.run('create', path, cb, async (st) => {
          if (!this.accepting) return [-ERRNO.ESHUTDOWN]
          return this.opened('create', path, st, await create(path, mode))
        })
    }
    const write = core.write?.bind(core)
    if (write) {
      ops.write = (path: string, fh: number, buf: Buffer, len: number, pos: number, cb: Answer) => {
        // Copy before anything else: buf is detached once answered, and a late
        // write (after a deadline) must still see its bytes.
        const data = Buffer.from(buf.subarray(0, len))
        this.run('write', path, cb, async () => {
          const n = await write(path, fh, data, pos)
          return typeof n === 'number' && n >= 0 && n <= len ? [n] : [-ERRNO.EIO]
        })
      }
    }
    const flush = core.flush?.bind(core)
    if (flush) ops.flush = (path: string, fh: number, cb: Answer) => this.run('flush', path, cb, async () => (await flush(path, fh), nop()))
    const fsync = core.fsync?.bind(core)
    if (fsync) {
      // fuse-native passes (path, datasync, fh), not the README's order.
      ops.fsync = (path: string, datasync: number, fh: number, cb: Answer) =>
        this.run('fsync', path, cb, async () => (await fsync(path, fh, !!datasync), nop()))
    }
    const truncate = core.truncate?.bind(core)
    if (truncate) ops.truncate = (path: string, size: number, cb: Answer) => this.run('truncate', path, cb, async () => (await truncate(path, size), nop()))
    const ftruncate = core.ftruncate?.bind(core)
    if (ftruncate) {
      ops.ftruncate = (path: string, fh: number, size: number, cb: Answer) =>
        this.run('ftruncate', path, cb, async () => (await ftruncate(path, fh, size), nop()))
    }
    const unlink = core.unlink?.bind(core)
    if (unlink) ops.unlink = (path: string, cb: Answer) => this.run('unlink', path, cb, async () => (await unlink(path), nop()))
    const rename = core.rename?.bind(core)
    if (rename) ops.rename = (from: string, to: string, cb: Answer) => this.run('rename', from, cb, async () => (await rename(from, to), nop()))
    const mkdir = core.mkdir?.bind(core)
    if (mkdir) ops.mkdir = (path: string, mode: number, cb: Answer) => this.run('mkdir', path, cb, async () => (await mkdir(path, mode), nop()))
    const rmdir = core.rmdir?.bind(core)
    if (rmdir) ops.rmdir = (path: string, cb: Answer) => this.run('rmdir', path, cb, async () => (await rmdir(path), nop()))
    const chmod = core.chmod?.bind(core)
    if (chmod) ops.chmod = (path: string, mode: number, cb: Answer) => this.run('chmod', path, cb, async () => (await chmod(path, mode), nop()))
    const chown = core.chown?.bind(core)
    if (chown) {
      ops.chown = (path: string, uid: number, gid: number, cb: Answer) =>
        this.run('chown', path, cb, async () => (await chown(path, uid, gid), nop()))
    }
    const utimens = core.utimens?.bind(core)
    if (utimens) {
      // Times arrive in ms; mtime is real only with the patched addon (patches/fuse-native+2.2.6.patch),
      // which also gives a time to leave as it is (UTIME_OMIT) as a number past 2^53.
      const timeOf = (ms: number): Date | null => (Number.isSafeInteger(ms) ? new Date(ms) : null)
      ops.utimens = (path: string, atime: number, mtime: number, cb: Answer) =>
        this.run('utimens', path, cb, async () => (await utimens(path, timeOf(atime), timeOf(mtime)), nop()))
    }
    // open(O_CREAT) comes through create; mknod(2) of a regular file (Python's os.mknod) is the
    // same as a create closed at once. FIFOs, sockets and devices have no place in a transfer,
    // and POSIX answers EPERM for a type a file system does not make (without the op, libfuse
    // answered ENOSYS, "Function not implemented").
    ops.mknod = (path: string, mode: number, _dev: number, cb: Answer) =>
      this.run('mknod', path, cb, async () => {
        if ((mode & constants.S_IFMT) !== constants.S_IFREG || !create) return [-ERRNO.EPERM]
        if (!this.accepting) return [-ERRNO.ESHUTDOWN]
        await core.release(path, await create(path, mode))
        return nop()
      })
    const symlink = core.symlink?.bind(core)
    if (symlink) {
      ops.symlink = (target: string, path: string, cb: Answer) => this.run('symlink', path, cb, async () => (await symlink(target, path), nop()))
    }
    const readlink = core.readlink?.bind(core)
    if (readlink) {
      ops.readlink = (path: string, cb: Answer) =>
        this.run('readlink', path, cb, async () => {
          const target = await readlink(path)
          return typeof target === 'string' ? [0, target] : [-ERRNO.EIO]
        })
    }
    return ops
  }
}

/**
 * A read's answer: the bytes copied into fuse-native's buffer and their count, or -EIO for
 * anything but bytes that fit. Bytes lent by the read path go back once copied.
 */
function copyOut(data: unknown, buf: Buffer, len: number): number {
  if (!isBytes(data) || bytesLength(data) > len) return -ERRNO.EIO
  try {
    return copyBytes(data, buf)
  } catch {
    // A read is answered whatever happens here (it has no fuse-native timer behind it).
    return -ERRNO.EIO
  } finally {
    giveBack(data)
  }
}

/** fuse-native's stat fields; times as Dates, everything else numbers. */
function statOf(a: NodeAttr): Record<string, number | Date> {
  if (!a || typeof a.mode !== 'number') throw new TypeError('getattr: core returned no attributes')
  return {
    mode: a.mode,
    uid: a.uid,
    gid: a.gid,
    size: a.size,
    nlink: a.nlink,
    mtime: a.mtime,
    atime: a.atime,
    ctime: a.ctime,
    blksize: 4096,
    blocks: Math.ceil(a.size / 512),
  }
}

function statfsOf(s: StatFs): StatFs {
  if (!s || typeof s.bsize !== 'number') throw new TypeError('statfs: core returned nothing')
  return s
}
