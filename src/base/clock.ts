// Time as the code sees it: now, and timers that can be cancelled. Tests pass a manual
// clock (test/support/manual-clock.ts) to step through time without waiting.

export type CancelTimer = () => void

export interface Clock {
  /** Unix ms. */
  now(): number
  setTimer(ms: number, fn: () => void): CancelTimer
}

/** The real clock; its timers never keep the process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const t = setTimeout(fn, Math.max(0, ms))
    t.unref?.()
    return () => clearTimeout(t)
  },
}
