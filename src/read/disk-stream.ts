// A sequential reader's whole blocks straight from the disk cache, into buffers used again
// and again. Loading each block into a fresh 1 MiB buffer (and through the memory cache)
// made a re-read from the disk cache spend more on the garbage collector and on faulting
// in fresh pages than on anything else. Here a block is read into a pooled buffer that only
// this reader holds; the bytes are lent to the read (bytes.ts: lend), and the buffer goes
// back to the pool when the FUSE adapter has copied them out. Blocks are loaded a few ahead
// of the reader, likewise into pooled buffers it owns. A read of whole blocks (libfuse 3 asks
// 1 MiB, a block) gets them as they are; reads of parts of one block (libfuse 2 asks 128 KiB)
// share it, held until the reader has moved past it and every part lent has come back.
import { spanAt } from '../base/chunk-grid.js'
import { lend } from './bytes.js'
import type { DiskBlockCache } from './disk-cache.js'

/**
 * Free block buffers kept for the next loads; past that a returned one is left to the GC. The
 * memory budget sets them aside (content.ts, blockCacheBytes).
 */
export const POOL_KEEP = 32

export class BlockPool {
  private readonly free: Buffer[] = []

  constructor(readonly blockSize: number) {}

  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafeSlow(this.blockSize)
  }

  give(buffer: Buffer): void {
    if (this.free.length < POOL_KEEP) this.free.push(buffer)
  }
}

/** A loaded block: its bytes, a view of the pooled buffer they were read into. */
export interface LoadedBlock {
  data: Buffer
  buffer: Buffer
}

/** The block parts of it are lent from: back to the pool once retired and every part is back. */
interface HeldBlock {
  block: number
  loaded: LoadedBlock
  lends: number
  retired: boolean
}

export class DiskStream {
  /** Blocks loaded (or being loaded) ahead of the reader, owned by it. */
  private readonly ahead = new Map<number, Promise<LoadedBlock | undefined>>()
  private held: HeldBlock | null = null

  constructor(
    private readonly disk: DiskBlockCache,
    private readonly pool: BlockPool,
    private readonly cacheKey: string,
    private readonly fileSize: number,
    private readonly blockSize: number,
    /** Blocks loaded ahead of the one read. */
    private readonly depth: number,
  ) {}

  /**
   * Bytes [from, to) of blocks [first, end), lent (bytes.ts): whole blocks, or a part of one
   * block. Undefined when that is not how they are asked, or a block is not on disk.
   */
  async read(first: number, end: number, from: number, to: number): Promise<Buffer[] | undefined> {
    const base = first * this.blockSize
    if (from === base && to === Math.min(this.fileSize, end * this.blockSize)) {
      const blocks = await this.take(first, end)
      return blocks && lend(blocks.map((b) => b.data), () => this.giveBack(blocks))
    }
    if (end - first !== 1) return undefined
    if (this.held?.block !== first) {
      const blocks = await this.take(first, end)
      if (!blocks) return undefined
      // Another read of this block may have taken it while this one waited: one is held.
      if (this.held?.block === first) this.giveBack(blocks)
      else {
        this.retire()
        this.held = { block: first, loaded: blocks[0]!, lends: 0, retired: false }
      }
    }
    const held = this.held!
    held.lends++
    return lend([held.loaded.data.subarray(from - base, to - base)], () => {
      held.lends--
      if (held.retired && held.lends === 0) this.pool.give(held.loaded.buffer)
    })
  }

  private retire(): void {
    const held = this.held
    if (!held) return
    this.held = null
    held.retired = true
    if (held.lends === 0) this.pool.give(held.loaded.buffer)
  }

  /**
   * Blocks [first, end), each read into a pooled buffer the caller now owns (give each back
   * with giveBack), and the next `depth` loaded ahead; undefined when one is not on disk
   * or fails its check (what was loaded goes back to the pool).
   */
  private async take(first: number, end: number): Promise<LoadedBlock[] | undefined> {
    const loads: Promise<LoadedBlock | undefined>[] = []
    for (let b = first; b < end; b++) {
      loads.push(this.ahead.get(b) ?? this.load(b))
      this.ahead.delete(b)
    }
    for (const b of this.ahead.keys()) if (b < end) this.drop(b)
    const blocks = Math.ceil(this.fileSize / this.blockSize)
    for (let b = end; b < Math.min(blocks, end + this.depth); b++) {
      if (!this.ahead.has(b) && this.disk.has(this.cacheKey, b)) this.ahead.set(b, this.load(b))
    }
    const got = await Promise.all(loads)
    if (got.every((g) => g !== undefined)) return got as LoadedBlock[]
    this.giveBack(got.filter((g): g is LoadedBlock => g !== undefined))
    return undefined
  }

  private giveBack(blocks: readonly LoadedBlock[]): void {
    for (const b of blocks) this.pool.give(b.buffer)
  }

  /** The reader went elsewhere or closed: what was loaded ahead goes back. */
  reset(): void {
    for (const b of [...this.ahead.keys()]) this.drop(b)
    this.retire()
  }

  private drop(block: number): void {
    const load = this.ahead.get(block)
    this.ahead.delete(block)
    void load?.then((b) => b && this.pool.give(b.buffer))
  }

  private load(block: number): Promise<LoadedBlock | undefined> {
    const buffer = this.pool.take()
    const span = spanAt(block, this.fileSize, this.blockSize)
    return this.disk.get(this.cacheKey, block, span.end - span.start, buffer).then(
      (data) => {
        if (data && data.buffer === buffer.buffer) return { data, buffer }
        this.pool.give(buffer)
        return undefined
      },
      () => {
        this.pool.give(buffer)
        return undefined
      },
    )
  }
}
