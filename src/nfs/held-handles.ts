// One open handle per path, shared by the NFS calls on it: NFSv3 has no open or close, so the
// server opens a file at the first call that needs it, keeps it while calls run on it, and
// closes it after a quiet while. When that while may start is the owner's to say: reads at
// once (open-files.ts), writes only once all of them are committed (write-files.ts).

export interface Held<S> {
  fh: Promise<number>
  /** Calls running on it: it is not closed under them. */
  using: number
  timer: NodeJS.Timeout | null
  /** What the owner keeps about the open file. */
  state: S
}

export interface HeldHandlesOptions<S> {
  open(path: string): Promise<number>
  /** The state of a handle just opened. */
  fresh(): S
  /** Whether the handle may be closed once nothing runs on it. */
  mayClose(state: S): boolean
  close(path: string, fh: number): Promise<void>
  /** Said when closing fails; the handle is let go of all the same. */
  closeFailed(path: string, err: Error): void
  idleMs: number
}

export class HeldHandles<S> {
  private readonly held = new Map<string, Held<S>>()
  private closed = false

  constructor(private readonly o: HeldHandlesOptions<S>) {}

  has(path: string): boolean {
    return this.held.has(path)
  }

  /** Runs `work` with the handle of `path`, opened by the first call. */
  async using<T>(path: string, work: (fh: number, h: Held<S>) => T | Promise<T>): Promise<T> {
    if (this.closed) throw new Error('the NFS server is stopping')
    let h = this.held.get(path)
    if (!h) {
      const opened: Held<S> = { fh: this.o.open(path), using: 0, timer: null, state: this.o.fresh() }
      h = opened
      this.held.set(path, h)
      // A failed open is not kept: the next call tries again.
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

  /** Holds `fh`, opened by the caller at `path`, in place of any handle held there. */
  adopt(path: string, fh: number, state: S): void {
    const h: Held<S> = { fh: Promise.resolve(fh), using: 0, timer: null, state }
    const before = this.held.get(path)
    this.held.set(path, h)
    if (before) void this.closeHandle(path, before)
    this.settle(path, h)
  }

  /** Once nothing runs on it and its owner allows, it is closed after idleMs. */
  private settle(path: string, h: Held<S>): void {
    if (h.using > 0 || !this.o.mayClose(h.state) || this.held.get(path) !== h || this.closed) return
    if (h.timer) clearTimeout(h.timer)
    h.timer = setTimeout(() => void this.release(path, h), this.o.idleMs)
    h.timer.unref()
  }

  private async release(path: string, h: Held<S>): Promise<void> {
    if (this.held.get(path) !== h || h.using > 0 || !this.o.mayClose(h.state)) return
    this.held.delete(path)
    await this.closeHandle(path, h)
  }

  private async closeHandle(path: string, h: Held<S>): Promise<void> {
    try {
      await this.o.close(path, await h.fh)
    } catch (err) {
      this.o.closeFailed(path, err as Error)
    }
  }

  /** At a stop: every handle is let go of, closed unless `leaveOpen` says otherwise; none is opened from now on. */
  async closeAll(leaveOpen: (path: string, state: S) => boolean = () => false): Promise<void> {
    this.closed = true
    const all = [...this.held.entries()]
    this.held.clear()
    await Promise.all(all.map(async ([path, h]) => {
      if (h.timer) clearTimeout(h.timer)
      if (!leaveOpen(path, h.state)) await this.closeHandle(path, h)
    }))
  }
}
