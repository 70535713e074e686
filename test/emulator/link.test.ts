// The throttle's link model, pure: a token bucket of `burstBytes` filled at the link's rate.
import { describe, expect, it } from 'vitest'
import { Link } from '../../src/emulator/link.js'

const RATE = 1_000_000 // bytes per second: 1 ms per 1,000 bytes

describe('Link', () => {
  it('without a burst, every byte waits its turn from the first on, and parallel bodies share the rate', () => {
    const link = new Link(RATE)
    expect(link.take(10_000, 0)).toBe(10)
    // A second body at the same moment queues behind the first.
    expect(link.take(10_000, 0)).toBe(20)
    // Idle time earns nothing.
    expect(link.take(5_000, 1_000)).toBe(5)
  })

  it('with a burst, an idle link sends up to the burst at once, then at the rate', () => {
    const link = new Link(RATE, 64_000)
    expect(link.take(64_000, 1_000)).toBe(0)
    expect(link.take(16_000, 1_000)).toBe(16)
    // 40 ms idle refill 40,000 bytes' worth, less the 16 still owed.
    expect(link.take(24_000, 1_040)).toBe(0)
    expect(link.take(1_000, 1_040)).toBe(1)
  })

  it('never refills beyond the burst however long it was idle', () => {
    const link = new Link(RATE, 8_000)
    expect(link.take(8_000, 0)).toBe(0)
    expect(link.take(100_000, 60_000)).toBe(92)
  })
})
