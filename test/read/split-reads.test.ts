// A large read that the kernel cuts into pieces, against the real local service over
// HTTPS: libfuse 2 passes at most 128 KiB per request, so a 1 MiB read arrives as eight
// reads one after another. The first of them, at a block's start, fetches the whole block
// in one verified range; the other seven are served from it. The service's counters tell
// every range and hash asked; small random reads still fetch only their own span.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { TransferClient } from '../../src/api/client.js'
import { giveBack, toBuffer, type Bytes } from '../../src/read/bytes.js'
import { ReadPath } from '../../src/read/content.js'
import { DEFAULT_READ_OPTIONS } from '../../src/read/options.js'
import { ServiceRangeSource } from '../../src/read/service-source.js'
import type { LentAhead, RemoteFile } from '../../src/read/source.js'
import { remoteFileOf } from '../../src/vfs/transfer-tree.js'
import { bytes, putTransfer } from '../cli/harness.js'
import { startTestService, type TestService } from '../support/service.js'

const KiB = 1024
const MiB = 1024 * KiB
/** libfuse 2's largest request. */
const PIECE = 128 * KiB

let service: TestService
let client: TransferClient
let data: Buffer
let file: RemoteFile

beforeAll(async () => {
  service = await startTestService()
  client = new TransferClient({ apiUrl: service.baseUrl, apiKey: service.apiKey, ca: service.caPem })
  await client.auth.login(service.user.email, service.user.password)
  data = bytes(8 * MiB, 7)
  const t = await putTransfer(client, [{ name: 'big.bin', data }], { subject: 'split reads', to: [service.user.email] })
  const details = await client.transfers.details(t.id, { filesLimit: -1 })
  file = remoteFileOf(details, details.files[0]!)
})

afterAll(async () => {
  await client?.close()
  await service?.close()
})

/** Ranges and range hashes asked of the service since the last reset. */
async function asked(): Promise<{ download: number; rangehash: number; bytesServed: number }> {
  const c = await service.controls.counters()
  return { download: c.routes.download ?? 0, rangehash: c.routes.rangehash ?? 0, bytesServed: c.bytesServed }
}

/** Reads [from, from + length) as the kernel passes it on libfuse 2: 128 KiB requests, one after another. */
async function readInPieces(read: (at: number, n: number) => Promise<unknown>, from: number, length: number): Promise<Buffer> {
  const out: Buffer[] = []
  for (let at = from; at < from + length; at += PIECE) out.push(toBuffer(await read(at, Math.min(PIECE, from + length - at)) as never))
  return Buffer.concat(out)
}

let rp: ReadPath
beforeEach(async () => {
  rp = await ReadPath.create(new ServiceRangeSource(client))
  await service.controls.resetCounters()
})

describe('a 1 MiB read cut into 128 KiB requests', () => {
  it('at a block boundary past the head: one range and one hash for all eight, the right bytes', async () => {
    expect(DEFAULT_READ_OPTIONS.blockSize).toBe(MiB)
    const h = rp.open(file)
    const from = 5 * MiB
    const got = await readInPieces(async (at, n) => h.read(at, n), from, MiB)
    h.close()
    expect(got.equals(data.subarray(from, from + MiB))).toBe(true)
    expect(await asked()).toEqual({ download: 1, rangehash: 1, bytesServed: MiB })
    // The block is kept: read again, it asks nothing.
    const again = rp.open(file)
    expect(toBuffer(await again.read(from + 3 * PIECE, PIECE)).equals(data.subarray(from + 3 * PIECE, from + 4 * PIECE))).toBe(true)
    again.close()
    expect((await asked()).download).toBe(1)
  })

  it('away from block boundaries: the first request its own span, then whole blocks (3 ranges, not 8)', async () => {
    const h = rp.open(file)
    const from = 3 * MiB + 512 * KiB
    const got = await readInPieces(async (at, n) => h.read(at, n), from, MiB)
    h.close()
    expect(got.equals(data.subarray(from, from + MiB))).toBe(true)
    const n = await asked()
    expect([n.download, n.rangehash]).toEqual([3, 3])
  })

  it('a small random read still fetches only its own 4 KiB', async () => {
    const h = rp.open(file)
    const at = 6 * MiB + 40 * KiB
    expect(toBuffer(await h.read(at, 4 * KiB)).equals(data.subarray(at, at + 4 * KiB))).toBe(true)
    h.close()
    expect(await asked()).toEqual({ download: 1, rangehash: 1, bytesServed: 4 * KiB })
  })

  it('a whole-block read leaves nothing in the block for a read to follow: its own span, not cached', async () => {
    const h = rp.open(file)
    const from = 4 * MiB
    expect(toBuffer(await h.read(from, MiB)).equals(data.subarray(from, from + MiB))).toBe(true)
    h.close()
    expect(await asked()).toEqual({ download: 1, rangehash: 1, bytesServed: MiB })
    expect(rp.stats.spans).toBe(1)
    expect(rp.memory.count).toBe(0)
  })

  it('eight 128 KiB requests of one block at once share one fetch', async () => {
    const h = rp.open(file)
    const from = 2 * MiB
    const parts = await Promise.all(Array.from({ length: 8 }, (_, i) => Promise.resolve(h.read(from + i * PIECE, PIECE))))
    h.close()
    expect(Buffer.concat(parts.map((p) => toBuffer(p))).equals(data.subarray(from, from + MiB))).toBe(true)
    // The first, at the block's start, starts the block's fetch; the rest join it.
    expect(await asked()).toEqual({ download: 1, rangehash: 1, bytesServed: MiB })
  })
})

