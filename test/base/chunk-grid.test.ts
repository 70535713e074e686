// The one grid arithmetic: spans tile a file in order, each `step` long but the last,
// and a range cut on the grid tiles the range.
import fc from 'fast-check'
import { expect, it } from 'vitest'
import { spanAt, spanCount, spanLength, spansOf, spansWithin } from '../../src/base/chunk-grid.js'

it('spansOf tiles a file: in order, step long but the last, lengths summing to the size', () => {
  fc.assert(fc.property(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 1, max: 700 }), (size, step) => {
    const spans = spansOf(size, step)
    expect(spans).toHaveLength(spanCount(size, step))
    let at = 0
    spans.forEach((s, i) => {
      expect(s).toEqual(spanAt(i, size, step))
      expect(s.start).toBe(at)
      expect(s.end - s.start).toBe(spanLength(i, size, step))
      expect(s.end - s.start).toBe(i < spans.length - 1 ? step : size - at)
      expect(s.end).toBeGreaterThan(s.start)
      at = s.end
    })
    expect(at).toBe(size)
    expect(spanLength(spans.length, size, step)).toBe(0)
  }))
})

it('spansWithin cuts a range on the grid: contiguous, inside one span each', () => {
  fc.assert(fc.property(fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 1, max: 700 }), (start, length, step) => {
    const spans = spansWithin(start, start + length, step)
    let at = start
    for (const s of spans) {
      expect(s.start).toBe(at)
      expect(Math.floor(s.start / step)).toBe(Math.floor((s.end - 1) / step))
      at = s.end
    }
    expect(at).toBe(start + length)
  }))
})
