// Memory for blocks laid out as the disk cache stores them, so a block goes to disk and
// comes back without a copy and without the kernel's page cache. A slot is a header page
// and then room for one block, page-aligned; the disk cache writes a block in a slot, with
// its header filled in the page before it, as one O_DIRECT write (disk-cache.ts), and reads
// a record straight into a slot the same way. Written through the page cache, a cold read's
// blocks cost this machine's kernel ~0.9 CPU-s per GiB (allocating, copying and accounting
// every 4 KiB page, besides the writeback later), against ~0.45 with O_DIRECT; and a block
// the user reads through the mount stayed in memory twice, once as the mount's file and
// once as the cache's. Slots are in the block check's memory (block-sum.ts), so a block is
// checked where it lies; the memory of fetched blocks is shared, so the hashing threads read
// them there too.
import { sumMemory } from './block-sum.js'

/**
 * Alignment of the disk cache's records, and of the memory they are written from and read
 * into: a page, which is what O_DIRECT asks on the usual file systems (their logical block
 * of 512 or 4096 bytes divides it).
 */
export const RECORD_ALIGN = 4096

/** `n` rounded up to RECORD_ALIGN. */
export function aligned(n: number): number {
  return Math.ceil(n / RECORD_ALIGN) * RECORD_ALIGN
}

/** Where the slots of one memory are: slot i's header page starts at start + i * stride. */
interface SlotMemory {
  start: number
  stride: number
  count: number
  /** Room for a block's bytes in each slot (a multiple of RECORD_ALIGN). */
  room: number
}

const memories = new WeakMap<ArrayBufferLike, SlotMemory>()

/**
 * `count` slots with room for blocks of `blockSize` bytes: their block rooms, each blockSize
 * long. `shared`: in memory other threads may read (fetched blocks, hashed by the hashing
 * threads); blocks only ever read on this thread (loaded from disk) are better in plain
 * memory, which V8 copies out faster (block-sum.ts).
 */
export function blockSlots(count: number, blockSize: number, shared: boolean): Buffer[] {
  const room = aligned(blockSize)
  const stride = RECORD_ALIGN + room
  const memory = sumMemory(count * stride, shared)
  memories.set(memory.buffer, { start: memory.byteOffset, stride, count, room })
  const out: Buffer[] = []
  for (let i = 0; i < count; i++) {
    const at = i * stride + RECORD_ALIGN
    out.push(memory.subarray(at, at + blockSize))
  }
  return out
}

/**
 * The record `bytes` make in their slot: the slot's header page and the bytes, `length`
 * rounded up to RECORD_ALIGN. Null when `bytes` do not start a slot's block room or the
 * rounded length does not fit it.
 */
export function recordOf(bytes: Buffer, length: number): Buffer | null {
  const memory = memories.get(bytes.buffer)
  if (!memory) return null
  const header = bytes.byteOffset - RECORD_ALIGN - memory.start
  if (header < 0 || header % memory.stride !== 0 || header / memory.stride >= memory.count) return null
  if (aligned(length) > memory.room) return null
  return Buffer.from(bytes.buffer, bytes.byteOffset - RECORD_ALIGN, RECORD_ALIGN + aligned(length))
}
