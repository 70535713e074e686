// Verified blocks in memory, least recently used out first, bounded in bytes. A block
// handed to a read stays valid after eviction (the read holds its parts, which are
// never reused), so eviction never takes bytes from under a reader.
import { LRUCache } from 'lru-cache'
import { bytesLength } from './bytes.js'

/** A verified block: its bytes as the parts they arrived in. */
export type Block = readonly Buffer[]

export class MemoryBlockCache {
  private readonly lru: LRUCache<string, Block>

  constructor(readonly maxBytes: number) {
    this.lru = new LRUCache<string, Block>({
      maxSize: Math.max(1, maxBytes),
      sizeCalculation: (b) => Math.max(1, bytesLength(b)),
    })
  }

  /**
   * `touch: false` leaves the block's place in the LRU order: a sequential reader will
   * not come back for what it has read, and bumping it would make the blocks it
   * prefetched (not yet read) the first to go.
   */
  get(key: string, touch = true): Block | undefined {
    return touch ? this.lru.get(key) : this.lru.peek(key)
  }

  has(key: string): boolean {
    return this.lru.has(key)
  }

  set(key: string, block: Block): void {
    // A block larger than the whole budget is not kept (lru-cache would refuse it anyway).
    if (bytesLength(block) > this.maxBytes) return
    this.lru.set(key, block)
  }

  get bytes(): number {
    return this.lru.calculatedSize
  }

  get count(): number {
    return this.lru.size
  }
}

/** The cache key of one block of one version of one file. */
export function blockKey(cacheKey: string, block: number): string {
  return `${cacheKey}\u0000${block}`
}
