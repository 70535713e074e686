// A rate from samples of a growing count (bytes on disk) over the last seconds: what status
// shows as a pin's speed and derives its ETA from.

/** ms of samples the rate is taken over: long enough to smooth a link's bursts, short enough to follow a change. */
const WINDOW_MS = 20_000

export class RateWindow {
  private readonly samples: Array<[number, number]> = []

  constructor(private readonly now: () => number = Date.now) {}

  add(count: number): void {
    const t = this.now()
    this.samples.push([t, count])
    while (this.samples.length > 2 && this.samples[0]![0] < t - WINDOW_MS) this.samples.shift()
  }

  /** Per second over the window; null before two samples, or once the last is older than the window (nothing moving). */
  perSecond(): number | null {
    const first = this.samples[0]
    const last = this.samples[this.samples.length - 1]
    if (!first || !last || last[0] <= first[0] || this.now() - last[0] > WINDOW_MS) return null
    return ((last[1] - first[1]) * 1000) / (last[0] - first[0])
  }
}
