// File bytes against the real local service, with its faults switched on for real:
// uploads and downloads that survive a bad network, ranges checked by their hash,
// streams that resume, requests that time out instead of hanging, upload resume.
import { createHash, randomBytes } from 'node:crypto'
import { open, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { TransferClient } from '../../src/api/client.js'
import { md5Hex, md5OfStream } from '../../src/api/md5.js'
import { spansOf } from '../../src/base/chunk-grid.js'
import type { InitializeResult, FileDto } from '../../src/api/types.js'
import { waitFor } from '../support/mount.js'
import { startHarness } from './harness.js'
import type { Harness } from './harness.js'

const MiB = 1024 * 1024
let h: Harness

beforeAll(async () => {
  h = await startHarness()
})
afterEach(async () => {
  await h.control('DELETE', '/faults')
})
afterAll(async () => {
  await h?.close()
})

/** A file of random bytes written piece by piece (never whole in memory); returns its hex MD5. */
async function randomFile(path: string, size: number): Promise<string> {
  const hash = createHash('md5')
  const handle = await open(path, 'w')
  try {
    for (let done = 0; done < size; ) {
      const piece = randomBytes(Math.min(4 * MiB, size - done))
      hash.update(piece)
      await handle.write(piece, 0, piece.length, done)
      done += piece.length
    }
  } finally {
    await handle.close()
  }
  return hash.digest('hex')
}

async function sendOne(client: TransferClient, name: string, path: string, chunkSize?: number): Promise<{ init: InitializeResult; file: FileDto }> {
  const init = await client.transfers.initialize({ subject: name })
  await client.upload.uploadFile({
    transferUrl: init.transferurl, transferId: init.transferid, transferKey: init.transferkey, fileName: name, source: { path }, chunkSize,
  })
  const t = await client.transfers.complete(init.transferid, init.transferkey)
  const file = (t.files.length ? t : await client.transfers.details(init.transferid)).files.find((f) => f.filename === name)!
  return { init, file }
}

/** The whole file in verified chunks of 8 MiB, one after the other; the MD5 of what came. */
async function downloadVerified(client: TransferClient, file: FileDto, transferId: string): Promise<string> {
  const hash = createHash('md5')
  for (const { start, end } of spansOf(file.filesize!, 8 * MiB)) {
    for (const part of await client.download.fetchVerifiedRange(file.downloadurl, start, end, { transferId, fileName: file.filename! })) hash.update(part)
  }
  return hash.digest('hex')
}

async function collect(pieces: AsyncIterable<Buffer>): Promise<Buffer[]> {
  const out: Buffer[] = []
  for await (const p of pieces) out.push(p)
  return out
}

const fast = { baseDelayMs: 10, maxDelayMs: 300, deadlineMs: 600_000 }

describe('data under faults', () => {
  it('a 200 MB upload and its download succeed byte for byte with 20% of requests failing in each way', async () => {
    const size = 200 * MiB
    const source = join(h.dir, 'big.bin')
    const md5 = await randomFile(source, size)
    const client = h.client({
      retry: fast,
      upload: { maxTries: 30 },
      download: { maxTries: 30 },
      timeouts: { headersMs: 20_000, bodyIdleMs: 20_000 },
    })
    const faults = [
      ...['savefile', 'download', 'rangehash', 'complete', 'details', 'initialize'].map((route) => ({ route, kind: 'status', status: 503, probability: 0.2 })),
      ...['savefile', 'download', 'rangehash'].map((route) => ({ route, kind: 'reset', probability: 0.2 })),
      { route: 'savefile', kind: 'status', status: 406, probability: 0.2 },
      { route: 'savefile', kind: 'status', status: 449, probability: 0.2 },
      { route: 'download', kind: 'corrupt', probability: 0.2 },
    ]
    for (const f of faults) await h.control('POST', '/faults', f)
    await h.control('POST', '/counters/reset')

    let lastProgress = 0
    const init = await client.transfers.initialize({ subject: 'big' })
    const plan = await client.upload.uploadFile({
      transferUrl: init.transferurl, transferId: init.transferid, transferKey: init.transferkey,
      fileName: 'big.bin', source: { path: source }, chunkSize: 16 * MiB, onProgress: (p) => { lastProgress = p.confirmedBytes },
    })
    expect(plan.chunks).toBe(13)
    expect(lastProgress).toBe(size)
    await client.transfers.complete(init.transferid, init.transferkey)
    const details = await client.transfers.details(init.transferid)
    const file = details.files.find((f) => f.filename === 'big.bin')!
    expect(file.md5).toBe(md5)

    expect(await downloadVerified(client, file, init.transferid)).toBe(md5)
    const routes = (await h.counters()).routes
    // The faults really happened: far more requests than chunks.
    expect(routes.savefile!).toBeGreaterThan(13)
    expect(routes.download!).toBeGreaterThan(25)
  })

  it('a connection opened ahead serves the first range and range hash: no handshake waits for the first byte, none is opened beside it', async () => {
    const path = join(h.dir, 'warm.bin')
    await randomFile(path, 64 * 1024)
    const sender = h.client()
    const { init, file } = await sendOne(sender, 'warm.bin', path)
    const client = h.client()
    await h.control('POST', '/counters/reset')
    client.download.preconnect(file.downloadurl)
    client.download.preconnect(file.downloadurl)
    // One handshake now, before any request, for the range streams and range hashes of
    // reads (range-sockets.ts); a second call opens nothing while it is under way.
    await waitFor(async () => (await h.counters()).fileConnections === 1, 5000)
    const whole = await readFile(path)
    const streamed: Buffer[] = []
    await client.download.pumpRange(file.downloadurl, 0, 4096, (bytes) => void streamed.push(Buffer.from(bytes)))
    expect(Buffer.concat(streamed).equals(whole.subarray(0, 4096))).toBe(true)
    const hash = await client.download.rangeHashOnce({ downloadUrl: file.downloadurl, transferId: init.transferid, fileName: 'warm.bin', position: 0, length: 4096 })
    expect(hash).toBe(md5Hex(whole.subarray(0, 4096)))
    const c = await h.counters()
    expect(c.fileConnections).toBe(1)
    expect(c.routes.download).toBe(1)
    expect(c.routes.rangehash).toBe(1)
    // An open connection needs no other.
    client.download.preconnect(file.downloadurl)
    await new Promise((r) => setTimeout(r, 100))
    expect((await h.counters()).fileConnections).toBe(1)
  })

  it('a corrupted range is detected by its hash', async () => {
    const client = h.client({ retry: fast })
    const source = join(h.dir, 'six.bin')
    await randomFile(source, 6 * MiB)
    const { init, file } = await sendOne(client, 'six.bin', source)
    const start = 1 * MiB
    const end = 3 * MiB
    const hash = await client.download.rangeHash({ downloadUrl: file.downloadurl, transferId: init.transferid, fileName: 'six.bin', position: start, length: end - start })
    expect(hash).toBe(md5Hex((await readFile(source)).subarray(start, end)))
    await h.control('POST', '/faults', { route: 'download', kind: 'corrupt', count: 1 })
    const damaged = await client.download.fetchRangeOnce(file.downloadurl, start, end)
    expect(damaged).toHaveLength(end - start)
    expect(md5Hex(damaged)).not.toBe(hash)
    // A verified fetch notices it too and fetches the chunk again.
    await h.control('POST', '/faults', { route: 'download', kind: 'corrupt', count: 2 })
    expect(await downloadVerified(client, file, init.transferid)).toBe(file.md5)
  })

  it('a range stream resumes where a reset cut it, and the ZIP streams whole', async () => {
    const client = h.client({ retry: fast })
    const source = join(h.dir, 'seven.bin')
    await randomFile(source, 7 * MiB)
    const { init, file } = await sendOne(client, 'seven.bin', source)
    const expected = (await readFile(source)).subarray(100, 7 * MiB - 100)
    await h.control('POST', '/counters/reset')
    await h.control('POST', '/faults', { route: 'download', kind: 'reset', count: 3, afterBytes: 1 * MiB })
    const got = Buffer.concat(await collect(client.download.streamRange(file.downloadurl, 100, 7 * MiB - 100)))
    expect(got.equals(expected)).toBe(true)
    expect((await h.counters()).routes.download).toBe(4)

    await h.control('POST', '/faults', { route: 'download', kind: 'reset', count: 1, afterBytes: 3 * MiB })
    expect(await md5OfStream(client.download.streamFile(file.downloadurl))).toBe(file.md5)

    const details = await client.transfers.details(init.transferid)
    await h.control('POST', '/faults', { route: 'zip', kind: 'reset', count: 1, afterBytes: 2 * MiB })
    const zip = Buffer.concat(await collect(client.download.streamZip(details.compressedfileurl)))
    expect(zip.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))).toBe(true)
    expect(zip.length).toBeGreaterThan(7 * MiB)
    expect(zip.indexOf(Buffer.from('seven.bin'))).toBeGreaterThan(0)
  })

  it('a stalled server costs a timeout, not a hang, and a length is always checked', async () => {
    const client = h.client({ retry: fast, timeouts: { headersMs: 700, bodyIdleMs: 700 } })
    const source = join(h.dir, 'small.bin')
    await randomFile(source, 100_000)
    const { file } = await sendOne(client, 'small.bin', source)
    await h.control('POST', '/faults', { route: 'download', kind: 'stall', count: 2 })
    const got = await client.download.fetchRange(file.downloadurl, 10, 90_010)
    expect(md5Hex(got)).toBe(md5Hex((await readFile(source)).subarray(10, 90_010)))
    // A caller's abort ends a stalled request at once, without retries.
    await h.control('POST', '/faults', { route: 'download', kind: 'stall', count: 1 })
    const ac = new AbortController()
    const pending = client.download.fetchRange(file.downloadurl, 0, 10, { signal: ac.signal })
    setTimeout(() => ac.abort(new Error('caller gave up')), 100)
    await expect(pending).rejects.toThrow('caller gave up')
    await expect(client.download.fetchRange(file.downloadurl, 0, 100_001)).rejects.toMatchObject({ httpStatus: 416 })
    // An upload whose answer never comes is sent again after the timeout.
    await h.control('POST', '/counters/reset')
    await h.control('POST', '/faults', { route: 'savefile', kind: 'stall', count: 1 })
    const again = await sendOne(client, 'small-again.bin', source)
    expect(again.file.md5).toBe(file.md5)
    expect((await h.counters()).routes.savefile).toBe(2)
  })

  it('an interrupted upload resumes from the confirmed chunks and sends only the rest', async () => {
    // One chunk at a time. The interruption may cut off the answer to a chunk the service
    // already holds, so the resumed upload sends that chunk again. With several at once,
    // it could arrive after the others completed the file. The service would then take it
    // as the start of a new upload of the file, and Complete would answer UploadNotComplete;
    // the outbox answers that by sending every chunk again.
    const client = h.client({ retry: fast, upload: { parallelChunks: 1 } })
    const size = 23_000_000
    const source = join(h.dir, 'resume.bin')
    const md5 = await randomFile(source, size)
    const init = await client.transfers.initialize({ subject: 'resume' })
    const base = { transferUrl: init.transferurl, transferId: init.transferid, transferKey: init.transferkey, fileName: 'resume.bin', chunkSize: 5_000_000 }
    const confirmed = new Set<number>()
    const ac = new AbortController()
    const first = client.upload.uploadFile({
      ...base, source: { path: source }, signal: ac.signal,
      onChunkConfirmed: (i) => { confirmed.add(i); if (confirmed.size === 2) ac.abort(new Error('interrupted')) },
    })
    await expect(first).rejects.toThrow('interrupted')
    expect(confirmed.size).toBeGreaterThanOrEqual(2)
    expect(confirmed.size).toBeLessThan(5)
    // Chunks of the interrupted upload may still be arriving: count only the resumed one's.
    expect(await waitFor(async () => (await h.counters()).inFlight === 0)).toBe(true)
    await h.control('POST', '/counters/reset')
    const sentNow: number[] = []
    await client.upload.uploadFile({ ...base, source: { path: source }, confirmed, onChunkConfirmed: (i) => { sentNow.push(i) } })
    expect(sentNow.sort()).toEqual([0, 1, 2, 3, 4].filter((i) => !confirmed.has(i)))
    expect((await h.counters()).routes.savefile).toBe(sentNow.length)
    await client.transfers.complete(init.transferid, init.transferkey)
    const details = await client.transfers.details(init.transferid)
    expect(details.files.find((f) => f.filename === 'resume.bin')?.md5).toBe(md5)
  })
})
