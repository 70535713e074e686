import { randomBytes } from 'node:crypto'
import { mkdtemp, mkdir, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ReadPath } from '../../src/read/content.js'
import { RECORD_ALIGN } from '../../src/read/block-slots.js'
import { recordBytes } from '../../src/read/cache-records.js'
import { DiskBlockCache } from '../../src/read/disk-cache.js'
import type { ReadOptions } from '../../src/read/options.js'
import { MemorySource, SMALL_GRID } from './memory-source.js'
import { copyBytes, giveBack, toBuffer, type Bytes } from '../../src/read/bytes.js'

const KiB = 1024

let dir: string
const opened: ReadPath[] = []
async function create(source: MemorySource, options: Partial<ReadOptions>): Promise<ReadPath> {
  const rp = await ReadPath.create(source, options)
  opened.push(rp)
  return rp
}
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tfs-read-'))
})
afterEach(async () => {
  for (const rp of opened.splice(0)) await rp.flush()
  await rm(dir, { recursive: true, force: true, maxRetries: 5 })
})

const small = (): Partial<ReadOptions> => ({
  ...SMALL_GRID,
  memoryCacheBytes: 16 * KiB,
  diskCacheBytes: 10 * 1024 * KiB,
  diskCacheDir: dir,
})

async function bytesOnDisk(folder: string): Promise<number> {
  let total = 0
  for (const e of await readdir(folder, { withFileTypes: true, recursive: true })) {
    // a block evicted between the listing and the stat no longer counts
    if (e.isFile()) total += (await stat(join(e.parentPath, e.name)).catch(() => ({ size: 0 }))).size
  }
  return total
}

async function readAll(rp: ReadPath, file: Parameters<ReadPath['open']>[0], step = 8 * KiB): Promise<Buffer> {
  const h = rp.open(file)
  const parts: Buffer[] = []
  for (let pos = 0; pos < file.size; pos += step) parts.push(toBuffer(await h.read(pos, step)))
  h.close()
  return Buffer.concat(parts)
}

/** A file of `size` random bytes read once through a read path, so its blocks are in the disk cache. */
async function cachedOnDisk(size: number) {
  const source = new MemorySource()
  const data = randomBytes(size)
  const file = source.add('f', data)
  const first = await create(source, small())
  expect((await readAll(first, file)).equals(data)).toBe(true)
  await first.flush()
  return { source, block: SMALL_GRID.blockSize!, data, file }
}

