import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { chunkRange, planChunks } from '../../src/api/chunk-plan.js'

const MiB = 1024 * 1024

describe('planChunks', () => {
  it('gives an empty file one chunk', () => {
    const plan = planChunks(0, 16 * MiB)
    expect(plan).toEqual({ size: 0, chunkSize: 16 * MiB, chunks: 1 })
    expect(chunkRange(plan, 0)).toEqual({ start: 0, end: 0 })
  })

  it('uses ceil(size / chunksize) chunks', () => {
    expect(planChunks(1, 5_000_000).chunks).toBe(1)
    expect(planChunks(5_000_000, 5_000_000).chunks).toBe(1)
    expect(planChunks(5_000_001, 5_000_000).chunks).toBe(2)
    expect(planChunks(200 * MiB, 16 * MiB).chunks).toBe(13)
  })

  it('refuses chunk sizes outside 5..50 MB and bad sizes', () => {
    expect(() => planChunks(10, 4_999_999)).toThrow(RangeError)
    expect(() => planChunks(10, 50_000_001)).toThrow(RangeError)
    expect(() => planChunks(-1, 5_000_000)).toThrow(RangeError)
    expect(() => chunkRange(planChunks(10, 5_000_000), 1)).toThrow(RangeError)
  })

  it('covers every byte once with full chunks and a last one of 1..chunksize bytes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 * 1024 ** 3 }), fc.integer({ min: 5_000_000, max: 50_000_000 }), (size, chunkSize) => {
        const plan = planChunks(size, chunkSize)
        let expectedStart = 0
        for (let i = 0; i < plan.chunks; i++) {
          const { start, end } = chunkRange(plan, i)
          expect(start).toBe(expectedStart)
          const len = end - start
          if (i < plan.chunks - 1) expect(len).toBe(chunkSize)
          else {
            expect(len).toBeGreaterThanOrEqual(1)
            expect(len).toBeLessThanOrEqual(chunkSize)
          }
          expectedStart = end
        }
        expect(expectedStart).toBe(size)
      }),
      { numRuns: 200 },
    )
  })
})
