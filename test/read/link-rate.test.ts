// The link's rate as the range streams see it, and the lookahead it buys a reader: pure
// logic on a clock the test moves.
import { describe, expect, it } from 'vitest'
import { LinkRate, linkLookahead } from '../../src/read/link-rate.js'

const MB = 1e6
const MiB = 1024 * 1024

/** A LinkRate on a clock of the test's own, and a stream that delivers `bytesPerSecond` for `ms`, 10 ms at a time. */
function clocked() {
  let now = 0
  const rate = new LinkRate(() => now)
  const advance = (ms: number) => { now += ms }
  const deliver = (bytesPerSecond: number, ms: number) => {
    for (let t = 0; t < ms; t += 10) {
      advance(10)
      rate.received((bytesPerSecond * 10) / 1000)
    }
  }
  return { rate, advance, deliver }
}

describe('the link rate', () => {
  it('knows nothing until streams have been under way for a while', () => {
    const { rate, deliver } = clocked()
    expect(rate.bytesPerSecond).toBeNull()
    const end = rate.begin()
    deliver(12.5 * MB, 50)
    expect(rate.bytesPerSecond).toBeNull()
    deliver(12.5 * MB, 100)
    expect(rate.bytesPerSecond).not.toBeNull()
    end()
  })

  it('is what a steady stream delivers', () => {
    const { rate, deliver } = clocked()
    const end = rate.begin()
    deliver(12.5 * MB, 2000)
    end()
    expect(rate.bytesPerSecond! / (12.5 * MB)).toBeCloseTo(1, 2)
  })

  it('counts no time while no stream is under way (a reader that pauses does not make the link look slow)', () => {
    const { rate, advance, deliver } = clocked()
    let end = rate.begin()
    deliver(10 * MB, 1000)
    end()
    advance(30_000)
    expect(rate.bytesPerSecond! / (10 * MB)).toBeCloseTo(1, 2)
    end = rate.begin()
    deliver(10 * MB, 500)
    end()
    expect(rate.bytesPerSecond! / (10 * MB)).toBeCloseTo(1, 2)
  })

  it('adds up streams under way at once: the link is theirs together', () => {
    const { rate, deliver } = clocked()
    const a = rate.begin()
    const b = rate.begin()
    // Each delivers 5 MB/s: their bytes come interleaved, 10 MB/s in all.
    deliver(10 * MB, 2000)
    a()
    b()
    expect(rate.bytesPerSecond! / (10 * MB)).toBeCloseTo(1, 2)
  })

  it('follows a link that slows down within a few seconds', () => {
    const { rate, deliver } = clocked()
    const end = rate.begin()
    deliver(100 * MB, 3000)
    deliver(10 * MB, 4000)
    end()
    const r = rate.bytesPerSecond!
    expect(r).toBeGreaterThan(10 * MB)
    expect(r).toBeLessThan(13 * MB)
  })

  it('a stream that says twice it has ended ends once', () => {
    const { rate, advance, deliver } = clocked()
    const a = rate.begin()
    const b = rate.begin()
    deliver(10 * MB, 1000)
    a()
    a()
    // b is still under way: its bytes and time still count.
    deliver(10 * MB, 1000)
    b()
    advance(5000)
    expect(rate.bytesPerSecond! / (10 * MB)).toBeCloseTo(1, 2)
  })
})

describe('the lookahead the link buys', () => {
  const policy = { pieceSize: 5 * MiB, prefetchHorizonMs: 250, sequentialSlack: 0 }

  it('is unbounded while the rate is not known', () => {
    expect(linkLookahead(null, 1, policy)).toBe(Infinity)
  })

  it('is a piece and the horizon of the link', () => {
    expect(linkLookahead(12.5 * MB, 1, policy)).toBe(5 * MiB + 3_125_000)
    expect(linkLookahead(300 * MB, 1, policy)).toBe(5 * MiB + 75_000_000)
  })

  it('readers sharing the link each keep their share ahead, and always a piece', () => {
    expect(linkLookahead(12.5 * MB, 2, policy)).toBe(5 * MiB + 1_562_500)
    expect(linkLookahead(0, 1, policy)).toBe(5 * MiB)
    expect(linkLookahead(12.5 * MB, 0, policy)).toBe(5 * MiB + 3_125_000)
  })

  it('covers at least what the kernel\'s readahead asks at once', () => {
    expect(linkLookahead(12.5 * MB, 1, { ...policy, sequentialSlack: 8 * MiB })).toBe(8 * MiB)
    expect(linkLookahead(12.5 * MB, 1, { ...policy, sequentialSlack: 100 * MiB })).toBe(100 * MiB)
    expect(linkLookahead(300 * MB, 1, { ...policy, sequentialSlack: 8 * MiB })).toBe(5 * MiB + 75_000_000)
  })
})
