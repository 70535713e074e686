// A clock whose time moves only when a test says so; due timers fire in order, synchronously.
import type { CancelTimer, Clock } from '../../src/base/clock.js'

interface PendingTimer { at: number; seq: number; fn: () => void }

/** Time moves only when advance() is called; due timers fire in order, synchronously. */
export class ManualClock implements Clock {
  private time: number
  private seq = 0
  private timers = new Map<number, PendingTimer>()

  constructor(start = 1_700_000_000_000) {
    this.time = start
  }

  now(): number {
    return this.time
  }

  setTimer(ms: number, fn: () => void): CancelTimer {
    const id = ++this.seq
    this.timers.set(id, { at: this.time + Math.max(0, ms), seq: id, fn })
    return () => { this.timers.delete(id) }
  }

  get pendingTimers(): number {
    return this.timers.size
  }

  /** ms until the next timer fires, or null when none is pending. */
  nextDelay(): number | null {
    let best: number | null = null
    for (const t of this.timers.values()) if (best === null || t.at < best) best = t.at
    return best === null ? null : Math.max(0, best - this.time)
  }

  advance(ms: number): void {
    const end = this.time + ms
    for (;;) {
      let next: [number, PendingTimer] | null = null
      for (const e of this.timers) {
        if (e[1].at <= end && (next === null || e[1].at < next[1].at || (e[1].at === next[1].at && e[1].seq < next[1].seq))) next = e
      }
      if (!next) break
      this.timers.delete(next[0])
      this.time = Math.max(this.time, next[1].at)
      next[1].fn()
    }
    this.time = end
  }
}
