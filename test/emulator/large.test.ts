// A 2 GiB file goes up in 50 MiB chunks and comes back down, streamed both ways, while the memory of
// this process (client and in-process service together) stays flat.
import { createHash, randomBytes } from 'node:crypto'
import { request } from 'undici'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startTestService, type TestService } from '../support/service.js'
import { api, login, sendTransfer, upload } from './http.js'

const SIZE = 2 * 1024 ** 3
const CHUNK = 50 * 1024 * 1024
const BLOCK = 1024 * 1024
const MAX_GROWTH = 300 * 1024 * 1024

let svc: TestService
beforeAll(async () => { svc = await startTestService() })
afterAll(async () => { await svc.close() })

const pattern = randomBytes(BLOCK)

/** The bytes [start, end) of the test file: the pattern with each 1 MiB block's index stamped in. */
async function* bytes(start: number, end: number): AsyncGenerator<Buffer> {
  for (let block = Math.floor(start / BLOCK); block * BLOCK < end; block++) {
    const b = Buffer.from(pattern)
    b.writeUInt32BE(block, 0)
    const from = Math.max(start - block * BLOCK, 0)
    const to = Math.min(end - block * BLOCK, BLOCK)
    yield b.subarray(from, to)
  }
}

it('uploads and downloads a 2 GiB file in chunks with flat memory', async () => {
  const token = (await login(svc)).logintoken
  const t = await sendTransfer(svc, token, {}, {}, false)
  let peak = process.memoryUsage().rss
  const baseline = peak
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 50)
  try {
    const expected = createHash('md5')
    for await (const b of bytes(0, SIZE)) expected.update(b)
    const expectedMd5 = expected.digest('hex')
    const chunks = Math.ceil(SIZE / CHUNK)
    let next = 0
    const worker = async () => {
      for (let i = next++; i < chunks; i = next++) {
        const start = i * CHUNK
        const end = Math.min(start + CHUNK, SIZE)
        const res = await upload(svc, t.transferurl, { transferid: t.transferid, transferkey: t.transferkey, thefilename: 'huge.bin', chunksize: CHUNK, chunks, chunk: i }, bytes(start, end), end - start)
        expect(res.status).toBe(200)
      }
    }
    await Promise.all([worker(), worker()])
    const done = await api(svc, 'POST', '/transfer/complete', { body: { transferid: t.transferid, transferkey: t.transferkey } })
    expect(done.status).toBe(200)
    const file = done.body.data.files[0]
    expect(file).toMatchObject({ filename: 'huge.bin', filesize: SIZE, md5: expectedMd5 })
    const res = await request(file.downloadurl, { dispatcher: svc.dispatcher })
    expect(res.statusCode).toBe(200)
    const got = createHash('md5')
    let length = 0
    for await (const chunk of res.body) {
      got.update(chunk as Buffer)
      length += (chunk as Buffer).length
    }
    expect(length).toBe(SIZE)
    expect(got.digest('hex')).toBe(expectedMd5)
  } finally {
    clearInterval(sampler)
  }
  const growth = peak - baseline
  console.log(`2 GiB up and down: peak RSS growth ${(growth / 1024 / 1024).toFixed(1)} MiB (baseline ${(baseline / 1024 / 1024).toFixed(1)} MiB)`)
  expect(growth).toBeLessThan(MAX_GROWTH)
}, 600_000)
