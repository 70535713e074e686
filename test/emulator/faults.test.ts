// The test controls' faults and throttle do what they say, for real, over real connections.
import { createHash, randomBytes } from 'node:crypto'
import { request } from 'undici'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../support/service.js'
import { api, get, login, sendTransfer, upload } from './http.js'

let svc: TestService
let token: string
let t: { transferid: string; transferkey: string; transferurl: string }
let fileUrl: string
const content = randomBytes(2 * 1024 * 1024)

beforeAll(async () => {
  svc = await startTestService()
  token = (await login(svc)).logintoken
  t = await sendTransfer(svc, token, {}, { 'big.bin': content })
  fileUrl = (await api(svc, 'GET', `/transfer/${t.transferid}`, { logintoken: token })).body.data.files[0].downloadurl
})
afterEach(async () => { await svc.controls.clearFaults() })
afterAll(async () => { await svc.close() })

describe('status faults', () => {
  it('answer the given HTTP status with an error envelope instead of serving, for count requests', async () => {
    await svc.controls.fault({ route: 'inbox', kind: 'status', status: 503, count: 2 })
    for (let i = 0; i < 2; i++) {
      const res = await api(svc, 'GET', '/transfer/inbox', { logintoken: token })
      expect(res.status).toBe(503)
      expect(res.body.responsestatus).toBe('ServiceInterruption')
      expect(res.body.errorcode).toBe(9)
    }
    expect((await api(svc, 'GET', '/transfer/inbox', { logintoken: token })).status).toBe(200)
  })

  it('429 carries Retry-After; responsestatus can be chosen', async () => {
    await svc.controls.fault({ route: 'details', kind: 'status', status: 429, count: 1 })
    const limited = await api(svc, 'GET', `/transfer/${t.transferid}`)
    expect(limited.status).toBe(429)
    expect(limited.body.responsestatus).toBe('RateLimitExceeded')
    expect(limited.headers['retry-after']).toBe('1')
    await svc.controls.fault({ route: 'details', kind: 'status', status: 401, responsestatus: 'InvalidOrExpiredLoginToken', count: 1 })
    expect((await api(svc, 'GET', `/transfer/${t.transferid}`)).body.responsestatus).toBe('InvalidOrExpiredLoginToken')
  })

  it('apply to file-server routes too (406 on upload, 500 on download), and probability 1 / 0 means always / never', async () => {
    await svc.controls.fault({ route: 'savefile', kind: 'status', status: 406, count: 1 })
    const up = await upload(svc, t.transferurl, { transferid: t.transferid, transferkey: t.transferkey, thefilename: 'x.txt' }, Buffer.from('x'))
    expect(up.status).toBe(406)
    await svc.controls.fault({ route: '*', kind: 'status', status: 500, probability: 0 })
    expect((await get(svc, fileUrl, { range: 'bytes=0-0' })).status).toBe(206)
    await svc.controls.fault({ route: 'download', kind: 'status', status: 500, probability: 1 })
    for (let i = 0; i < 3; i++) expect((await get(svc, fileUrl, { range: 'bytes=0-0' })).status).toBe(500)
  })

  it('count requests per route in the counters', async () => {
    await svc.controls.resetCounters()
    await get(svc, fileUrl, { range: 'bytes=0-99' })
    await api(svc, 'GET', `/transfer/${t.transferid}`)
    const c = await svc.controls.counters()
    expect(c.routes).toEqual({ download: 1, details: 1 })
    expect(c.bytesServed).toBe(100)
  })
})

describe('corrupt', () => {
  it('changes one byte actually sent in a download, and the hash a GetRangeHash answers', async () => {
    await svc.controls.fault({ route: 'download', kind: 'corrupt', count: 1 })
    const bad = await get(svc, fileUrl)
    expect(bad.status).toBe(200)
    expect(bad.bytes.length).toBe(content.length)
    let differing = 0
    for (let i = 0; i < content.length; i++) if (bad.bytes[i] !== content[i]) differing++
    expect(differing).toBe(1)
    expect((await get(svc, fileUrl)).bytes.equals(content)).toBe(true)
    await svc.controls.fault({ route: 'rangehash', kind: 'corrupt', count: 1 })
    const u = new URL(`${svc.uploadUrl}/GetRangeHash.ashx`)
    u.search = new URLSearchParams({ transferid: t.transferid, thefilename: 'big.bin', position: '0', length: '1000' }).toString()
    const hash = await get(svc, u.toString(), { 'x-api-key': svc.apiKey })
    expect(hash.bytes.toString()).not.toBe(createHash('md5').update(content.subarray(0, 1000)).digest('hex'))
    expect(hash.bytes.toString()).toMatch(/^[0-9a-f]{32}$/)
  })
})

