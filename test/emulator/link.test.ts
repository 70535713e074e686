// The throttle's link model, pure: a token bucket of `burstBytes` filled at the link's rate.
import { describe, expect, it } from 'vitest'
import { Link } from '../../src/emulator/link.js'

const RATE = 1_000_000 // bytes per second: 1 ms per 1,000 bytes

/** Bodies handed to a link in turn: [ms since the epoch, bytes, the wait the link must give]. */
type Step = [now: number, bytes: number, waitMs: number]

function expectWaits(link: Link, steps: Step[]): void {
  expect(steps.map(([now, bytes]) => link.take(bytes, now))).toEqual(steps.map(([, , wait]) => wait))
}

describe('Link', () => {
  it('without a burst, every byte waits its turn from the first on, and parallel bodies share the rate', () => {
    expectWaits(new Link(RATE), [
      [0, 10_000, 10],
      // A second body at the same moment queues behind the first.
      [0, 10_000, 20],
      // Idle time earns nothing.
      [1_000, 5_000, 5],
    ])
  })

  it('with a burst, an idle link sends up to the burst at once, then at the rate', () => {
    expectWaits(new Link(RATE, 64_000), [
      [1_000, 64_000, 0],
      [1_000, 16_000, 16],
      // 40 ms idle refill 40,000 bytes' worth, less the 16 still owed.
      [1_040, 24_000, 0],
      [1_040, 1_000, 1],
    ])
  })

  it('never refills beyond the burst however long it was idle', () => {
    expectWaits(new Link(RATE, 8_000), [
      [0, 8_000, 0],
      [60_000, 100_000, 92],
    ])
  })
})
