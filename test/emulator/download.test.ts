// Conformance: file and ZIP downloads (Range, tracking, notify mail), GetRangeHash, x-api-key on downloads.
import { execFile } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../support/service.js'
import { api, get, login, sendTransfer } from './http.js'

const run = promisify(execFile)
let svc: TestService
let token: string
let t: { transferid: string; transferkey: string }
const content = randomBytes(10_000)
const small = Buffer.from('tiny file\n')

beforeAll(async () => {
  svc = await startTestService()
  token = (await login(svc)).logintoken
  t = await sendTransfer(svc, token, { to: ['dl@example.com'], notify: true, subject: 'Downloads' },
    { 'data.bin': content, 'docs/readme.txt': small })
})
afterAll(async () => { await svc.close() })

async function details() {
  return (await api(svc, 'GET', `/transfer/${t.transferid}`, { logintoken: token })).body.data
}

describe('file download', () => {
  it('serves 200 without Range and 206 with one, for the first byte, the last byte and a middle range', async () => {
    const url = (await details()).files[0].downloadurl as string
    expect(url.startsWith(`${svc.uploadUrl}/`)).toBe(true)
    const whole = await get(svc, url)
    expect(whole.status).toBe(200)
    expect(whole.headers['accept-ranges']).toBe('bytes')
    expect(whole.bytes.equals(content)).toBe(true)
    const first = await get(svc, url, { range: 'bytes=0-0' })
    expect(first.status).toBe(206)
    expect(first.headers['content-range']).toBe('bytes 0-0/10000')
    expect(first.bytes.equals(content.subarray(0, 1))).toBe(true)
    const last = await get(svc, url, { range: 'bytes=9999-9999' })
    expect(last.status).toBe(206)
    expect(last.bytes.equals(content.subarray(9999))).toBe(true)
    const mid = await get(svc, url, { range: 'bytes=100-4099' })
    expect(mid.bytes.equals(content.subarray(100, 4100))).toBe(true)
  })

  it('answers 416 past the end, for two ranges, open or reversed ranges', async () => {
    const url = (await details()).files[0].downloadurl as string
    for (const range of ['bytes=9999-10000', 'bytes=10000-10000', 'bytes=0-1,5-6', 'bytes=5-', 'bytes=-5', 'bytes=6-5', 'items=0-1']) {
      const res = await get(svc, url, { range })
      expect(res.status, range).toBe(416)
      expect(res.headers['content-range']).toBe('bytes */10000')
    }
  })

  it('records one download per response that delivers the last byte, with notify mails after the first and second', async () => {
    const svc2 = await startTestService()
    try {
      const s = (await login(svc2)).logintoken
      const x = await sendTransfer(svc2, s, { notify: true, subject: 'Tracked' }, { 'f.bin': content })
      const read = async () => (await api(svc2, 'GET', `/transfer/${x.transferid}`, { logintoken: s })).body.data
      const url = (await read()).files[0].downloadurl as string
      await get(svc2, url, { range: 'bytes=0-4999' })
      expect((await read()).numberofdownloads).toBe(0)
      await get(svc2, url, { range: 'bytes=5000-9999' })
      expect((await read()).numberofdownloads).toBe(1)
      await get(svc2, url)
      const d = await read()
      expect(d.numberofdownloads).toBe(2)
      expect(d.files[0].downloads).toHaveLength(2)
      expect(d.downloads[0]).toMatchObject({ downloadtype: 'SingleFile', filename: 'f.bin', filesize: 10000, email: '' })
      expect(typeof d.downloads[0].downloaddate).toBe('number')
      await get(svc2, url)
      const mails = (await svc2.controls.mail()).filter((m) => m.kind.startsWith('download'))
      expect(mails.map((m) => m.kind)).toEqual(['download-first', 'download-summary'])
      expect(mails[0]!.to).toBe(svc2.user.email)
    } finally {
      await svc2.close()
    }
  })

  it('accepts downloads without x-api-key, refuses an unknown one, and 404s unknown files', async () => {
    const url = (await details()).files[1].downloadurl as string
    expect((await get(svc, url)).status).toBe(200)
    expect((await get(svc, url, { 'x-api-key': svc.apiKey })).status).toBe(200)
    expect((await get(svc, url, { 'x-api-key': 'bogus' })).status).toBe(401)
    expect((await get(svc, `${svc.uploadUrl}/download/${t.transferid}/nope`)).status).toBe(404)
  })
})

