// Verified blocks in memory, bounded in bytes. The cache holds each block it keeps (a
// pooled buffer is not used again while anyone holds it: block-buffers.ts) and lets go of
// it when it goes; a read holds what it was handed on its own, so eviction never takes
// bytes from under a reader.
//
// Which block goes first: blocks a sequential reader has already read, oldest first, then
// the least recently used of the rest. A plain LRU got this wrong for a reader that streams
// a file while its prefetch runs ahead: a prefetched block that arrived early (parallel
// fetches finish out of order) was older than blocks the reader had just gone past, and
// was evicted before it was read, so it was fetched again.
//
// With a disk cache, only the last few blocks read sequentially stay (consumedMaxBytes):
// the disk cache has the rest, and so has the kernel's page cache of the mount's file.
// Kept to the whole budget, a cold 1 GiB read filled ~460 MiB of memory with blocks nobody
// read again, and faulting in that memory (first use of each page) cost ~0.35 CPU-s.
import { bytesLength } from './bytes.js'

/** A verified block: its bytes as the parts they arrived in. */
export type Block = readonly Buffer[]

/** Who keeps count of a block's holders (block-buffers.ts). */
export interface BlockHolds {
  /** Holds the block once more; false when it is gone (its buffer carries another block). */
  hold(block: Block): boolean
  release(block: Block): void
}

export class MemoryBlockCache {
  /** Blocks nobody has streamed past yet; Map order is recency (first = least recent). */
  private readonly fresh = new Map<string, Block>()
  /** Blocks a sequential reader has read, in the order it read them: the first to go. */
  private readonly consumed = new Map<string, Block>()
  private size = 0
  private consumedSize = 0

  constructor(
    readonly maxBytes: number,
    private readonly holds: BlockHolds | null = null,
    /** Bytes of blocks read sequentially kept at most. */
    readonly consumedMaxBytes = maxBytes,
  ) {}

  /**
   * `touch: true` (a random reader, who may come back) makes the block the most recently
   * used; `touch: false` (a sequential reader, who will not) marks it read, first to go.
   */
  get(key: string, touch = true): Block | undefined {
    const block = this.take(key)
    if (block === undefined) return undefined
    if (touch) this.fresh.set(key, block)
    else {
      this.consumed.set(key, block)
      this.consumedSize += bytesLength(block)
      // Never the block just read: its reader has yet to hold it.
      while (this.consumedSize > this.consumedMaxBytes && this.consumed.size > 1) this.remove(this.consumed.keys().next().value!)
    }
    return block
  }

  has(key: string): boolean {
    return this.fresh.has(key) || this.consumed.has(key)
  }

  set(key: string, block: Block): void {
    const length = bytesLength(block)
    // A block larger than the whole budget is not kept.
    if (length > this.maxBytes) return
    this.remove(key)
    if (this.holds && !this.holds.hold(block)) return
    this.fresh.set(key, block)
    this.size += length
    while (this.size > this.maxBytes) {
      const oldest = this.consumed.keys().next().value ?? this.fresh.keys().next().value
      if (oldest === undefined) break
      this.remove(oldest)
    }
  }

  /** The block, taken out of whichever order holds it (its bytes still counted). */
  private take(key: string): Block | undefined {
    const block = this.fresh.get(key) ?? this.consumed.get(key)
    if (block !== undefined) {
      this.fresh.delete(key)
      if (this.consumed.delete(key)) this.consumedSize -= bytesLength(block)
    }
    return block
  }

  private remove(key: string): void {
    const block = this.take(key)
    if (block === undefined) return
    this.size -= bytesLength(block)
    this.holds?.release(block)
  }

  get bytes(): number {
    return this.size
  }

  get count(): number {
    return this.fresh.size + this.consumed.size
  }
}

/** The cache key of one block of one version of one file. */
export function blockKey(cacheKey: string, block: number): string {
  return `${cacheKey}\u0000${block}`
}
