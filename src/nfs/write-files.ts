// Files written through NFS. NFSv3 has no close, and the outbox sends a file once it is
// closed and then quiet for settleMs: here a file is held open from its first WRITE while any
// of its writes is not committed, and closed once all are (a COMMIT, or writes sent
// FILE_SYNC) and no write came for a moment. A file whose writes were never committed is never
// closed: at a stop it stays marked as being written, and the outbox holds it, unsent, until it
// is written again (the client sends the uncommitted writes again, seeing a new verifier).
import { randomBytes } from 'node:crypto'
import type { Logger } from '../base/log.js'
import { FsError, type FileSystemCore } from '../vfs/core.js'

/** ms a file whose writes are all committed stays open for more writes before it is closed. */
export const COMMITTED_IDLE_MS = 1000

export const STABLE = { UNSTABLE: 0, DATA_SYNC: 1, FILE_SYNC: 2 } as const
const O_WRONLY = 1

interface Held {
  fh: Promise<number>
  /** Writes and commits running on it. */
  using: number
  /** A write was acknowledged UNSTABLE and no COMMIT followed. */
  uncommitted: boolean
  timer: NodeJS.Timeout | null
}

export class WriteFiles {
  /** Changes at every start, so that a client sends again what it wrote UNSTABLE and did not see committed. */
  readonly verifier = randomBytes(8)
  /** The verifier of each EXCLUSIVE CREATE, so that its retransmission finds the file it made. */
  readonly createVerifiers = new Map<string, string>()
  private readonly held = new Map<string, Held>()
  private closed = false

  constructor(
    private readonly core: FileSystemCore,
    private readonly log: Logger,
    private readonly idleMs = COMMITTED_IDLE_MS,
  ) {}

  /** Holds `fh`, just created at `path` by CREATE, as if written and committed (an empty file is closed too). */
  adopt(path: string, fh: number): void {
    const h: Held = { fh: Promise.resolve(fh), using: 0, uncommitted: false, timer: null }
    const before = this.held.get(path)
    this.held.set(path, h)
    if (before) void this.release(path, before, true)
    this.settle(path, h)
  }

  private async using<T>(path: string, work: (fh: number, h: Held) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error('the NFS server is stopping')
    let h = this.held.get(path)
    if (!h) {
      const opened: Held = { fh: this.open(path), using: 0, uncommitted: false, timer: null }
      h = opened
      this.held.set(path, h)
      opened.fh.catch(() => {
        if (this.held.get(path) === opened) this.held.delete(path)
      })
    }
    if (h.timer) clearTimeout(h.timer)
    h.timer = null
    h.using++
    try {
      return await work(await h.fh, h)
    } finally {
      h.using--
      this.settle(path, h)
    }
  }

  private open(path: string): Promise<number> {
    const write = this.core.write
    if (!write) return Promise.reject(new FsError('EROFS'))
    return this.core.open(path, O_WRONLY)
  }

  /** Writes `data` at `offset`; what the client is told was made stable. */
  write(path: string, data: Buffer, offset: number, stable: number): Promise<{ count: number; committed: number }> {
    return this.using(path, async (fh, h) => {
      const count = await this.core.write!(path, fh, data, offset)
      if (stable === STABLE.UNSTABLE) {
        h.uncommitted = true
        return { count, committed: STABLE.UNSTABLE }
      }
      await this.core.fsync?.(path, fh, stable === STABLE.DATA_SYNC)
      return { count, committed: STABLE.FILE_SYNC }
    })
  }

  /** Makes every write to `path` stable; a file not held has nothing uncommitted. */
  async commit(path: string): Promise<void> {
    if (!this.held.has(path)) return
    await this.using(path, async (fh, h) => {
      await this.core.fsync?.(path, fh, false)
      h.uncommitted = false
    })
  }

  /** Once nothing runs on it and all its writes are committed, it is closed after idleMs. */
  private settle(path: string, h: Held): void {
    if (h.using > 0 || h.uncommitted || this.held.get(path) !== h || this.closed) return
    if (h.timer) clearTimeout(h.timer)
    h.timer = setTimeout(() => void this.release(path, h), this.idleMs)
    h.timer.unref()
  }

  private async release(path: string, h: Held, replaced = false): Promise<void> {
    if (!replaced && (this.held.get(path) !== h || h.using > 0 || h.uncommitted)) return
    if (!replaced) this.held.delete(path)
    try {
      await this.core.release(path, await h.fh)
    } catch (err) {
      this.log.debug(`closing ${path} after its writes: ${(err as Error).message}`)
    }
  }

  /** At a stop: committed files are closed (and sent once settled); uncommitted ones are left open, so never sent half-written. */
  async closeAll(): Promise<void> {
    this.closed = true
    const all = [...this.held.entries()]
    this.held.clear()
    await Promise.all(all.map(async ([path, h]) => {
      if (h.timer) clearTimeout(h.timer)
      if (h.uncommitted) {
        this.log.warn(`${path}: written through NFS and never committed; held unsent until it is written again`)
        return
      }
      await this.release(path, h, true)
    }))
  }
}
