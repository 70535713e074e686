// Range bodies streamed on the client's own TLS connections (range-sockets.ts), against the
// real local service: bytes exact, connections kept and reused or closed as the server
// says, other answers asked again through the general transport, faults reported as
// network errors, a sink that holds the stream back, and an abort.
import { createHash, randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { NetworkError, ServiceError } from '../../src/api/errors.js'
import type { TransferClient } from '../../src/api/client.js'
import type { FileDto } from '../../src/api/types.js'
import { waitFor } from '../support/mount.js'
import { startHarness, type Harness } from './harness.js'

const MiB = 1024 * 1024
let h: Harness
let file: FileDto
let data: Buffer
let transferId: string

beforeAll(async () => {
  h = await startHarness()
  data = randomBytes(6 * MiB)
  const path = join(h.dir, 'ranges.bin')
  await writeFile(path, data)
  const sender = h.client()
  const init = await sender.transfers.initialize({ subject: 'ranges' })
  await sender.upload.uploadFile({ transferUrl: init.transferurl, transferId: init.transferid, transferKey: init.transferkey, fileName: 'ranges.bin', source: { path } })
  const t = await sender.transfers.complete(init.transferid, init.transferkey)
  transferId = init.transferid
  file = (t.files.length ? t : await sender.transfers.details(init.transferid)).files.find((f) => f.filename === 'ranges.bin')!
})
afterEach(async () => {
  await h.control('DELETE', '/faults')
  await h.control('POST', '/throttle', {})
})
afterAll(async () => {
  await h?.close()
})

/** Bytes [start, end) through pumpRange, copied out of each call (the sink's bytes are lent). */
async function pump(client: TransferClient, start: number, end: number, signal?: AbortSignal): Promise<Buffer> {
  const parts: Buffer[] = []
  await client.download.pumpRange(file.downloadurl, start, end, (bytes) => void parts.push(Buffer.from(bytes)), signal)
  return Buffer.concat(parts)
}

/** `work` fails with the service's answer `status`. */
async function expectServiceError(work: Promise<unknown>, status: number): Promise<void> {
  const e = await work.catch((x: unknown) => x)
  expect(e).toBeInstanceOf(ServiceError)
  expect((e as ServiceError).httpStatus).toBe(status)
}

describe('range streams on connections of their own', () => {
  it('hands on exactly the bytes asked, and keeps the connection for the next range', async () => {
    const client = h.client()
    await h.control('POST', '/counters/reset')
    expect((await pump(client, 0, 4096)).equals(data.subarray(0, 4096))).toBe(true)
    expect((await pump(client, 1 * MiB + 7, 5 * MiB - 3)).equals(data.subarray(1 * MiB + 7, 5 * MiB - 3))).toBe(true)
    expect((await pump(client, 6 * MiB - 1, 6 * MiB)).equals(data.subarray(6 * MiB - 1))).toBe(true)
    const c = await h.counters()
    expect(c.routes.download).toBe(3)
    expect(c.fileConnections).toBe(1)
  })

  it('a kept connection the server has since closed (its keep-alive timeout) is not used: the next range gets a new one', async () => {
    const client = h.client()
    await h.control('POST', '/counters/reset')
    expect((await pump(client, 0, 4096)).equals(data.subarray(0, 4096))).toBe(true)
    // Node's HTTPS server, the local service's, closes a connection idle for 5 s: waited for
    // by the server's own count of open connections, not by the clock, which a loaded machine
    // runs late.
    expect(await waitFor(async () => (await h.counters()).openFileConnections === 0, 15_000, 100)).toBe(true)
    expect((await pump(client, 4096, 8192)).equals(data.subarray(4096, 8192))).toBe(true)
    const c = await h.counters()
    expect(c.fileConnections).toBe(2)
    expect(c.routes.download).toBe(2)
  }, 30_000)

  it('a server that closes every connection gets a new one for each range, opened as the last one closes', async () => {
    const client = h.client()
    await h.control('POST', '/throttle', { closeConnections: true })
    await h.control('POST', '/counters/reset')
    for (let i = 0; i < 3; i++) expect((await pump(client, i * MiB, (i + 1) * MiB)).equals(data.subarray(i * MiB, (i + 1) * MiB))).toBe(true)
    // Three used, and one ready for the next range.
    await waitFor(async () => (await h.counters()).fileConnections === 4, 5000)
    await new Promise((r) => setTimeout(r, 100))
    expect((await h.counters()).fileConnections).toBe(4)
    expect((await h.counters()).routes.download).toBe(3)
  })

  it('an answer other than the range (an error status) is asked again through the general transport and reported as any download', async () => {
    const client = h.client()
    await h.control('POST', '/faults', { route: 'download', kind: 'status', status: 404, count: 2 })
    await h.control('POST', '/counters/reset')
    await expectServiceError(pump(client, 0, 1000), 404)
    // Asked twice: on the range connection, then through the transport that reports it.
    expect((await h.counters()).routes.download).toBe(2)
  })

  it('a connection reset in the middle of the body is a network error, after the bytes that came', async () => {
    const client = h.client()
    await h.control('POST', '/faults', { route: 'download', kind: 'reset', count: 1, afterBytes: 1 * MiB })
    const parts: Buffer[] = []
    const e = await client.download.pumpRange(file.downloadurl, 0, 4 * MiB, (bytes) => void parts.push(Buffer.from(bytes))).catch((x: unknown) => x)
    expect(e).toBeInstanceOf(NetworkError)
    const got = Buffer.concat(parts)
    expect(got.length).toBeGreaterThan(0)
    expect(got.length).toBeLessThan(4 * MiB)
    expect(got.equals(data.subarray(0, got.length))).toBe(true)
    // The next range gets a sound connection.
    expect((await pump(client, 0, 4096)).equals(data.subarray(0, 4096))).toBe(true)
  })

  it('a sink that returns a promise holds the stream back until it settles', async () => {
    const client = h.client()
    const hash = createHash('md5')
    let calls = 0
    let inSink = false
    await client.download.pumpRange(file.downloadurl, 0, 3 * MiB, (bytes) => {
      // No bytes come while an earlier call's promise is pending.
      expect(inSink).toBe(false)
      hash.update(bytes)
      if (++calls % 16 !== 0) return
      inSink = true
      return new Promise<void>((r) => setTimeout(() => {
        inSink = false
        r()
      }, 5))
    })
    expect(hash.digest('hex')).toBe(createHash('md5').update(data.subarray(0, 3 * MiB)).digest('hex'))
    expect(calls).toBeGreaterThan(16)
  })

  it('what the sink throws comes out as it is, and the connection is not used again', async () => {
    const client = h.client()
    await h.control('POST', '/counters/reset')
    const mine = new RangeError('not this one')
    await expect(client.download.pumpRange(file.downloadurl, 0, 2 * MiB, () => {
      throw mine
    })).rejects.toBe(mine)
    expect((await pump(client, 0, 4096)).equals(data.subarray(0, 4096))).toBe(true)
    expect((await h.counters()).fileConnections).toBe(2)
  })

  it('an abort ends the stream at once with its reason, and the connection is not used again', async () => {
    const client = h.client()
    await h.control('POST', '/throttle', { bytesPerSecond: 2 * MiB })
    await h.control('POST', '/counters/reset')
    const controller = new AbortController()
    const reason = new Error('enough')
    let got = 0
    const pumped = client.download.pumpRange(file.downloadurl, 0, 6 * MiB, (bytes) => {
      got += bytes.length
      if (got > 256 * 1024) controller.abort(reason)
    }, controller.signal)
    await expect(pumped).rejects.toBe(reason)
    await h.control('POST', '/throttle', {})
    expect((await pump(client, 0, 4096)).equals(data.subarray(0, 4096))).toBe(true)
    expect((await h.counters()).fileConnections).toBe(2)
  })
})

describe('range hashes on the same connections', () => {
  const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex')
  const hashOf = (client: TransferClient, position: number, length: number) =>
    client.download.rangeHashOnce({ downloadUrl: file.downloadurl, transferId, fileName: 'ranges.bin', position, length })

  it('are asked on the connection a range was streamed on, one after another on it', async () => {
    const client = h.client()
    await h.control('POST', '/counters/reset')
    expect((await pump(client, 0, MiB)).equals(data.subarray(0, MiB))).toBe(true)
    for (let i = 0; i < 4; i++) expect(await hashOf(client, i * MiB + 5, MiB)).toBe(md5(data.subarray(i * MiB + 5, (i + 1) * MiB + 5)))
    const c = await h.counters()
    expect(c.routes.rangehash).toBe(4)
    expect(c.fileConnections).toBe(1)
  })

  it('an error status is answered there, once, and reported as the service error it is', async () => {
    const client = h.client()
    await h.control('POST', '/faults', { route: 'rangehash', kind: 'status', status: 503, count: 1 })
    await h.control('POST', '/counters/reset')
    await expectServiceError(hashOf(client, 0, 4096), 503)
    expect((await h.counters()).routes.rangehash).toBe(1)
    // The next try gets the hash, on the same connection.
    expect(await hashOf(client, 0, 4096)).toBe(md5(data.subarray(0, 4096)))
    expect((await h.counters()).fileConnections).toBe(1)
  })

  it('many at once share at most twice connectionsPerOrigin connections, the rest waiting their turn', async () => {
    const client = h.client({ connectionsPerOrigin: 2 })
    // Each hash takes ~40 ms, so the calls overlap.
    await h.control('POST', '/throttle', { hashBytesPerSecond: 25 * MiB })
    await h.control('POST', '/counters/reset')
    const spans = Array.from({ length: 24 }, (_, i) => i * 4096)
    const hashes = await Promise.all(spans.map((at) => hashOf(client, at, MiB)))
    hashes.forEach((hex, i) => expect(hex).toBe(md5(data.subarray(spans[i]!, spans[i]! + MiB))))
    const c = await h.counters()
    expect(c.routes.rangehash).toBe(24)
    expect(c.fileConnections).toBeGreaterThan(1)
    expect(c.fileConnections).toBeLessThanOrEqual(4)
  })
})

describe('a sink with room: bytes decrypted straight into its memory', () => {
  /** A sink that names its next room in `memory`, in steps of `step` bytes; it records where each call's bytes were. */
  function roomySink(memory: Buffer, step: number, onCall?: (calls: number) => void) {
    let filled = 0
    let inPlace = 0
    let copied = 0
    let calls = 0
    const sink = Object.assign((bytes: Buffer) => {
      calls++
      if (bytes.buffer === memory.buffer && bytes.byteOffset === memory.byteOffset + filled) inPlace += bytes.length
      else {
        bytes.copy(memory, filled)
        copied += bytes.length
      }
      filled += bytes.length
      onCall?.(calls)
    }, { room: () => memory.subarray(filled, Math.min(memory.length, filled + step)) })
    return { sink, stats: () => ({ filled, inPlace, copied, calls }) }
  }

  it('lands the body in the room the sink names (a room smaller than a TLS record splits it), every byte right', async () => {
    const client = h.client()
    const start = 12_345
    const end = start + 3 * MiB
    // Shared memory, as the read path's block slots are.
    const memory = Buffer.from(new SharedArrayBuffer(end - start))
    const { sink, stats } = roomySink(memory, 10_000)
    await client.download.pumpRange(file.downloadurl, start, end, sink)
    const s = stats()
    expect(memory.equals(data.subarray(start, end))).toBe(true)
    expect(s.filled).toBe(end - start)
    // Only what came with the headers is copied; each call is at most one room.
    expect(s.copied).toBeLessThan(64 * 1024)
    expect(s.inPlace).toBe(end - start - s.copied)
    expect(s.calls).toBeGreaterThan((end - start) / 10_000)
  })

  it('once the sink has thrown, no byte the socket still decrypts lands in its memory', async () => {
    const client = h.client()
    const memory = Buffer.alloc(2 * MiB, 0xaa)
    const mine = new RangeError('stop here')
    let filledAtThrow = 0
    const { sink, stats } = roomySink(memory, 16 * 1024, (calls) => {
      if (calls === 3) {
        filledAtThrow = stats().filled
        throw mine
      }
    })
    await expect(client.download.pumpRange(file.downloadurl, 0, 2 * MiB, sink)).rejects.toBe(mine)
    // Let whatever was still in flight arrive.
    await new Promise((r) => setTimeout(r, 200))
    expect(filledAtThrow).toBeGreaterThan(0)
    expect(memory.subarray(0, filledAtThrow).equals(data.subarray(0, filledAtThrow))).toBe(true)
    expect(memory.subarray(filledAtThrow).every((b) => b === 0xaa)).toBe(true)
  })

  it('once the stream is aborted from outside, no byte the socket still decrypts lands in the sink\'s memory', async () => {
    const client = h.client()
    // Throttled, so the abort comes while bytes are still on their way.
    await h.control('POST', '/throttle', { bytesPerSecond: 2 * MiB })
    const memory = Buffer.alloc(4 * MiB, 0xaa)
    const controller = new AbortController()
    const { sink, stats } = roomySink(memory, 256 * 1024, () => {
      if (stats().filled > 512 * 1024) controller.abort(new Error('enough'))
    })
    await expect(client.download.pumpRange(file.downloadurl, 0, 4 * MiB, sink, controller.signal)).rejects.toThrow('enough')
    const filled = stats().filled
    await new Promise((r) => setTimeout(r, 300))
    expect(memory.subarray(0, filled).equals(data.subarray(0, filled))).toBe(true)
    expect(memory.subarray(filled).every((b) => b === 0xaa)).toBe(true)
  })

  it('while the sink holds the stream back, bytes go to the socket\'s own buffer and are handed on in order', async () => {
    const client = h.client()
    const memory = Buffer.alloc(2 * MiB)
    let calls = 0
    let filled = 0
    const sink = Object.assign((bytes: Buffer) => {
      if (bytes.buffer !== memory.buffer || bytes.byteOffset !== filled) bytes.copy(memory, filled)
      filled += bytes.length
      if (++calls % 8 === 0) return new Promise<void>((r) => setTimeout(r, 2))
    }, { room: () => memory.subarray(filled) })
    await client.download.pumpRange(file.downloadurl, 0, 2 * MiB, sink)
    expect(memory.equals(data.subarray(0, 2 * MiB))).toBe(true)
  })
})
