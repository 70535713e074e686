// The buffers a cold read's blocks live in, used again and again. A block used to be kept
// as the network buffers it arrived in (64 of them per MiB): the garbage collector then
// had hundreds of thousands of buffers per GiB to track and free, every 64 MiB of them
// set off a full collection, and writing a block to the disk cache took 65 buffers per
// write. Now the socket decrypts a fetch's bytes straight into one pooled buffer per block
// (run-stream.ts names it as the sink's room: range-sockets.ts), or the fetch copies them
// there when they came another way; shared memory, so a hashing thread reads them where
// they are (piece-hash.ts). The buffers are slots
// (block-slots.ts): the disk cache writes a block from its slot with no copy.
//
// Slots come in groups of SLOTS_AT_ONCE from one memory, which goes back to the system
// only as a whole; so every slot freed stays in the pool. How many slots a read path
// has at once is bounded by its memory budget (budget.ts), and once the memory cache has
// filled, it holds about that many anyway.
//
// A pooled buffer goes back to the pool only when nobody can still read it. Who holds it
// is counted: the fetch filling it, the memory cache, a disk-cache write under way, and
// each read whose bytes are lent to the FUSE adapter until it has copied them (bytes.ts).
// A read gets its blocks through promises, so a block it was given may have left the
// cache, and its buffer gone to another block, before the read could hold it: `hold` says
// so (the block a buffer carries is checked by identity), and the read asks again.
import { blockSlots } from './block-slots.js'
import type { Block } from './memory-cache.js'

/**
 * Slots made at once when the pool has none free: 8 MiB of 1 MiB blocks. At most this many
 * less one are free when the most are in use (the memory budget sets them aside: budget.ts).
 */
export const SLOTS_AT_ONCE = 8

/** One pooled block buffer: its memory (blockSize bytes), who holds it, and the block it now carries. */
export class PooledBuffer {
  refs = 1
  /** The block whose bytes it carries, once sealed; null while filling or once free. */
  carries: Block | null = null

  constructor(readonly memory: Buffer) {}
}

/** What a filled buffer is as a block, found from the block. */
const pooledOf = new WeakMap<Block, PooledBuffer>()

export class BlockBuffers {
  private readonly free: PooledBuffer[] = []
  private made = 0

  constructor(readonly blockSize: number) {}

  /** A buffer for a block being fetched, held once (by the fetch). */
  take(): PooledBuffer {
    if (this.free.length === 0) {
      for (const slot of blockSlots(SLOTS_AT_ONCE, this.blockSize, true)) this.free.push(new PooledBuffer(slot))
      this.made += SLOTS_AT_ONCE
    }
    const buffer = this.free.pop()!
    buffer.refs = 1
    return buffer
  }

  /** The buffer's first `length` bytes, verified, as the block handed on; the fetch's hold passes to it. */
  seal(buffer: PooledBuffer, length: number): Block {
    const block: Block = [buffer.memory.subarray(0, length)]
    buffer.carries = block
    pooledOf.set(block, buffer)
    return block
  }

  /** The fetch gives up a buffer it never sealed (its piece failed or was abandoned). */
  drop(buffer: PooledBuffer): void {
    this.unref(buffer)
  }

  /**
   * Holds the block's buffer once more: true, or false when the buffer already carries
   * something else (the block left every holder meanwhile). A block not from the pool
   * (read from the disk cache) is always there.
   */
  hold(block: Block): boolean {
    const buffer = pooledOf.get(block)
    if (!buffer) return true
    if (buffer.carries !== block) return false
    buffer.refs++
    return true
  }

  /** Lets go of a hold on the block; its buffer is free once nobody holds it. */
  release(block: Block): void {
    const buffer = pooledOf.get(block)
    if (buffer?.carries === block) this.unref(buffer)
  }

  private unref(buffer: PooledBuffer): void {
    if (--buffer.refs > 0) return
    buffer.carries = null
    this.free.push(buffer)
  }

  /** Free buffers in the pool (for tests). */
  get freeCount(): number {
    return this.free.length
  }

  /** Buffers the pool has made in all (for tests). */
  get madeCount(): number {
    return this.made
  }
}
