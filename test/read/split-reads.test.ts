// A large read that the kernel cuts into pieces, against the real local service over
// HTTPS: libfuse 2 passes at most 128 KiB per request, so a 1 MiB read arrives as eight
// reads one after another. The first of them, at a block's start, fetches the whole block
// in one verified range; the other seven are served from it. The service's counters tell
// every range and hash asked; small random reads still fetch only their own span.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { TransferClient } from '../../src/api/client.js'
import { toBuffer } from '../../src/read/bytes.js'
import { ReadPath } from '../../src/read/content.js'
import { DEFAULT_READ_OPTIONS } from '../../src/read/options.js'
import { ServiceRangeSource } from '../../src/read/service-source.js'
import type { RemoteFile } from '../../src/read/source.js'
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
    const parts = await Promise.all(Array.from({ length: 8 }, (_, i) => h.read(from + i * PIECE, PIECE)))
    h.close()
    expect(Buffer.concat(parts.map((p) => toBuffer(p))).equals(data.subarray(from, from + MiB))).toBe(true)
    // The first, at the block's start, starts the block's fetch; the rest join it.
    expect(await asked()).toEqual({ download: 1, rangehash: 1, bytesServed: MiB })
  })
})
