// The disk cache moves blocks with O_DIRECT, straight between their slots and the disk,
// past the page cache; where the file system refuses O_DIRECT it goes through the page
// cache with the same records. What the page cache holds of a segment is asked of the
// kernel (fincore); the refusing file system is a real ramfs, mounted for the test.
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BlockBuffers } from '../../src/read/block-buffers.js'
import { blockSlots, RECORD_ALIGN } from '../../src/read/block-slots.js'
import { recordBytes } from '../../src/read/cache-records.js'
import { DiskBlockCache } from '../../src/read/disk-cache.js'
import type { Block } from '../../src/read/memory-cache.js'

const run = promisify(execFile)
const KiB = 1024
const BLOCK = 64 * KiB

let dir: string
const mounted: string[] = []
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tfs-direct-'))
})
afterEach(async () => {
  for (const m of mounted.splice(0)) await run('umount', ['-l', m]).catch(() => {})
  await rm(dir, { recursive: true, force: true, maxRetries: 5 })
})

/** Bytes of the segments below `folder` that the page cache holds. */
async function residentBytes(folder: string): Promise<number> {
  let total = 0
  for (const e of await readdir(folder, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue
    const { stdout } = await run('fincore', ['-b', '-n', '-r', '-o', 'RES', join(e.parentPath, e.name)])
    total += Number(stdout.trim())
  }
  return total
}

/** `count` blocks of random bytes, each in a pooled fetch buffer (a slot), as the fetcher hands them on. */
function fetchedBlocks(count: number, lastLength = BLOCK): { pool: BlockBuffers; blocks: Block[]; bytes: Buffer[] } {
  const pool = new BlockBuffers(BLOCK)
  const bytes = Array.from({ length: count }, (_, i) => randomBytes(i === count - 1 ? lastLength : BLOCK))
  const blocks = bytes.map((b) => {
    const buffer = pool.take()
    b.copy(buffer.memory)
    return pool.seal(buffer, b.length)
  })
  return { pool, blocks, bytes }
}

/** Puts the blocks, then opens the cache afresh (its index rebuilt from the records) and reads each back into a slot. */
async function roundTrip(folder: string, blocks: Block[], bytes: Buffer[]): Promise<void> {
  const cache = await DiskBlockCache.open(folder, 64 * 1024 * KiB)
  await Promise.all(blocks.map((b, i) => cache.put('k', i, b)))
  await cache.flush()
  expect(cache.count).toBe(blocks.length)
  return checkBack(folder, bytes)
}

async function checkBack(folder: string, bytes: Buffer[]): Promise<void> {
  const again = await DiskBlockCache.open(folder, 64 * 1024 * KiB)
  const into = blockSlots(1, BLOCK, false)[0]!
  for (let i = 0; i < bytes.length; i++) {
    const got = await again.get('k', i, bytes[i]!.length, into)
    expect(got?.equals(bytes[i]!)).toBe(true)
    // Read into the slot given, not somewhere else and copied.
    expect(got!.buffer).toBe(into.buffer)
    expect(got!.byteOffset).toBe(into.byteOffset)
  }
  // And into no slot at all (a read of part of a block): the same bytes.
  expect((await again.get('k', 0, bytes[0]!.length))?.equals(bytes[0]!)).toBe(true)
  await again.flush()
}

describe('disk cache I/O', () => {
  it('blocks in slots are written and read past the page cache, and come back the same', async () => {
    const { blocks, bytes } = fetchedBlocks(20, 5000)
    const cache = await DiskBlockCache.open(dir, 64 * 1024 * KiB)
    await Promise.all(blocks.map((b, i) => cache.put('k', i, b)))
    await cache.flush()
    expect(cache.count).toBe(20)
    // Written with O_DIRECT: none of the 1.3 MiB is in the page cache.
    expect(await residentBytes(dir)).toBe(0)
    await checkBack(dir, bytes)
    // Read back with O_DIRECT too, the index rebuilt from the records' headers likewise.
    expect(await residentBytes(dir)).toBe(0)
  })

  it('blocks not in a slot (in parts, or in plain buffers) are staged and stored alike', async () => {
    const bytes = [randomBytes(BLOCK), randomBytes(BLOCK), randomBytes(100)]
    const blocks = [[bytes[0]!], [bytes[1]!.subarray(0, 1000), bytes[1]!.subarray(1000)], [bytes[2]!]]
    await roundTrip(dir, blocks, bytes)
    expect(await residentBytes(dir)).toBe(0)
  })

  it('a record is a header page and the bytes padded to a page, so every one starts on a page', async () => {
    const { blocks } = fetchedBlocks(3, 5000)
    const cache = await DiskBlockCache.open(dir, 64 * 1024 * KiB)
    for (const [i, b] of blocks.entries()) await cache.put('k', i, b)
    await cache.flush()
    const root = join(dir, 'blocks-v5')
    const { stdout } = await run('stat', ['-c', '%s', join(root, (await readdir(root))[0]!, '0.seg')])
    expect(Number(stdout)).toBe(2 * recordBytes(BLOCK) + recordBytes(5000))
    expect(recordBytes(5000)).toBe(RECORD_ALIGN + 8192)
  })

  it('blocks that wait for the disk together go to it in one write per segment, and come back the same', async () => {
    const MiB = 1024 * KiB
    const pool = new BlockBuffers(MiB)
    const bytes = Array.from({ length: 30 }, () => randomBytes(MiB))
    const cache = await DiskBlockCache.open(dir, 64 * MiB)
    // A burst, as a piece's blocks come from the network: 30 MiB waiting at once.
    const writes = bytes.map((b, i) => {
      const buffer = pool.take()
      b.copy(buffer.memory)
      return cache.put('k', i, pool.seal(buffer, b.length))
    })
    await Promise.all(writes)
    await cache.flush()
    expect(cache.count).toBe(30)
    // Two segments of 16 blocks: the first write of each found one block waiting, the next the rest.
    expect(cache.writeCount).toBeLessThanOrEqual(4)
    expect(await residentBytes(dir)).toBe(0)
    // One block alone is written at once, not held back for company.
    await cache.put('k', 40, [randomBytes(4 * KiB)])
    expect(cache.writeCount).toBeLessThanOrEqual(5)
    expect(cache.has('k', 40)).toBe(true)
    const again = await DiskBlockCache.open(dir, 64 * MiB)
    for (let i = 0; i < 30; i++) expect((await again.get('k', i, MiB))?.equals(bytes[i]!)).toBe(true)
  })

  it('on a file system that refuses O_DIRECT (ramfs), the same records go through the page cache', async () => {
    const ram = join(dir, 'ram')
    await mkdir(ram)
    await run('mount', ['-t', 'ramfs', 'ramfs', ram])
    mounted.push(ram)
    // The refusal is real: ramfs answers an O_DIRECT open with EINVAL.
    await expect(run('dd', ['if=/dev/zero', `of=${join(ram, 'probe')}`, 'bs=4096', 'count=1', 'oflag=direct'])).rejects.toThrow(/Invalid argument/)
    const { blocks, bytes } = fetchedBlocks(20, 5000)
    await roundTrip(ram, blocks, bytes)
    const plain = [randomBytes(BLOCK), randomBytes(300)]
    await rm(join(ram, 'blocks-v5'), { recursive: true })
    await roundTrip(ram, plain.map((b) => [b]), plain)
  })
})
