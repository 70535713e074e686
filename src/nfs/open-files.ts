// NFSv3 has no open or close: the server opens a file at its first READ and keeps it open
// while reads keep coming, so that the read path sees one handle read in sequence (its
// readahead and verified fetches work as on the FUSE mount), and closes it once idle.
import type { Logger } from '../base/log.js'
import { bytesLength, giveBack } from '../read/bytes.js'
import type { FileSystemCore } from '../vfs/core.js'

/** ms a file stays open after its last READ. */
export const READ_IDLE_MS = 10_000

interface Held {
  fh: Promise<number>
  /** Reads running on it: it is not closed under them. */
  using: number
  timer: NodeJS.Timeout | null
}

export class OpenFiles {
  private readonly held = new Map<string, Held>()
  private closed = false

  constructor(
    private readonly core: FileSystemCore,
    private readonly log: Logger,
    private readonly idleMs = READ_IDLE_MS,
  ) {}

  /** Runs `use` with a handle of `path` open for reading. */
  async reading<T>(path: string, use: (fh: number) => T | Promise<T>): Promise<T> {
    if (this.closed) throw new Error('the NFS server is stopping')
    let h = this.held.get(path)
    if (!h) {
      h = { fh: this.core.open(path, 0), using: 0, timer: null }
      this.held.set(path, h)
      const opened = h
      // A failed open is not kept: the next READ tries again.
      h.fh.catch(() => {
        if (this.held.get(path) === opened) this.held.delete(path)
      })
    }
    if (h.timer) clearTimeout(h.timer)
    h.timer = null
    h.using++
    try {
      return await use(await h.fh)
    } finally {
      h.using--
      if (h.using === 0 && this.held.get(path) === h) {
        h.timer = setTimeout(() => void this.release(path, h), this.idleMs)
        h.timer.unref()
      }
    }
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

  private async release(path: string, h: Held): Promise<void> {
    if (this.held.get(path) !== h || h.using > 0) return
    this.held.delete(path)
    try {
      await this.core.release(path, await h.fh)
    } catch (err) {
      this.log.debug(`releasing ${path}: ${(err as Error).message}`)
    }
  }

  /** Every file let go; no file is opened from now on. */
  async closeAll(): Promise<void> {
    this.closed = true
    const all = [...this.held.entries()]
    for (const [, h] of all) if (h.timer) clearTimeout(h.timer)
    await Promise.all(all.map(([path, h]) => {
      this.held.delete(path)
      return h.fh.then((fh) => this.core.release(path, fh)).catch(() => {})
    }))
  }
}