describe('reset', () => {
  it('destroys the connection mid-body of a download after afterBytes, and records no download', async () => {
    const before = (await api(svc, 'GET', `/transfer/${t.transferid}`, { logintoken: token })).body.data.numberofdownloads
    await svc.controls.fault({ route: 'download', kind: 'reset', count: 1, afterBytes: 300_000 })
    const res = await request(fileUrl, { dispatcher: svc.dispatcher })
    expect(res.statusCode).toBe(200)
    let received = 0
    await expect((async () => { for await (const chunk of res.body) received += (chunk as Buffer).length })()).rejects.toThrow()
    expect(received).toBe(300_000)
    const after = (await api(svc, 'GET', `/transfer/${t.transferid}`, { logintoken: token })).body.data.numberofdownloads
    expect(after).toBe(before)
  })

  it('destroys an upload connection mid-body and stores nothing', async () => {
    await svc.controls.fault({ route: 'savefile', kind: 'reset', count: 1, afterBytes: 100_000 })
    const q = { transferid: t.transferid, transferkey: t.transferkey, thefilename: 'reset.bin' }
    await expect(upload(svc, t.transferurl, q, randomBytes(1_000_000))).rejects.toThrow()
    const names = (await api(svc, 'GET', `/transfer/${t.transferid}`, { logintoken: token })).body.data.files.map((f: { filename: string }) => f.filename)
    expect(names).not.toContain('reset.bin')
    expect((await upload(svc, t.transferurl, q, randomBytes(1000))).status).toBe(200)
  })

  it('cuts a JSON answer in the middle', async () => {
    await svc.controls.fault({ route: 'details', kind: 'reset', count: 1 })
    await expect(api(svc, 'GET', `/transfer/${t.transferid}`)).rejects.toThrow()
    expect((await api(svc, 'GET', `/transfer/${t.transferid}`)).status).toBe(200)
  })
})

describe('stall', () => {
  it('never answers: the client gives up (abort) and the next request is served', async () => {
    await svc.controls.fault({ route: 'details', kind: 'stall', count: 1 })
    const url = `${svc.baseUrl}/transfer/${t.transferid}`
    await expect(request(url, { dispatcher: svc.dispatcher, headers: { 'x-api-key': svc.apiKey }, signal: AbortSignal.timeout(500) }))
      .rejects.toThrow(/abort|timeout/i)
    await svc.controls.fault({ route: 'download', kind: 'stall', count: 1 })
    await expect(request(fileUrl, { dispatcher: svc.dispatcher, signal: AbortSignal.timeout(500) })).rejects.toThrow(/abort|timeout/i)
    expect((await api(svc, 'GET', `/transfer/${t.transferid}`)).status).toBe(200)
  })
})

