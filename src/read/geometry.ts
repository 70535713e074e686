// Byte-range arithmetic of the read path, pure. Three grids over a file, each a
// multiple of the next: chunks (the largest Range request), pieces (one GetRangeHash
// each) and blocks (the cache unit). The last of each may be short at end of file; the
// grid arithmetic itself is the ground floor's (base/chunk-grid.ts).
import { spanCount } from '../base/chunk-grid.js'

export interface Grid {
  chunkSize: number
  pieceSize: number
  blockSize: number
}

/** Blocks [first, end) holding bytes [position, position + length) of a file of `size` bytes. */
export function blocksOf(position: number, length: number, size: number, blockSize: number): { first: number; end: number } {
  const start = Math.min(Math.max(0, position), size)
  const stop = Math.min(size, start + Math.max(0, length))
  if (stop <= start) return { first: 0, end: 0 }
  return { first: Math.floor(start / blockSize), end: Math.ceil(stop / blockSize) }
}

/**
 * Blocks of one fetch starting at block `first`: at most `windowBytes` (rounded up to
 * blocks, at least one), never across a chunk boundary (so full fetches are aligned
 * chunks), never past end of file, and ending before the first block that is
 * already cached or in flight (`present`) so no byte is fetched twice.
 */
export function planFetch(
  first: number,
  windowBytes: number,
  size: number,
  grid: Grid,
  present: (block: number) => boolean,
): { first: number; end: number } {
  const blocksPerChunk = grid.chunkSize / grid.blockSize
  const chunkEnd = (Math.floor(first / blocksPerChunk) + 1) * blocksPerChunk
  const wanted = first + Math.max(1, Math.ceil(windowBytes / grid.blockSize))
  const limit = Math.min(chunkEnd, wanted, spanCount(size, grid.blockSize))
  let end = first + 1
  while (end < limit && !present(end)) end++
  return { first, end }
}

/** [from, to) widened to `align` boundaries, within a file of `size` bytes. */
export function alignedSpan(from: number, to: number, size: number, align: number): { start: number; end: number } {
  return { start: Math.floor(from / align) * align, end: Math.min(size, Math.ceil(to / align) * align) }
}