describe('ZIP download', () => {
  it('serves the whole transfer as a stored ZIP that unzip lists and tests, and tracks EntireTransfer at its end', async () => {
    const before = (await details()).numberofdownloads
    const d = await details()
    expect(d).toMatchObject({ compressedfilestatus: 'ready', compressedfileformat: 'zip' })
    const zip = await get(svc, d.compressedfileurl)
    expect(zip.status).toBe(200)
    expect(zip.headers['content-type']).toBe('application/zip')
    const dir = await mkdtemp(join(tmpdir(), 'zip-test-'))
    try {
      const file = join(dir, 'all.zip')
      await writeFile(file, zip.bytes)
      const list = await run('unzip', ['-l', file])
      expect(list.stdout).toContain('data.bin')
      expect(list.stdout).toContain('docs/readme.txt')
      const test = await run('unzip', ['-t', file])
      expect(test.stdout).toContain('No errors detected')
      const extracted = await run('unzip', ['-p', file, 'docs/readme.txt'])
      expect(extracted.stdout).toBe(small.toString())
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
    const after = await details()
    expect(after.numberofdownloads).toBe(before + 1)
    expect(after.downloads.at(-1)).toMatchObject({ downloadtype: 'EntireTransfer', filesize: zip.bytes.length })
  })

  it('serves ZIP ranges that put the archive back together byte for byte', async () => {
    const url = (await details()).compressedfileurl as string
    const whole = (await get(svc, url)).bytes
    const size = whole.length
    const parts: Buffer[] = []
    for (let start = 0; start < size; start += 4096) {
      const end = Math.min(start + 4095, size - 1)
      const res = await get(svc, url, { range: `bytes=${start}-${end}` })
      expect(res.status).toBe(206)
      expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/${size}`)
      parts.push(res.bytes)
    }
    expect(Buffer.concat(parts).equals(whole)).toBe(true)
    expect((await get(svc, url, { range: `bytes=0-${size}` })).status).toBe(416)
  })
})

describe('GetRangeHash', () => {
  const hashUrl = (q: Record<string, string | number>) => {
    const u = new URL(`${svc.uploadUrl}/GetRangeHash.ashx`)
    for (const [k, v] of Object.entries(q)) u.searchParams.set(k, String(v))
    return u.toString()
  }
  const key = () => ({ 'x-api-key': svc.apiKey })

  it('answers the lowercase hex MD5 of the range as text/plain, and records no download', async () => {
    const before = (await details()).numberofdownloads
    const res = await get(svc, hashUrl({ transferid: t.transferid, thefilename: 'data.bin', position: 100, length: 5000 }), key())
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/plain/)
    expect(res.bytes.toString()).toBe(createHash('md5').update(content.subarray(100, 5100)).digest('hex'))
    const nested = await get(svc, hashUrl({ transferid: t.transferid, thefilename: 'docs/readme.txt', position: 0, length: small.length }), key())
    expect(nested.bytes.toString()).toBe(createHash('md5').update(small).digest('hex'))
    expect((await details()).numberofdownloads).toBe(before)
  })

  it('requires x-api-key, answers 400 outside the file and 404 for unknown transfers or files', async () => {
    const q = { transferid: t.transferid, thefilename: 'data.bin', position: 0, length: 10 }
    expect((await get(svc, hashUrl(q))).status).toBe(401)
    expect((await get(svc, hashUrl(q), { 'x-api-key': 'bogus' })).status).toBe(401)
    expect((await get(svc, hashUrl({ ...q, position: 9990, length: 11 }), key())).status).toBe(400)
    expect((await get(svc, hashUrl({ ...q, position: -1 }), key())).status).toBe(400)
    expect((await get(svc, hashUrl({ ...q, thefilename: 'missing.bin' }), key())).status).toBe(404)
    expect((await get(svc, hashUrl({ ...q, transferid: 'nope' }), key())).status).toBe(404)
  })
})

describe('download page', () => {
  it('lists the files behind a recipient link', async () => {
    const link = (await details()).recipients[0].downloadlink as string
    const page = await get(svc, link)
    expect(page.status).toBe(200)
    expect(page.bytes.toString()).toContain('docs/readme.txt')
  })
})