describe('disk cache', () => {
  it('survives re-creating the read path on the same folder (and serves offline)', async () => {
    const source = new MemorySource()
    const data = randomBytes(300 * KiB)
    const file = source.add('f', data)
    const first = await create(source, small())
    expect((await readAll(first, file)).equals(data)).toBe(true)
    await first.flush()
    const sent = source.bytesSent
    source.offline = true
    const second = await create(source, small())
    expect(second.disk!.count).toBe(75)
    expect((await readAll(second, file)).equals(data)).toBe(true)
    expect(source.bytesSent).toBe(sent)
  })

  it.each([['whole blocks', 1], ['quarter blocks', 4]])('%s re-read from disk come in reused buffers, lent until given back: a held read keeps its bytes', async (_, split) => {
    const { source, block, data, file } = await cachedOnDisk(64 * SMALL_GRID.blockSize! + 100)
    const step = block / split
    source.offline = true
    const second = await create(source, small())
    const h = second.open(file)
    // One read at block 10 is held (not given back) while the rest of the file is read and given back.
    const heldAt = 10 * block + (split - 1) * step
    let held: Bytes | null = null
    // The buffers used, by their memory and where in it a block starts.
    const memories = new Map<ArrayBufferLike, number>()
    const buffers = new Set<string>()
    for (let pos = 0; pos < data.length; pos += step) {
      const got = await h.read(pos, step)
      const out = Buffer.alloc(step)
      const n = copyBytes(got, out)
      expect(out.subarray(0, n).equals(data.subarray(pos, pos + step))).toBe(true)
      if (pos === heldAt) {
        held = got
        continue
      }
      if (pos > block) {
        const part = (got as Buffer[])[0]!
        if (!memories.has(part.buffer)) memories.set(part.buffer, memories.size)
        buffers.add(`${memories.get(part.buffer)}:${part.byteOffset - (pos % block)}`)
      }
      giveBack(got)
    }
    h.close()
    // The held read's bytes were never written over, and the other blocks shared a few buffers.
    expect(toBuffer(held!).equals(data.subarray(heldAt, heldAt + step))).toBe(true)
    expect(buffers.size).toBeLessThanOrEqual(12)
  })

  it('parts of a block the re-read holds are answered at once, not through a promise', async () => {
    const { source, block, data, file } = await cachedOnDisk(16 * SMALL_GRID.blockSize!)
    const step = block / 4
    source.offline = true
    const second = await create(source, small())
    const h = second.open(file)
    for (let pos = 0; pos < data.length; pos += step) {
      const answer = h.read(pos, step)
      // Past the first block (a run's first read is not yet sequential, its second starts the
      // stream), the first part of each block may wait for its load; the other three come
      // from the held block.
      if (pos >= block && pos % block !== 0) expect(answer).not.toBeInstanceOf(Promise)
      const got = await answer
      expect(toBuffer(got).equals(data.subarray(pos, pos + step))).toBe(true)
      giveBack(got)
    }
    h.close()
  })

  it('regression: a block missing from the disk cache does not keep the rest of a re-read off the stream', async () => {
    const damaged = 5
    const { source, block, data, file } = await cachedOnDisk(40 * SMALL_GRID.blockSize!)
    const step = block / 4
    // The block's bytes damaged on disk: it fails its check and is fetched again.
    const root = join(dir, 'blocks-v5')
    const segment = join(root, (await readdir(root))[0]!, '0.seg')
    const bytes = await readFile(segment)
    for (let at = 0; at < bytes.length; at += recordBytes(bytes.readUInt32BE(at + 4))) {
      if (bytes.readUInt32BE(at) === damaged) bytes[at + RECORD_ALIGN + 7]! ^= 0xff
    }
    await writeFile(segment, bytes)
    // A memory cache that could hold the whole file: blocks loaded into it stay there.
    const second = await create(source, { ...small(), memoryCacheBytes: 4 * 1024 * KiB })
    const h = second.open(file)
    const before = source.bytesSent
    for (let pos = 0; pos < data.length; pos += step) {
      const answer = h.read(pos, step)
      // Well past the damaged block, parts of held blocks come at once again.
      if (pos >= 16 * block && pos % block !== 0) expect(answer).not.toBeInstanceOf(Promise)
      const got = await answer
      expect(toBuffer(got).equals(data.subarray(pos, pos + step))).toBe(true)
      giveBack(got)
    }
    h.close()
    // Only the damaged block's neighbourhood came from the service again.
    expect(source.bytesSent - before).toBeGreaterThan(0)
    expect(source.bytesSent - before).toBeLessThanOrEqual(SMALL_GRID.pieceSize!)
  })

  it.each([['whole blocks', 1], ['quarter blocks', 4]])('regression: a re-read (%s) whose first blocks are not in the disk cache takes the rest from the disk stream, not through memory', async (_, split) => {
    const { source, block, data, file } = await cachedOnDisk(40 * SMALL_GRID.blockSize!)
    // The records of blocks 0 and 1 renamed to blocks past the file: the rebuilt index lacks
    // them, as when a cold read's first bytes came as a span (not cached) or its write backlog
    // dropped them. They are fetched again, and the reader is sequential by the time it
    // reaches the blocks on disk.
    const root = join(dir, 'blocks-v5')
    const segment = join(root, (await readdir(root))[0]!, '0.seg')
    const bytes = await readFile(segment)
    for (let at = 0; at < bytes.length; at += recordBytes(bytes.readUInt32BE(at + 4))) {
      const b = bytes.readUInt32BE(at)
      if (b < 2) bytes.writeUInt32BE(1000 + b, at)
    }
    await writeFile(segment, bytes)
    // A memory cache that could hold the whole file: blocks loaded into it stay there.
    const second = await create(source, { ...small(), memoryCacheBytes: 4 * 1024 * KiB })
    expect([0, 1, 2].map((b) => second.disk!.has(file.cacheKey, b))).toEqual([false, false, true])
    const intoMemory = vi.spyOn(second, 'loadFromDisk')
    const h = second.open(file)
    const before = source.bytesSent
    const step = block / split
    for (let pos = 0; pos < data.length; pos += step) {
      const got = await h.read(pos, step)
      expect(toBuffer(got).equals(data.subarray(pos, pos + step))).toBe(true)
      giveBack(got)
      // A reader's next read comes a round trip through the kernel later: loads from the
      // disk started meanwhile have landed by then.
      await new Promise((r) => setTimeout(r, 2))
    }
    h.close()
    expect(source.bytesSent - before).toBeGreaterThanOrEqual(2 * block)
    expect(source.bytesSent - before).toBeLessThanOrEqual(3 * block)
    // The blocks on disk were lent from the stream's own buffers, none loaded into memory
    // (each a copy out of a staging buffer and a fresh buffer for the collector): in memory,
    // each kept the next read off the stream, to the end of the file.
    expect(intoMemory).not.toHaveBeenCalled()
    expect(second.memory.count).toBeLessThanOrEqual(3)
  })

  it.each([['whole blocks', 1], ['quarter blocks', 4]])('a sequential cold read (%s) keeps only its last blocks in memory, the disk cache the rest', async (_, split) => {
    const source = new MemorySource()
    const block = SMALL_GRID.blockSize!
    const data = randomBytes(512 * block)
    const file = source.add('f', data)
    // Memory for the whole file, were every block kept.
    const rp = await create(source, { ...small(), memoryCacheBytes: 8 * 1024 * KiB })
    const h = rp.open(file)
    for (let pos = 0; pos < data.length; pos += block / split) {
      const got = await h.read(pos, block / split)
      expect(toBuffer(got).equals(data.subarray(pos, pos + block / split))).toBe(true)
      giveBack(got)
    }
    h.close()
    await rp.flush()
    // The last 32 blocks read (consumedBlockBytes), whether they came from memory or from the
    // fetch they waited on, and the run's first block (read before the run was seen: kept as random).
    expect(rp.memory.bytes).toBeLessThanOrEqual(33 * block)
    expect(rp.disk!.count).toBe(512)
  })

  it('a changed cacheKey never returns old bytes', async () => {
    const source = new MemorySource()
    const v1 = source.add('f', Buffer.alloc(40 * KiB, 1), { key: 'v1' })
    const rp1 = await create(source, small())
    expect((await readAll(rp1, v1))[0]).toBe(1)
    await rp1.flush()
    const v2 = source.add('f', Buffer.alloc(40 * KiB, 2), { key: 'v2' })
    const rp2 = await create(source, small())
    const got = await readAll(rp2, v2)
    expect(got.equals(Buffer.alloc(40 * KiB, 2))).toBe(true)
    // and with the service gone, the new version is simply not there
    source.offline = true
    const v3 = { ...v2, cacheKey: 'v3' }
    await expect(rp2.open(v3).read(0, 10)).rejects.toThrow()
  })

  it('the byte budget is never exceeded, on disk or in memory', async () => {
    const source = new MemorySource()
    const data = randomBytes(1024 * KiB)
    const file = source.add('f', data)
    const budget = 50 * KiB
    const rp = await create(source, { ...small(), diskCacheBytes: budget })
    const h = rp.open(file)
    for (let pos = 0; pos < data.length; pos += 16 * KiB) {
      expect((toBuffer(await h.read(pos, 16 * KiB))).equals(data.subarray(pos, pos + 16 * KiB))).toBe(true)
      expect(rp.disk!.bytes).toBeLessThanOrEqual(budget)
      expect(await bytesOnDisk(dir)).toBeLessThanOrEqual(budget)
      expect(rp.memory.bytes).toBeLessThanOrEqual(16 * KiB)
    }
    await rp.flush()
    expect(await bytesOnDisk(dir)).toBeLessThanOrEqual(budget)
    expect(rp.disk!.count).toBeGreaterThan(0)
    // a smaller budget at the next start trims what is there
    const trimmed = await create(source, { ...small(), diskCacheBytes: 20 * KiB })
    expect(await bytesOnDisk(dir)).toBeLessThanOrEqual(20 * KiB)
    expect(trimmed.disk!.bytes).toBeLessThanOrEqual(20 * KiB)
  })

  it('leftovers of a crash (stray names, a segment cut short, a torn record) are never served', async () => {
    const source = new MemorySource()
    const data = randomBytes(64 * KiB)
    const file = source.add('f', data)
    const rp = await create(source, small())
    await readAll(rp, file)
    await rp.flush()
    const root = join(dir, 'blocks-v5')
    const folder = join(root, (await readdir(root))[0]!)
    const segment = join(folder, '0.seg')
    // Its records in file order: a header page (block index, length, the check), then the bytes.
    const bytes = await readFile(segment)
    const records: Array<{ block: number; at: number; length: number }> = []
    for (let at = 0; at < bytes.length; at += recordBytes(bytes.readUInt32BE(at + 4))) {
      records.push({ block: bytes.readUInt32BE(at), at, length: bytes.readUInt32BE(at + 4) })
    }
    expect(records.map((r) => r.block).sort((a, b) => a - b)).toEqual([...Array(16).keys()])
    await writeFile(join(folder, '3.seg.tmp'), 'x')
    await writeFile(join(root, 'stray'), 'x')
    // A record whose length is right but whose bytes are not (a crash before they reached the disk).
    const torn = records[2]!
    bytes[torn.at + RECORD_ALIGN + 100] = bytes[torn.at + RECORD_ALIGN + 100]! ^ 0xff
    // The last record cut short.
    const last = records[records.length - 1]!
    await writeFile(segment, bytes.subarray(0, last.at + RECORD_ALIGN + 100))
    const again = await create(source, small())
    expect(await readdir(root)).not.toContain('stray')
    expect(await readdir(folder)).toEqual(['0.seg'])
    const before = source.bytesSent
    expect((await readAll(again, file)).equals(data)).toBe(true)
    // only the torn and the cut block came from the service again
    expect(source.bytesSent - before).toBe(2 * 4 * KiB)
  })

  it('blocks of the earlier layouts (a file per block; segments checked by CRC-32; records not page-aligned) are removed, without the cache waiting for it', async () => {
    const old = join(dir, 'blocks-v2', 'abc')
    await mkdir(old, { recursive: true })
    for (let i = 0; i < 50; i++) await writeFile(join(old, `${i}.blk`), randomBytes(100))
    await mkdir(join(dir, 'blocks-v3', 'def'), { recursive: true })
    await writeFile(join(dir, 'blocks-v3', 'def', '0.seg'), randomBytes(100))
    await mkdir(join(dir, 'blocks-v4', 'def'), { recursive: true })
    await writeFile(join(dir, 'blocks-v4', 'def', '0.seg'), randomBytes(100))
    const cache = await DiskBlockCache.open(dir, 1024 * KiB)
    expect(cache.count).toBe(0)
    await cache.flush()
    expect(await readdir(dir)).toEqual(['blocks-v5'])
  })

  it('eviction never removes a block being read', async () => {
    await mkdir(dir, { recursive: true })
    // Room for one 4 KiB block's record.
    const budget = recordBytes(4 * KiB)
    const cache = await DiskBlockCache.open(dir, budget)
    const a = randomBytes(4 * KiB)
    await cache.put('k', 0, [a])
    expect(cache.has('k', 0)).toBe(true)
    const reading = cache.get('k', 0, a.length)
    // needs the room block 0 holds, while block 0 is being read
    const writing = cache.put('k', 1, [randomBytes(4 * KiB)])
    expect((await reading)!.equals(a)).toBe(true)
    await writing
    expect(cache.has('k', 0)).toBe(true)
    expect(cache.has('k', 1)).toBe(false)
    // once nobody reads it, it can go
    await cache.put('k', 2, [randomBytes(4 * KiB)])
    expect(cache.has('k', 0)).toBe(false)
    expect(cache.has('k', 2)).toBe(true)
    expect(await bytesOnDisk(dir)).toBeLessThanOrEqual(budget)
  })
})

