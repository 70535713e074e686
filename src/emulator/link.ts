// The throttle's model of a network link (test controls).
/**
 * One network link of `bytesPerSecond` that every throttled body shares, as the responses
 * of one client share its connection to the internet: four parallel ranges get a quarter
 * of it each, not four times it.
 */
export class Link {
  /** ms since the epoch when the link has sent everything handed to it. */
  private freeAt = 0

  constructor(readonly bytesPerSecond: number) {}

  /** Queues `n` bytes on the link; the ms to wait until they have gone out. */
  take(n: number): number {
    const now = Date.now()
    this.freeAt = Math.max(now, this.freeAt) + (n * 1000) / this.bytesPerSecond
    return this.freeAt - now
  }
}
