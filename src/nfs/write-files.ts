// Files written through NFS. NFSv3 has no close, and the outbox sends a file once it is
// closed and then quiet for settleMs: here a file is held open from its first WRITE while any
// of its writes is not committed, and closed once all are (a COMMIT, or writes sent
// FILE_SYNC) and no write came for a moment. A file whose writes were never committed is never
// closed: at a stop it stays marked as being written, and the outbox holds it, unsent, until it
// is written again (the client sends the uncommitted writes again, seeing a new verifier).
import { randomBytes } from 'node:crypto'
import type { Logger } from '../base/log.js'
import { FsError, type FileSystemCore } from '../vfs/core.js'
import { HeldHandles } from './held-handles.js'

/** ms a file whose writes are all committed stays open for more writes before it is closed. */
export const COMMITTED_IDLE_MS = 1000

export const STABLE = { UNSTABLE: 0, DATA_SYNC: 1, FILE_SYNC: 2 } as const
const O_WRONLY = 1

/** What a held file knows: a write was acknowledged UNSTABLE and no COMMIT followed. */
interface Writing {
  uncommitted: boolean
}

export class WriteFiles {
  /** Changes at every start, so that a client sends again what it wrote UNSTABLE and did not see committed. */
  readonly verifier = randomBytes(8)
  /** The verifier of each EXCLUSIVE CREATE, so that its retransmission finds the file it made. */
  readonly createVerifiers = new Map<string, string>()
  private readonly handles: HeldHandles<Writing>

  constructor(
    private readonly core: FileSystemCore,
    private readonly log: Logger,
    idleMs = COMMITTED_IDLE_MS,
  ) {
    this.handles = new HeldHandles<Writing>({
      open: (path) => (core.write ? core.open(path, O_WRONLY) : Promise.reject(new FsError('EROFS'))),
      fresh: () => ({ uncommitted: false }),
      mayClose: (w) => !w.uncommitted,
      close: (path, fh) => core.release(path, fh),
      closeFailed: (path, err) => log.debug(`closing ${path} after its writes: ${err.message}`),
      idleMs,
    })
  }

  /** Holds `fh`, just created at `path` by CREATE, as if written and committed (an empty file is closed too). */
  adopt(path: string, fh: number): void {
    this.handles.adopt(path, fh, { uncommitted: false })
  }

  /** Writes `data` at `offset`; what the client is told was made stable. */
  write(path: string, data: Buffer, offset: number, stable: number): Promise<{ count: number; committed: number }> {
    return this.handles.using(path, async (fh, h) => {
      const count = await this.core.write!(path, fh, data, offset)
      if (stable === STABLE.UNSTABLE) {
        h.state.uncommitted = true
        return { count, committed: STABLE.UNSTABLE }
      }
      await this.core.fsync?.(path, fh, stable === STABLE.DATA_SYNC)
      return { count, committed: STABLE.FILE_SYNC }
    })
  }

  /** Makes every write to `path` stable; a file not held has nothing uncommitted. */
  async commit(path: string): Promise<void> {
    if (!this.handles.has(path)) return
    await this.handles.using(path, async (fh, h) => {
      await this.core.fsync?.(path, fh, false)
      h.state.uncommitted = false
    })
  }

  /** At a stop: committed files are closed (and sent once settled); uncommitted ones are left open, so never sent half-written. */
  closeAll(): Promise<void> {
    return this.handles.closeAll((path, w) => {
      if (w.uncommitted) this.log.warn(`${path}: written through NFS and never committed; held unsent until it is written again`)
      return w.uncommitted
    })
  }
}