/** The files below `folder` this process holds open; deleted ones end in " (deleted)". */
async function openFilesIn(folder: string): Promise<string[]> {
  const out: string[] = []
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '')
    if (target.startsWith(folder)) out.push(target)
  }
  return out
}

describe('disk cache open files', () => {
  it('keeps at most 16 segment files open, and closes evicted ones so their space is freed', async () => {
    await mkdir(dir, { recursive: true })
    // One 4 KiB block in each of 40 segments, room for 8: most are evicted while their file would still be among the 16 open.
    const block = 4 * KiB
    const cache = await DiskBlockCache.open(dir, 8 * recordBytes(block))
    const data = new Map<number, Buffer>()
    for (let b = 0; b < 40 * 16; b += 16) {
      data.set(b, randomBytes(block))
      await cache.put('k', b, [data.get(b)!])
      expect((await cache.get('k', b, block))!.equals(data.get(b)!)).toBe(true)
      expect((await openFilesIn(dir)).length).toBeLessThanOrEqual(16)
    }
    const open = await openFilesIn(dir)
    expect(open.length).toBeGreaterThan(0)
    expect(open.filter((f) => f.endsWith(' (deleted)'))).toEqual([])
    expect(await bytesOnDisk(dir)).toBeLessThanOrEqual(8 * recordBytes(block))
    expect(cache.has('k', 0)).toBe(false)
    await cache.flush()
    expect(await openFilesIn(dir)).toEqual([])
  })
})

describe('disk cache folder unusable', () => {
  it('reads still work from memory and the error is kept for the caller', async () => {
    const source = new MemorySource()
    const data = randomBytes(20 * KiB)
    const file = source.add('f', data)
    const blocker = join(dir, 'a-file')
    await writeFile(blocker, 'not a folder')
    const rp = await ReadPath.create(source, { ...small(), diskCacheDir: join(blocker, 'cache') })
    expect(rp.disk).toBeNull()
    expect(rp.diskCacheError).toBeInstanceOf(Error)
    expect((toBuffer(await rp.open(file).read(0, 20 * KiB))).equals(data)).toBe(true)
  })
})
