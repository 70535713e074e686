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
import { blockSlots } from './block-slots.js'
import { lend } from './bytes.js'
import type { DiskBlockCache } from './disk-cache.js'

/**
 * Block buffers a pool holds, made at its first take; past them, a load takes a fresh buffer
 * that is left to the GC when given back. The memory budget sets them aside (content.ts,
 * blockCacheBytes).
 */
export const POOL_KEEP = 32

export class BlockPool {
  /** Its buffers not in use: slots, so a load reads straight into them and is checked where it lies (block-slots.ts). */
  private free: Buffer[] | null = null
  private readonly own = new WeakSet<Buffer>()

  constructor(readonly blockSize: number) {}

  take(): Buffer {
    if (!this.free) {
      this.free = blockSlots(POOL_KEEP, this.blockSize, false)
      for (const b of this.free) this.own.add(b)
    }
    return this.free.pop() ?? Buffer.allocUnsafeSlow(this.blockSize)
  }

  give(buffer: Buffer): void {
    if (this.own.has(buffer)) this.free!.push(buffer)
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

/** Bytes lent (bytes.ts), or undefined: not asked that way, or a block not on disk. */
export type Lent = Buffer[] | undefined

/** A load of a block ahead of the reader; `done` once it settled, with the block when it succeeded. */
interface Load {
  promise: Promise<LoadedBlock | undefined>
  done: boolean
  block: LoadedBlock | undefined
}

export class DiskStream {
  /** Blocks loaded (or being loaded) ahead of the reader, owned by it. */
  private readonly ahead = new Map<number, Load>()
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
   * Answered at once, not through a promise, when nothing needs waiting for (the block is
   * held, or was loaded ahead): a libfuse 2 reader asks 8192 times per GiB, and the promises
   * and ticks of an asynchronous answer each time were a good part of a re-read's CPU.
   */
  read(first: number, end: number, from: number, to: number): Lent | Promise<Lent> {
    const base = first * this.blockSize
    if (from === base && to === Math.min(this.fileSize, end * this.blockSize)) {
      const blocks = this.take(first, end)
      return blocks instanceof Promise ? blocks.then((b) => this.lendWhole(b)) : this.lendWhole(blocks)
    }
    if (end - first !== 1) return undefined
    if (this.held?.block === first) return this.lendPart(this.held, from - base, to - base)
    const blocks = this.take(first, end)
    return blocks instanceof Promise ? blocks.then((b) => this.hold(first, b, from - base, to - base)) : this.hold(first, blocks, from - base, to - base)
  }

  /** Bytes [from, to) of `block` lent when it is the block held now; undefined otherwise (nothing is loaded). */
  lendHeld(block: number, from: number, to: number): Lent {
    return this.held?.block === block ? this.lendPart(this.held, from, to) : undefined
  }

  private lendWhole(blocks: LoadedBlock[] | undefined): Lent {
    return blocks && lend(blocks.map((b) => b.data), () => this.giveBack(blocks))
  }

  /** Holds the loaded block (parts of it are lent until the reader moves on) and lends [from, to) of it. */
  private hold(block: number, blocks: LoadedBlock[] | undefined, from: number, to: number): Lent {
    if (!blocks) return undefined
    // Another read of this block may have taken it while this one waited: one is held.
    if (this.held?.block === block) this.giveBack(blocks)
    else {
      this.retire()
      this.held = { block, loaded: blocks[0]!, lends: 0, retired: false }
    }
    return this.lendPart(this.held!, from, to)
  }

  private lendPart(held: HeldBlock, from: number, to: number): Lent {
    held.lends++
    return lend([held.loaded.data.subarray(from, to)], () => {
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
   * or fails its check (what was loaded goes back to the pool). At once when every one of
   * them was loaded already.
   */
  private take(first: number, end: number): LoadedBlock[] | undefined | Promise<LoadedBlock[] | undefined> {
    const loads: Load[] = []
    for (let b = first; b < end; b++) {
      loads.push(this.ahead.get(b) ?? this.load(b))
      this.ahead.delete(b)
    }
    for (const b of this.ahead.keys()) if (b < end) this.drop(b)
    const blocks = Math.ceil(this.fileSize / this.blockSize)
    for (let b = end; b < Math.min(blocks, end + this.depth); b++) this.loadAhead(b)
    if (loads.every((l) => l.done)) return this.whole(loads.map((l) => l.block))
    return Promise.all(loads.map((l) => l.promise)).then((got) => this.whole(got))
  }

  /** Loads `block` ahead of the reader, unless it is loaded or being loaded already, or is not on disk. */
  loadAhead(block: number): void {
    if (!this.ahead.has(block) && this.disk.has(this.cacheKey, block)) this.ahead.set(block, this.load(block))
  }

  /** The blocks when every one loaded; otherwise those that did go back, and undefined. */
  private whole(got: (LoadedBlock | undefined)[]): LoadedBlock[] | undefined {
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
    void load?.promise.then((b) => b && this.pool.give(b.buffer))
  }

  private load(block: number): Load {
    const buffer = this.pool.take()
    const span = spanAt(block, this.fileSize, this.blockSize)
    const load: Load = { promise: undefined!, done: false, block: undefined }
    load.promise = this.disk.get(this.cacheKey, block, span.end - span.start, buffer).then(
      (data) => {
        load.done = true
        // Read into this buffer, not elsewhere (slots share one memory: the offset tells them apart).
        if (data && data.buffer === buffer.buffer && data.byteOffset === buffer.byteOffset) return (load.block = { data, buffer })
        this.pool.give(buffer)
        return undefined
      },
      () => {
        load.done = true
        this.pool.give(buffer)
        return undefined
      },
    )
    return load
  }
}
