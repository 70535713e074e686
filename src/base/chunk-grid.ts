// The grid a file is cut into: spans of one fixed size from its start, the last one
// shorter. Upload chunks, download chunks, verification pieces and cache blocks are all
// such grids; this is their one arithmetic.

/** Bytes [start, end) of a file. */
export interface Span {
  start: number
  end: number
}

/** Spans of `step` bytes covering `size` bytes (none for an empty file). */
export function spanCount(size: number, step: number): number {
  return Math.ceil(size / step)
}

/** Span `index` of the grid (empty past the end of the file). */
export function spanAt(index: number, size: number, step: number): Span {
  const start = Math.min(size, index * step)
  return { start, end: Math.min(size, start + step) }
}

/** Bytes in span `index`: `step`, less for the last, 0 past the end. */
export function spanLength(index: number, size: number, step: number): number {
  const { start, end } = spanAt(index, size, step)
  return end - start
}

/** Every span of the grid, in order. */
export function spansOf(size: number, step: number): Span[] {
  return Array.from({ length: spanCount(size, step) }, (_, i) => spanAt(i, size, step))
}

/** The grid's spans meeting bytes [start, end), clipped to them. */
export function spansWithin(start: number, end: number, step: number): Span[] {
  const out: Span[] = []
  for (let at = start; at < end; ) {
    const next = Math.min(end, (Math.floor(at / step) + 1) * step)
    out.push({ start: at, end: next })
    at = next
  }
  return out
}
