import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { AccessPattern } from '../../src/read/access-pattern.js'
import { spanAt, spansWithin } from '../../src/base/chunk-grid.js'
import { blocksOf, planFetch } from '../../src/read/geometry.js'
import { resolveReadOptions } from '../../src/read/options.js'

const KiB = 1024
const MiB = 1024 * KiB

const gridArb = fc
  .record({ block: fc.integer({ min: 1, max: 64 }), perPiece: fc.integer({ min: 1, max: 4 }), perChunk: fc.integer({ min: 1, max: 5 }) })
  .map(({ block, perPiece, perChunk }) => ({ blockSize: block, pieceSize: block * perPiece, chunkSize: block * perPiece * perChunk }))

describe('geometry', () => {
  it('blocksOf covers exactly the bytes of a read, clipped to the file', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 6000 }), fc.integer({ min: 0, max: 600 }), fc.integer({ min: 1, max: 100 }), (size, pos, len, bs) => {
        const { first, end } = blocksOf(pos, len, size, bs)
        const stop = Math.min(size, pos + len)
        if (pos >= size || len === 0) {
          expect(end).toBe(first)
          return
        }
        expect(spanAt(first, size, bs).start).toBeLessThanOrEqual(pos)
        expect(spanAt(end - 1, size, bs).end).toBeGreaterThanOrEqual(stop)
        expect(spanAt(first, size, bs).end).toBeGreaterThan(pos)
        expect(spanAt(end - 1, size, bs).start).toBeLessThan(stop)
      }),
    )
  })

  it('spansWithin tiles a range on the piece grid', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 1, max: 300 }), (a, len, ps) => {
        const pieces = spansWithin(a, a + len, ps)
        let at = a
        for (const p of pieces) {
          expect(p.start).toBe(at)
          expect(p.end).toBeGreaterThan(p.start)
          expect(p.end - p.start).toBeLessThanOrEqual(ps)
          // never across a grid line
          expect(Math.floor(p.start / ps)).toBe(Math.floor((p.end - 1) / ps))
          at = p.end
        }
        expect(at).toBe(a + len)
      }),
    )
  })

  it('planFetch starts where asked, stays in one chunk, within the window, and stops before present blocks', () => {
    fc.assert(
      fc.property(gridArb, fc.integer({ min: 1, max: 3000 }), fc.nat(), fc.integer({ min: 1, max: 2000 }), fc.array(fc.nat({ max: 300 })), (grid, size, firstSeed, window, presentList) => {
        const blocks = Math.ceil(size / grid.blockSize)
        const first = firstSeed % blocks
        const present = new Set(presentList.filter((b) => b !== first))
        const plan = planFetch(first, window, size, grid, (b) => present.has(b))
        expect(plan.first).toBe(first)
        expect(plan.end).toBeGreaterThan(first)
        expect(plan.end).toBeLessThanOrEqual(blocks)
        expect((plan.end - first) * grid.blockSize).toBeLessThanOrEqual(Math.max(grid.blockSize, Math.ceil(window / grid.blockSize) * grid.blockSize))
        const perChunk = grid.chunkSize / grid.blockSize
        expect(Math.floor(first / perChunk)).toBe(Math.floor((plan.end - 1) / perChunk))
        for (let b = first + 1; b < plan.end; b++) expect(present.has(b)).toBe(false)
      }),
    )
  })

  it('a full-size fetch from a chunk start is exactly that chunk', () => {
    const o = resolveReadOptions()
    const size = 200 * MiB
    const plan = planFetch(50, o.chunkSize, size, o, () => false)
    expect(plan).toEqual({ first: 50, end: 100 })
    // from mid-chunk it stops at the chunk boundary, then the next is aligned
    expect(planFetch(48, o.chunkSize, size, o, () => false)).toEqual({ first: 48, end: 50 })
    expect(planFetch(150, o.chunkSize, size, o, () => false)).toEqual({ first: 150, end: 200 })
  })

  it('options refuse sizes that do not nest', () => {
    expect(() => resolveReadOptions({ pieceSize: 3 * MiB, blockSize: 2 * MiB })).toThrow(RangeError)
    expect(() => resolveReadOptions({ chunkSize: 10 * MiB + 1 })).toThrow(RangeError)
    expect(() => resolveReadOptions({ deadlineMs: 0 })).toThrow(RangeError)
  })
})

