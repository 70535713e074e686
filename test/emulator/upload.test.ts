// Conformance: savefile.ashx: whole files, chunk rules, md5, resend, compression, limits, states.
import { createHash, randomBytes } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../support/service.js'
import { api, get, login, sendTransfer, upload } from './http.js'

let svc: TestService
let token: string
beforeAll(async () => {
  svc = await startTestService()
  token = (await login(svc)).logintoken
})
afterAll(async () => { await svc.close() })

const md5b64 = (b: Buffer) => createHash('md5').update(b).digest('base64')
const md5hex = (b: Buffer) => createHash('md5').update(b).digest('hex')

async function fresh() {
  const t = await sendTransfer(svc, token, {}, {}, false)
  const q = (name: string, extra: Record<string, string | number | boolean> = {}) =>
    ({ transferid: t.transferid, transferkey: t.transferkey, thefilename: name, ...extra })
  const files = async () => (await api(svc, 'GET', `/transfer/${t.transferid}`, { logintoken: token })).body.data.files as
    Array<{ filename: string; filesize: number; md5: string; downloadurl: string }>
  return { t, q, files }
}

describe('savefile', () => {
  it('stores a whole file: 200 with an empty body, md5 and size in details, bytes back on download', async () => {
    const { t, q, files } = await fresh()
    const bytes = randomBytes(100_000)
    const res = await upload(svc, t.transferurl, q('folder/data.bin', { md5: md5b64(bytes), retry: 0 }), bytes)
    expect(res).toEqual({ status: 200, text: '' })
    const [f] = await files()
    expect(f).toMatchObject({ filename: 'folder/data.bin', filesize: 100_000, md5: md5hex(bytes) })
    expect((await get(svc, f!.downloadurl)).bytes.equals(bytes)).toBe(true)
  })

  it('assembles chunks sent out of order; the file appears only when all arrived', async () => {
    const { t, q, files } = await fresh()
    const bytes = randomBytes(25)
    const parts = [bytes.subarray(0, 10), bytes.subarray(10, 20), bytes.subarray(20)]
    for (const i of [2, 0]) {
      expect((await upload(svc, t.transferurl, q('c.bin', { chunksize: 10, chunks: 3, chunk: i, md5: md5b64(parts[i]!) }), parts[i]!)).status).toBe(200)
    }
    expect(await files()).toEqual([])
    expect((await upload(svc, t.transferurl, q('c.bin', { chunksize: 10, chunks: 3, chunk: 1 }), parts[1]!)).status).toBe(200)
    const [f] = await files()
    expect(f).toMatchObject({ filename: 'c.bin', filesize: 25, md5: md5hex(bytes) })
    expect((await get(svc, f!.downloadurl)).bytes.equals(bytes)).toBe(true)
  })

  it('replaces a chunk that is sent again', async () => {
    const { t, q, files } = await fresh()
    await upload(svc, t.transferurl, q('r.bin', { chunksize: 4, chunks: 2, chunk: 0 }), Buffer.from('XXXX'))
    await upload(svc, t.transferurl, q('r.bin', { chunksize: 4, chunks: 2, chunk: 0 }), Buffer.from('abcd'))
    await upload(svc, t.transferurl, q('r.bin', { chunksize: 4, chunks: 2, chunk: 1 }), Buffer.from('ef'))
    const [f] = await files()
    expect((await get(svc, f!.downloadurl)).bytes.toString()).toBe('abcdef')
  })

  it('takes a zero-byte file as chunks = 1', async () => {
    const { t, q, files } = await fresh()
    expect((await upload(svc, t.transferurl, q('empty.txt', { chunksize: 5000000, chunks: 1, chunk: 0 }), Buffer.alloc(0))).status).toBe(200)
    const [f] = await files()
    expect(f).toMatchObject({ filesize: 0, md5: 'd41d8cd98f00b204e9800998ecf8427e' })
    const got = await get(svc, f!.downloadurl)
    expect(got.status).toBe(200)
    expect(got.bytes.length).toBe(0)
  })

  it('enforces chunk sizes: every chunk but the last is chunksize, the last 1..chunksize', async () => {
    const { t, q } = await fresh()
    const short = await upload(svc, t.transferurl, q('s.bin', { chunksize: 4, chunks: 2, chunk: 0 }), Buffer.from('abc'))
    expect(short.status).toBe(400)
    const long = await upload(svc, t.transferurl, q('s.bin', { chunksize: 4, chunks: 2, chunk: 1 }), Buffer.from('abcde'))
    expect(long.status).toBe(400)
    const empty = await upload(svc, t.transferurl, q('s.bin', { chunksize: 4, chunks: 2, chunk: 1 }), Buffer.alloc(0))
    expect(empty.status).toBe(400)
  })

  it('validates chunk parameters', async () => {
    const { t, q } = await fresh()
    const body = Buffer.from('x')
    const cases: Array<Record<string, string | number>> = [{ chunksize: 4, chunks: 2 }, { chunks: 2, chunk: 0 }, { chunksize: 0, chunks: 1, chunk: 0 },
      { chunksize: 4, chunks: 2, chunk: 2 }, { chunksize: 4, chunks: 2, chunk: -1 }, { chunksize: 'x', chunks: 1, chunk: 0 }]
    for (const extra of cases) {
      const res = await upload(svc, t.transferurl, q('v.bin', extra), body)
      expect(res.status, JSON.stringify(extra)).toBe(400)
      expect(JSON.parse(res.text).validationerrors).toHaveLength(1)
    }
    const noName = await upload(svc, t.transferurl, { transferid: t.transferid, transferkey: t.transferkey }, body)
    expect(noName.status).toBe(400)
    expect(JSON.parse(noName.text).validationerrors[0].propertyName).toBe('thefilename')
    expect((await upload(svc, t.transferurl, q('v.bin', { md5: 'not base64!' }), body)).status).toBe(400)
  })

  it('answers 449 on an md5 mismatch and keeps nothing of that chunk', async () => {
    const { t, q, files } = await fresh()
    const res = await upload(svc, t.transferurl, q('m.bin', { md5: md5b64(Buffer.from('other')) }), Buffer.from('data'))
    expect(res.status).toBe(449)
    expect(await files()).toEqual([])
    const chunk = await upload(svc, t.transferurl, q('m2.bin', { chunksize: 4, chunks: 1, chunk: 0, md5: md5b64(Buffer.from('nope')) }), Buffer.from('data'))
    expect(chunk.status).toBe(449)
    const done = await api(svc, 'POST', '/transfer/complete', { body: { transferid: t.transferid, transferkey: t.transferkey } })
    expect(done.body.responsestatus).toBe('UploadNotComplete')
  })

  it('unzips compressed=true bodies; md5 is of the body as sent, chunksize counts stored bytes', async () => {
    const { t, q, files } = await fresh()
    const plain = Buffer.from('compressible '.repeat(1000))
    const first = plain.subarray(0, 8000)
    const rest = plain.subarray(8000)
    for (const [i, part] of [first, rest].entries()) {
      const gz = gzipSync(part)
      const res = await upload(svc, t.transferurl, q('z.txt', { chunksize: 8000, chunks: 2, chunk: i, compressed: true, md5: md5b64(gz) }), gz)
      expect(res.status).toBe(200)
    }
    const [f] = await files()
    expect(f).toMatchObject({ filesize: plain.length, md5: md5hex(plain) })
    expect((await upload(svc, t.transferurl, q('bad.gz', { compressed: true }), Buffer.from('not gzip'))).status).toBe(400)
  })

  it('refuses a body over 50 MiB with 400', async () => {
    const { t, q } = await fresh()
    const res = await upload(svc, t.transferurl, q('big.bin'), Buffer.alloc(50 * 1024 * 1024 + 1))
    expect(res.status).toBe(400)
    async function* unannounced() {
      for (let i = 0; i < 51; i++) yield Buffer.alloc(1024 * 1024)
    }
    const streamed = await upload(svc, t.transferurl, q('big2.bin'), unannounced())
    expect(streamed.status).toBe(400)
  })

  it('replaces a file of the same name when the new upload completes', async () => {
    const { t, q, files } = await fresh()
    await upload(svc, t.transferurl, q('same.txt'), Buffer.from('old'))
    await upload(svc, t.transferurl, q('same.txt', { chunksize: 3, chunks: 2, chunk: 0 }), Buffer.from('new'))
    expect((await files()).map((f) => f.filesize)).toEqual([3])
    await upload(svc, t.transferurl, q('same.txt', { chunksize: 3, chunks: 2, chunk: 1 }), Buffer.from('er'))
    const list = await files()
    expect(list).toHaveLength(1)
    expect((await get(svc, list[0]!.downloadurl)).bytes.toString()).toBe('newer')
  })

  it('answers 401 AccessDenied for a wrong key or unknown transfer, 409 for cancelled and deleted transfers', async () => {
    const { t, q } = await fresh()
    const wrong = await upload(svc, t.transferurl, { ...q('a'), transferkey: 'wrong' }, Buffer.from('a'))
    expect(wrong.status).toBe(401)
    expect(JSON.parse(wrong.text).responsestatus).toBe('AccessDenied')
    expect((await upload(svc, t.transferurl, { ...q('a'), transferid: 'nope' }, Buffer.from('a'))).status).toBe(401)
    for (const status of ['STATUS_CANCELLED', 'STATUS_DELETED'] as const) {
      await svc.controls.setStatus(t.transferid, status)
      const res = await upload(svc, t.transferurl, q('a'), Buffer.from('a'))
      expect(res.status).toBe(409)
    }
  })
})