describe('throttle', () => {
  it('paces download bodies: while the first bytes arrive, the service has sent only a fraction of the file', async () => {
    await svc.controls.throttle({ bytesPerSecond: 256 * 1024, latencyMs: 20 })
    await svc.controls.resetCounters()
    const res = await request(fileUrl, { dispatcher: svc.dispatcher })
    const reader = res.body[Symbol.asyncIterator]()
    await reader.next()
    const served = (await svc.controls.counters()).bytesServed
    await reader.return?.()
    res.body.destroy()
    await svc.controls.resetCounters()
    // Unthrottled, the service pushes as fast as the socket takes it; throttled, it cannot be far ahead.
    expect(served).toBeLessThan(content.length / 2)
    await svc.controls.clearFaults()
    expect((await get(svc, fileUrl)).bytes.equals(content)).toBe(true)
  })

  it('burstBytes: after an idle spell the first burstBytes of a body go at once, the rest at the rate', async () => {
    // 2 MiB at 1 MiB/s: 2 s at least without a burst; with a 1.5 MiB burst, ~0.5 s (the bounds
    // leave a second for a loaded machine, and each holds only with its own setting).
    const timed = async (throttle: object) => {
      await svc.controls.throttle(throttle)
      const t0 = performance.now()
      expect((await get(svc, fileUrl)).bytes.equals(content)).toBe(true)
      return performance.now() - t0
    }
    const withBurst = await timed({ bytesPerSecond: 1024 * 1024, burstBytes: 1.5 * 1024 * 1024 })
    const without = await timed({ bytesPerSecond: 1024 * 1024 })
    expect(withBurst).toBeGreaterThanOrEqual(450)
    expect(withBurst).toBeLessThan(1500)
    expect(without).toBeGreaterThanOrEqual(1950)
    await expect(svc.controls.throttle({ bytesPerSecond: 1024, burstBytes: -1 })).rejects.toThrow(/400/)
  })

  it('keeps answers correct while throttled, and validates its body', async () => {
    await svc.controls.throttle({ bytesPerSecond: 4 * 1024 * 1024, latencyMs: 10 })
    expect((await get(svc, fileUrl, { range: 'bytes=0-99999' })).bytes.equals(content.subarray(0, 100_000))).toBe(true)
    await expect(svc.controls.throttle({ bytesPerSecond: -1 })).rejects.toThrow(/400/)
  })

  it('closeConnections: every answer says Connection: close and ends its connection, so each request is a new handshake', async () => {
    await svc.controls.resetCounters()
    for (let i = 0; i < 5; i++) expect((await get(svc, fileUrl, { range: 'bytes=0-9' })).status).toBe(206)
    const kept = (await svc.controls.counters()).fileConnections
    await svc.controls.throttle({ closeConnections: true })
    await svc.controls.resetCounters()
    for (let i = 0; i < 5; i++) {
      const res = await get(svc, fileUrl, { range: 'bytes=0-9' })
      expect([res.status, res.headers.connection]).toEqual([206, 'close'])
    }
    // The first may still ride the connection kept from before the switch.
    expect((await svc.controls.counters()).fileConnections).toBeGreaterThanOrEqual(3)
    expect(kept).toBeLessThanOrEqual(1)
    await expect(svc.controls.throttle({ closeConnections: 'yes' as unknown as boolean })).rejects.toThrow(/400/)
  })

  it('hashBytesPerSecond: GetRangeHash answers no sooner than its bytes take at that rate, with the right hash', async () => {
    const u = new URL(`${svc.uploadUrl}/GetRangeHash.ashx`)
    for (const [k, v] of Object.entries({ transferid: t.transferid, thefilename: 'big.bin', position: 0, length: content.length })) u.searchParams.set(k, String(v))
    await svc.controls.throttle({ hashBytesPerSecond: 4 * 1024 * 1024 })
    const t0 = performance.now()
    const res = await get(svc, u.toString(), { 'x-api-key': svc.apiKey })
    // 2 MiB at 4 MiB/s: half a second at least (a lower bound: the sleep cannot be skipped).
    expect(performance.now() - t0).toBeGreaterThanOrEqual(490)
    expect(res.bytes.toString()).toBe(createHash('md5').update(content).digest('hex'))
  })

  it('rejects malformed fault specs', async () => {
    await expect(svc.controls.fault({ route: 'nowhere' as 'download', kind: 'reset', count: 1 })).rejects.toThrow(/400/)
    await expect(svc.controls.fault({ route: 'download', kind: 'reset' })).rejects.toThrow(/400/)
    await expect(svc.controls.fault({ route: 'download', kind: 'status', count: 1 })).rejects.toThrow(/400/)
  })
})

describe('requests in flight', () => {
  it('a download its client gives up during the added latency is not counted in flight', async () => {
    await svc.controls.throttle({ latencyMs: 300 })
    try {
      const gone = new AbortController()
      const asked = request(fileUrl, { dispatcher: svc.dispatcher, signal: gone.signal }).catch(() => undefined)
      await new Promise((resolve) => setTimeout(resolve, 50))
      gone.abort()
      await asked
      await new Promise((resolve) => setTimeout(resolve, 600))
      expect((await svc.controls.counters()).inFlight).toBe(0)
    } finally {
      await svc.controls.throttle({})
    }
  })
})