/** Polls until `cond` holds (true) or a second has passed (false). */
async function waitUntil(cond: () => boolean): Promise<boolean> {
  for (let i = 0; i < 100 && !cond(); i++) await new Promise((r) => setTimeout(r, 10))
  return cond()
}

/** Bytes as one buffer, given back to the read path once copied (as the FUSE adapter does). */
function taken(bytes: Bytes | undefined): Buffer | undefined {
  if (bytes === undefined) return undefined
  const copy = Buffer.from(toBuffer(bytes))
  giveBack(bytes)
  return copy
}

/** What was lent ahead, each copied and given back: [start, end) of the file and the bytes. */
function takenAhead(ahead: LentAhead[] | undefined): Array<{ start: number; end: number; bytes: Buffer }> {
  return (ahead ?? []).map(({ start, bytes }) => {
    const copy = taken(bytes)!
    return { start, end: start + copy.length, bytes: copy }
  })
}

describe('the bytes after a read, lent ahead (what the FUSE adapter lends libfuse\'s threads)', () => {
  it('a run under way in 128 KiB reads: the rest of the block and two blocks past it but for one read, right; nothing fetched for them, and the run moves on at the read after them', async () => {
    const h = rp.open(file)
    // Two blocks and a piece in 128 KiB requests make a run that prefetches to block 6 of 8.
    await readInPieces(async (at, n) => h.read(at, n), 0, 2 * MiB + PIECE)
    const last = data.length / MiB - 1
    expect(await waitUntil(() => rp.cached(file, 4))).toBe(true)
    expect(rp.present(file, last)).toBe(false)
    const ahead = takenAhead(h.lendAhead!(PIECE))
    // From the furthest read: the rest of its block, the next, and the one after but for its last read, each a window of its own.
    expect(ahead.map(({ start, end }) => [start, end])).toEqual([[2 * MiB + PIECE, 3 * MiB], [3 * MiB, 4 * MiB], [4 * MiB, 5 * MiB - PIECE]])
    for (const { start, end, bytes: got } of ahead) expect(got.equals(data.subarray(start, end)), `lent from ${start}`).toBe(true)
    // Lent, not read: the run's prefetch has not moved.
    expect(rp.present(file, last)).toBe(false)
    // The read left out (libfuse's threads answered the ones lent) carries the run on.
    const next = taken(await h.read(5 * MiB - PIECE, PIECE))
    expect(next?.equals(data.subarray(5 * MiB - PIECE, 5 * MiB))).toBe(true)
    expect(rp.present(file, last)).toBe(true)
    h.close()
    expect(rp.stats.spans).toBe(0)
  })

  it('a read sent with others and answered first, ahead of them: the bytes lent start at the furthest read, whichever read was answered last', async () => {
    const h = rp.open(file)
    await readInPieces(async (at, n) => h.read(at, n), 0, 2 * MiB)
    expect(await waitUntil(() => rp.cached(file, 4))).toBe(true)
    // The kernel's readahead answered out of order: the block's last read first.
    taken(await h.read(3 * MiB - PIECE, PIECE))
    const afterFurthest = takenAhead(h.lendAhead!(PIECE))
    taken(await h.read(2 * MiB, PIECE))
    const afterEarlier = takenAhead(h.lendAhead!(PIECE))
    expect(afterFurthest.map(({ start, end }) => [start, end])).toEqual([[3 * MiB, 4 * MiB], [4 * MiB, 5 * MiB - PIECE]])
    expect(afterEarlier.map(({ start, end }) => [start, end])).toEqual(afterFurthest.map(({ start, end }) => [start, end]))
    h.close()
  })

  it('regression: a read sent before the windows and answered after them, as far behind as the slack allows, is still part of the run', async () => {
    // The kernel's readahead has many reads in flight; one answered late lags behind the others.
    const slack = 2 * MiB
    const lean = await ReadPath.create(new ServiceRangeSource(client), { sequentialSlack: slack })
    const h = lean.open(file)
    await readInPieces(async (at, n) => h.read(at, n), 0, 3 * MiB + PIECE)
    takenAhead(h.lendAhead!(PIECE))
    // Within the slack of the furthest read, not of the windows' end: counting them as read made this a jump.
    const lag = 3 * MiB + PIECE - slack + PIECE
    expect(taken(await h.read(lag, PIECE))?.equals(data.subarray(lag, lag + PIECE))).toBe(true)
    // Still the run: a read past the windows is lent ahead of, as a run's is.
    taken(await h.read(4 * MiB, PIECE))
    const ahead = takenAhead(h.lendAhead!(PIECE))
    expect(ahead[0]?.start).toBe(4 * MiB + PIECE)
    expect(ahead[0]?.bytes.equals(data.subarray(4 * MiB + PIECE, 5 * MiB))).toBe(true)
    h.close()
  })

  it('nothing when the run is not under way, a whole-block reader is at a block\'s end, or the handle closed; nothing asked of the service', async () => {
    const h = rp.open(file)
    // A first read: no run yet.
    taken(await h.read(0, PIECE))
    expect(h.lendAhead!(PIECE)).toBeUndefined()
    await readInPieces(async (at, n) => h.read(at, n), PIECE, 3 * MiB - PIECE)
    expect(await waitUntil(() => rp.cached(file, 4))).toBe(true)
    // A reader of whole blocks (libfuse 3's 1 MiB requests) at a block's end: its next read is the whole next block, nothing is lent.
    expect(h.lendAhead!(MiB)).toBeUndefined()
    // Past a block's start, the rest of that block only.
    taken(await h.read(3 * MiB, PIECE))
    expect(takenAhead(h.lendAhead!(MiB)).map(({ start, end }) => [start, end])).toEqual([[3 * MiB + PIECE, 4 * MiB]])
    h.close()
    expect(h.lendAhead!(PIECE)).toBeUndefined()
    // A handle with no run, where nobody fetched: nothing is lent, and nothing is asked of the service.
    const cold = rp.open(file)
    await service.controls.resetCounters()
    expect(cold.lendAhead!(PIECE)).toBeUndefined()
    cold.close()
    expect((await asked()).download).toBe(0)
  })

  it('from the disk cache: the rest of the block the disk stream holds, and the right bytes to the end of the file', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'tfs-ahead-'))
    try {
      const options = { diskCacheDir: dir, diskCacheBytes: 64 * MiB }
      const first = await ReadPath.create(new ServiceRangeSource(client), options)
      const warm = first.open(file)
      await readInPieces(async (at, n) => warm.read(at, n), 0, data.length)
      warm.close()
      await first.flush()
      // A new read path over the same disk cache: its memory is empty, the blocks come from disk.
      const again = await ReadPath.create(new ServiceRangeSource(client), options)
      await service.controls.resetCounters()
      const h = again.open(file)
      const out: Buffer[] = []
      let lentAhead = 0
      for (let at = 0; at < data.length;) {
        out.push(taken(await h.read(at, PIECE))!)
        at += PIECE
        for (const lent of takenAhead(h.lendAhead!(PIECE))) {
          // Each window starts where the reader stands: the disk stream lends the block it holds.
          expect(lent.start).toBe(at)
          lentAhead++
          out.push(lent.bytes)
          at = lent.end
        }
      }
      h.close()
      await again.flush()
      expect(Buffer.concat(out).equals(data)).toBe(true)
      // Past the run's first blocks, each block is one read and the rest lent ahead.
      expect(lentAhead).toBeGreaterThanOrEqual(5)
      expect((await asked()).bytesServed).toBe(0)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
