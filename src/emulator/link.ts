// The throttle's model of a network link (test controls).
/**
 * One network link of `bytesPerSecond` that every throttled body shares, as the responses
 * of one client share its connection to the internet: four parallel ranges get a quarter
 * of it each, not four times it. A token bucket: up to `burstBytes` go at once after the
 * link has been idle (as a shaping proxy or a router's queue lets them), the rest at the
 * rate. Without a burst every byte waits its turn from the first on.
 */
export class Link {
  /** ms since the epoch when the link has sent everything handed to it (never yet: a full bucket). */
  private freeAt = -Infinity
  /** ms the burst is worth at the rate: an idle link is "behind" by at most this much. */
  private readonly burstMs: number

  constructor(readonly bytesPerSecond: number, readonly burstBytes = 0) {
    this.burstMs = (burstBytes * 1000) / bytesPerSecond
  }

  /** Queues `n` bytes on the link; the ms to wait until they have gone out (0 within the burst). */
  take(n: number, now = Date.now()): number {
    // Time the link was idle earns tokens, up to the burst: a full bucket is freeAt at
    // burstMs before now, and bytes are sent from there on at the rate.
    this.freeAt = Math.max(now - this.burstMs, this.freeAt) + (n * 1000) / this.bytesPerSecond
    return Math.max(0, this.freeAt - now)
  }
}
