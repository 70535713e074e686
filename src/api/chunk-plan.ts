// How a file is cut for savefile.ashx, exactly as the interface says: one `chunksize`
// for the whole file, `chunks` = ceil(size / chunksize), 1 for an empty file; every
// chunk but the last is chunksize bytes, the last the rest.
import { spanAt, spanCount } from '../base/chunk-grid.js'
import { CHUNK_LIMITS } from './protocol.js'

export interface ChunkPlan {
  size: number
  chunkSize: number
  chunks: number
}

/** The `chunks` of a file: ceil(size / chunksize), and 1 for an empty file (one empty chunk). */
export function chunkCount(size: number, chunkSize: number): number {
  return Math.max(1, spanCount(size, chunkSize))
}

export function planChunks(size: number, chunkSize: number): ChunkPlan {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`invalid file size ${size}`)
  if (!Number.isSafeInteger(chunkSize) || chunkSize < CHUNK_LIMITS.min || chunkSize > CHUNK_LIMITS.max) {
    throw new RangeError(`chunk size ${chunkSize} is outside ${CHUNK_LIMITS.min}..${CHUNK_LIMITS.max} bytes`)
  }
  return { size, chunkSize, chunks: chunkCount(size, chunkSize) }
}

/** Bytes [start, end) of chunk `index`. */
export function chunkRange(plan: ChunkPlan, index: number): { start: number; end: number } {
  if (!Number.isInteger(index) || index < 0 || index >= plan.chunks) {
    throw new RangeError(`chunk ${index} is outside 0..${plan.chunks - 1}`)
  }
  return spanAt(index, plan.size, plan.chunkSize)
}
