// How the read path's memory budget (memoryCacheBytes) is shared: what is set aside for
// buffers in use elsewhere, and what is left for the memory block cache.
import { SLOTS_AT_ONCE } from './block-buffers.js'
import { MAX_WRITE_BACKLOG } from './disk-cache.js'
import { POOL_KEEP } from './disk-stream.js'
import type { ReadOptions } from './options.js'
import { MAX_UNJUDGED_PIECES } from './run-stream.js'

/**
 * Bytes the memory block cache may hold. memoryCacheBytes is what the read path's buffers
 * may take in all, and besides the cached blocks there are: per fetch in flight, the pieces
 * received and not yet judged, the one being received and a piece of slack for what the
 * connection buffers ahead; the fetch buffers made ahead of need (SLOTS_AT_ONCE); blocks evicted
 * before the disk cache has written them; and the pooled buffers of re-reads from the disk
 * cache. Without taking those out, the process grew ~170 MiB past a 512 MiB budget on a
 * cold read. At least a sixteenth of the budget stays for blocks.
 */
export function blockCacheBytes(o: ReadOptions, diskCache: boolean): number {
  const perFetch = MAX_UNJUDGED_PIECES + 2
  const reserved = o.maxConcurrentFetches * perFetch * o.pieceSize + SLOTS_AT_ONCE * o.blockSize + (diskCache ? MAX_WRITE_BACKLOG + POOL_KEEP * o.blockSize : 0)
  return Math.max(Math.floor(o.memoryCacheBytes / 16), o.memoryCacheBytes - reserved)
}

/**
 * Blocks a sequential reader has read that the memory cache keeps at most (memory-cache.ts):
 * with a disk cache, the last few, enough for a few readers' current blocks; without one,
 * as many as fit.
 */
export function consumedBlockBytes(o: ReadOptions, diskCache: boolean): number {
  const cacheBytes = blockCacheBytes(o, diskCache)
  return diskCache ? Math.min(cacheBytes, CONSUMED_KEPT * o.blockSize) : cacheBytes
}

/** Blocks read sequentially kept in memory beside a disk cache: 32 MiB of 1 MiB blocks. */
const CONSUMED_KEPT = 32
