// How far a sequential reader's prefetch reaches, with the link's rate given: no further than
// the link delivers in the horizon plus a piece on a slow link, as far as the run has earned
// on a fast one; and where it goes on from when a read of the run comes past it. The read
// path over an in-memory source; the rate is set by the test.
import { describe, expect, it } from 'vitest'
import { ReadPath } from '../../src/read/content.js'
import { toBuffer } from '../../src/read/bytes.js'
import { linkLookahead } from '../../src/read/link-rate.js'
import { DEFAULT_READ_OPTIONS } from '../../src/read/options.js'
import { numberedFile } from './memory-source.js'

const KiB = 1024
const MiB = 1024 * KiB
const MB = 1e6

/** A 120 MiB file opened with the link's rate taken as `rate`. */
async function openWithRate(rate: number | null) {
  const { source, data, file } = numberedFile(120 * MiB)
  const rp = await ReadPath.create(source, { memoryCacheBytes: 256 * MiB })
  Object.defineProperty(rp.fetcher.linkRate, 'bytesPerSecond', { get: () => rate })
  const h = rp.open(file)
  /** Reads of `step` bytes at each of `at`, all at once (the kernel's readahead in flight), each checked. */
  const readTogether = async (at: number[], step: number) => {
    const got = await Promise.all(at.map((p) => Promise.resolve(h.read(p, step))))
    got.forEach((g, k) => expect(toBuffer(g).equals(data.subarray(at[k]!, at[k]! + step))).toBe(true))
  }
  return { source, data, h, readTogether }
}

/** Reads the first `upTo` bytes of a 120 MiB file as the kernel does (four 128 KiB reads at a time) with the link's rate taken as `rate`; the ranges asked. */
async function readWithRate(rate: number | null, upTo: number): Promise<Array<{ start: number; end: number }>> {
  const { source, h, readTogether } = await openWithRate(rate)
  const step = 128 * KiB
  for (let pos = 0; pos < upTo; pos += 4 * step) await readTogether([0, 1, 2, 3].map((k) => pos + k * step), step)
  await new Promise((r) => setTimeout(r, 50))
  const ranges = source.ranges.map(({ start, end }) => ({ start, end }))
  h.close()
  return ranges
}

describe('the prefetch and the link', () => {
  const { chunkSize } = DEFAULT_READ_OPTIONS
  const read = 30 * MiB

  it('through a slow link it asks nothing past what the link delivers in the horizon, plus a piece (or the kernel readahead)', async () => {
    const rate = 4 * MB
    const ranges = await readWithRate(rate, read)
    const reach = read + linkLookahead(rate, 1, DEFAULT_READ_OPTIONS)
    expect(Math.max(...ranges.map((r) => r.start))).toBeLessThan(reach)
    // The chunk after the one being read is not asked yet.
    expect(ranges.filter((r) => r.start >= chunkSize)).toEqual([])
  })

  it('through a fast link it fetches as far ahead as the run has earned', async () => {
    const ranges = await readWithRate(1000 * MB, read)
    // Having read 30 MiB the run keeps 60 MiB ahead: into the next chunk.
    expect(ranges.filter((r) => r.start >= chunkSize).length).toBeGreaterThan(0)
  })

  it('before the link has been measured, likewise', async () => {
    const ranges = await readWithRate(null, read)
    expect(ranges.filter((r) => r.start >= chunkSize).length).toBeGreaterThan(0)
  })
})

describe('the prefetch and reads far ahead of it', () => {
  it('a read of the kernel\'s readahead far past the prefetch: the blocks between are fetched on the chunk grid, not one fetch per read as their reads come in any order', async () => {
    // A slow link keeps the prefetch short of what the run may read ahead, as at a 1 GiB readahead.
    const { source, data, h, readTogether } = await openWithRate(4 * MB)
    const step = 1 * MiB
    /** Eight 1 MiB reads at once, answered last first (libfuse 3's reads of the kernel's readahead). */
    const batch = (pos: number) => readTogether([7, 6, 5, 4, 3, 2, 1, 0].map((k) => pos + k * step), step)
    for (let pos = 0; pos < 32 * MiB; pos += 8 * step) await batch(pos)
    const before = source.ranges.length
    // Within the run's lookahead (twice what it read), past what the link lets it fetch ahead.
    expect(toBuffer(await h.read(70 * MiB, step)).equals(data.subarray(70 * MiB, 71 * MiB))).toBe(true)
    for (let pos = 32 * MiB; pos < 80 * MiB; pos += 8 * step) await batch(pos)
    h.close()
    const after = source.ranges.slice(before).map((r) => `${r.start / MiB}-${r.end / MiB}`)
    // The far read's own (to the chunk's end), then from where the prefetch had come to, in
    // order and on the 50 MiB grid: no range of a single block.
    expect(after[0]).toBe('70-100')
    expect(after.length).toBeLessThanOrEqual(3)
    expect(after.slice(1).sort()).toEqual(after.slice(1))
    expect(after.filter((r) => r.split('-').map(Number).reduce((a, b) => b - a) === 1)).toEqual([])
  })
})