describe('access pattern', () => {
  const policy = { headSize: 1 * MiB, chunkSize: 50 * MiB, prefetchBytes: 100 * MiB, sequentialSlack: 2 * MiB }

  it('a peek at the start of a file asks for a head and prefetches nothing', () => {
    const p = new AccessPattern(policy)
    expect(p.observe(0, 4 * KiB)).toBe(false)
    expect(p.fetchSize).toBe(1 * MiB)
    expect(p.lookahead).toBe(0)
  })

  it('each fetch of a sequential run doubles up to a chunk; the lookahead grows to prefetchBytes', () => {
    const p = new AccessPattern(policy)
    const sizes: number[] = []
    p.observe(0, 128 * KiB)
    for (let i = 0; i < 9; i++) {
      sizes.push(p.fetchSize)
      p.fetched()
    }
    expect(sizes.map((s) => s / MiB)).toEqual([1, 2, 4, 8, 16, 32, 50, 50, 50])
    for (let pos = 128 * KiB; pos < 200 * MiB; pos += 128 * KiB) expect(p.observe(pos, 128 * KiB)).toBe(true)
    expect(p.lookahead).toBe(100 * MiB)
    expect(p.fetchSize).toBe(50 * MiB)
  })

  it('reordered kernel readahead stays sequential; a jump resets to the head size', () => {
    const p = new AccessPattern(policy)
    for (let pos = 0; pos < 10 * MiB; pos += 128 * KiB) p.observe(pos, 128 * KiB)
    p.fetched()
    // out of order by a few requests
    expect(p.observe(10 * MiB + 512 * KiB, 128 * KiB)).toBe(true)
    expect(p.observe(10 * MiB, 128 * KiB)).toBe(true)
    expect(p.fetchSize).toBeGreaterThan(1 * MiB)
    expect(p.observe(500 * MiB, 128 * KiB)).toBe(false)
    expect(p.fetchSize).toBe(1 * MiB)
    expect(p.lookahead).toBe(0)
  })

  it('reads of a run that arrive far behind its furthest read or far ahead, within its lookahead, stay in the run', () => {
    const p = new AccessPattern(policy)
    for (let pos = 0; pos < 32 * MiB; pos += MiB) p.observe(pos, MiB)
    // Kernel readahead answered out of order: 12 MiB behind, past the 2 MiB slack.
    expect(p.observe(20 * MiB, 512 * KiB)).toBe(true)
    // Ahead of the furthest read by more than the slack, inside the bytes kept fetched ahead.
    expect(p.observe(44 * MiB, MiB)).toBe(true)
    expect(p.lookahead).toBeGreaterThan(0)
    // Further than its lookahead, ahead or back, is a jump.
    expect(p.observe(500 * MiB, MiB)).toBe(false)
    expect(p.observe(400 * MiB, MiB)).toBe(false)
    // Back to a file's start from 200 MiB in, past the 100 MiB kept ahead.
    for (let pos = 0; pos < 200 * MiB; pos += MiB) p.observe(pos, MiB)
    expect(p.observe(0, MiB)).toBe(false)
  })

  it('random reads never earn a bigger fetch (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 50 }), (slots) => {
        const p = new AccessPattern(policy)
        let last = -100
        for (const s of slots) {
          // positions at least 10 MiB apart from the previous read are never sequential
          if (Math.abs(s - last) < 10) continue
          last = s
          expect(p.observe(s * MiB, 128 * KiB)).toBe(false)
          expect(p.fetchSize).toBe(policy.headSize)
          expect(p.lookahead).toBe(0)
        }
      }),
    )
  })
})
