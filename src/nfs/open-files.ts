// NFSv3 has no open or close: the server opens a file at its first READ and keeps it open
// while reads keep coming, so that the read path sees one handle read in sequence (its
// readahead and verified fetches work as on the FUSE mount), and closes it once idle.
import type { Logger } from '../base/log.js'
import { bytesLength, giveBack } from '../read/bytes.js'
import type { FileSystemCore } from '../vfs/core.js'
import { HeldHandles } from './held-handles.js'

/** ms a file stays open after its last READ. */
export const READ_IDLE_MS = 10_000

export class OpenFiles {
  private readonly handles: HeldHandles<null>

  constructor(
    private readonly core: FileSystemCore,
    log: Logger,
    idleMs = READ_IDLE_MS,
  ) {
    this.handles = new HeldHandles<null>({
      open: (path) => core.open(path, 0),
      fresh: () => null,
      mayClose: () => true,
      close: (path, fh) => core.release(path, fh),
      closeFailed: (path, err) => log.debug(`releasing ${path}: ${err.message}`),
      idleMs,
    })
  }

  /** Runs `use` with a handle of `path` open for reading. */
  reading<T>(path: string, use: (fh: number) => T | Promise<T>): Promise<T> {
    return this.handles.using(path, (fh) => use(fh))
  }

  /**
   * The size of a live file (`.status`: its text is made when it is opened, and its size shows
   * as 0): NFS clients read no further than the size they were given, so it is the length of
   * the text this server's handle holds. Null for any other file.
   */
  async liveSize(path: string, maxBytes: number): Promise<number | null> {
    if (!this.core.isLive) return null
    return this.reading(path, async (fh) => {
      if (!this.core.isLive?.(fh)) return null
      const bytes = await this.core.read(path, fh, 0, maxBytes)
      const n = bytesLength(bytes)
      giveBack(bytes)
      return n
    })
  }

  /** Every file let go; no file is opened from now on. */
  closeAll(): Promise<void> {
    return this.handles.closeAll()
  }
}
