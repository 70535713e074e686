// A read's blocks held and lent to the FUSE adapter. Each block a read answers from is
// held (block-buffers.ts) until the adapter has copied its bytes out, so its pooled buffer
// cannot carry another block meanwhile; the read is given views into the blocks' parts,
// not copies, and the holds end when the adapter gives the views back (bytes.ts).
import { bytesLength, lend, sliceParts } from './bytes.js'
import { blockKey, type Block, type BlockHolds, type MemoryBlockCache } from './memory-cache.js'

/** Blocks [first, end) of a file held when every one is in memory, or undefined with none held. */
export function holdInMemory(memory: MemoryBlockCache, holds: BlockHolds, cacheKey: string, first: number, end: number): Block[] | undefined {
  for (let b = first; b < end; b++) if (!memory.has(blockKey(cacheKey, b))) return undefined
  const blocks: Block[] = []
  for (let b = first; b < end; b++) {
    const block = memory.get(blockKey(cacheKey, b), false)
    if (!block || !holds.hold(block)) {
      for (const held of blocks) holds.release(held)
      return undefined
    }
    blocks.push(block)
  }
  return blocks
}

/**
 * The `count` blocks `obtain` promises, each held as its promise settles. A block that left
 * every holder before it could be held is asked again, all of them with it (rare: it was
 * evicted between being found and being held).
 */
export async function holdEach(holds: BlockHolds, count: number, obtain: () => Promise<Block>[]): Promise<Block[]> {
  for (;;) {
    const held: Block[] = []
    let over = false
    let gone = false
    const parts = obtain().map((p) => p.then((block) => {
      if (over) return block
      if (holds.hold(block)) held.push(block)
      else gone = true
      return block
    }))
    try {
      const blocks = await Promise.all(parts)
      if (!gone) return blocks
    } finally {
      over = true
      if (gone || held.length !== count) for (const b of held) holds.release(b)
    }
  }
}

/** Bytes [position, stop) of held blocks from block `first`, lent: the holds end when the FUSE adapter gives them back. */
export function lendHeld(holds: BlockHolds, blocks: Block[], blockSize: number, first: number, position: number, stop: number): Buffer[] {
  return lend(assemble(blocks, first * blockSize, position, stop), () => {
    for (const b of blocks) holds.release(b)
  })
}

/** Bytes [from, to) of the file out of consecutive blocks starting at byte `base`, as views into their parts. */
function assemble(blocks: Block[], base: number, from: number, to: number): Buffer[] {
  const out: Buffer[] = []
  let at = base
  for (const block of blocks) {
    const length = bytesLength(block)
    if (at + length > from && at < to) out.push(...sliceParts(block, Math.max(from, at) - at, Math.min(to, at + length) - at))
    at += length
  }
  return out
}
