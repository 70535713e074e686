// The Sender over the real client against the local service: chunks with MD5, resume from
// confirmed chunks (only the rest go over the wire), one queue bounding the chunks in
// flight across uploads, faults retried, and a file added to an existing transfer.
import { createHash } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TransferClient } from '../../src/api/client.js'
import { ExistingTransferSender, ServiceSender } from '../../src/send/service-sender.js'
import { startTestService, type TestService } from '../support/service.js'

const CHUNK = 5_000_000
let service: TestService
let client: TransferClient
let dir: string

beforeAll(async () => {
  service = await startTestService()
  client = new TransferClient({ apiUrl: service.baseUrl, apiKey: service.apiKey, ca: service.caPem })
  await client.auth.login(service.user.email, service.user.password)
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'sender-test-'))
})

afterAll(async () => {
  await client?.close()
  await service?.close()
  if (dir) await fsp.rm(dir, { recursive: true, force: true })
})

async function fileOf(name: string, size: number, seed: number): Promise<{ path: string; md5: string }> {
  const data = Buffer.alloc(size)
  for (let i = 0; i < size; i += 4096) data[i] = (i / 4096 + seed) & 0xff
  const p = path.join(dir, name)
  await fsp.writeFile(p, data)
  return { path: p, md5: createHash('md5').update(data).digest('hex') }
}

async function send(sender: ServiceSender, name: string, file: string, size: number, confirmed: number[] = []) {
  const t = await sender.initialize({ subject: name, transfersize: size }, new AbortController().signal)
  const got: number[] = []
  await sender.uploadFile({
    ...t, fileName: name, filePath: file, size, chunkSize: CHUNK, confirmed: new Set(confirmed),
    onChunkConfirmed: (i) => got.push(i), signal: new AbortController().signal,
  })
  return { t, got }
}

describe('ServiceSender', () => {
  it('an upload leaves the staged file\'s atime as it was, which the outbox shows as the user\'s (found by test/fuse/mmap-writes.test.ts)', async () => {
    const f = await fileOf('atime.bin', 3000, 9)
    // Set years back, before the ctime, so a relatime disk would refresh it on a read.
    const atime = new Date('2005-06-19T01:16:43.260Z')
    await fsp.utimes(f.path, atime, atime)
    await send(new ServiceSender(client), 'atime.bin', f.path, 3000)
    expect((await fsp.stat(f.path)).atime).toEqual(atime)
  })

  it('sends only the chunks not confirmed, and the file completes with the right MD5', async () => {
    const size = 3 * CHUNK + 123
    const f = await fileOf('resume.bin', size, 1)
    const sender = new ServiceSender(client)
    // A first try that got chunks 0 and 2 through.
    const first = await send(sender, 'resume.bin', f.path, size)
    expect(first.got.sort()).toEqual([0, 1, 2, 3])
    await service.controls.resetCounters()
    const t = await sender.initialize({ subject: 'resume.bin', transfersize: size }, new AbortController().signal)
    const sub = new ServiceSender(client)
    const got: number[] = []
    // Upload chunks 0 and 2 on their own, then "resume" with them confirmed.
    for (const only of [0, 2]) {
      await sub.uploadFile({ ...t, fileName: 'resume.bin', filePath: f.path, size, chunkSize: CHUNK,
        confirmed: new Set([0, 1, 2, 3].filter((i) => i !== only)), onChunkConfirmed: () => undefined, signal: new AbortController().signal })
    }
    await sub.uploadFile({ ...t, fileName: 'resume.bin', filePath: f.path, size, chunkSize: CHUNK,
      confirmed: new Set([0, 2]), onChunkConfirmed: (i) => got.push(i), signal: new AbortController().signal })
    expect(got.sort()).toEqual([1, 3])
    expect((await service.controls.counters()).routes.savefile).toBe(4)
    const done = await sender.complete(t.transferid, t.transferkey)
    expect(done.status).toBe('STATUS_COMPLETE')
    const d = await client.transfers.details(t.transferid, { filesLimit: -1 })
    expect(d.files?.[0]?.md5).toBe(f.md5)
  })

  it('keeps at most 4 chunks in flight across uploads at once, through injected faults', async () => {
    const size = 6 * CHUNK
    const a = await fileOf('a.bin', size, 2)
    const b = await fileOf('b.bin', size, 3)
    const sender = new ServiceSender(client)
    await service.controls.throttle({ latencyMs: 100 })
    await service.controls.fault({ route: 'savefile', kind: 'status', status: 449, probability: 0.2 })
    await service.controls.fault({ route: 'savefile', kind: 'status', status: 406, probability: 0.1 })
    let most = 0
    const probe = setInterval(() => { most = Math.max(most, (sender as unknown as { chunks: { pending: number } }).chunks.pending) }, 5)
    try {
      const [ra, rb] = await Promise.all([send(sender, 'a.bin', a.path, size), send(sender, 'b.bin', b.path, size)])
      expect(ra.got.length).toBe(6)
      expect(rb.got.length).toBe(6)
      for (const [r, f] of [[ra, a], [rb, b]] as const) {
        await sender.complete(r.t.transferid, r.t.transferkey)
        const d = await client.transfers.details(r.t.transferid, { filesLimit: -1 })
        expect(d.files?.[0]?.md5).toBe(f.md5)
      }
    } finally {
      clearInterval(probe)
      await service.controls.clearFaults()
      await service.controls.throttle({ latencyMs: 0 })
    }
    expect(most).toBe(4)
  })

  it('adds a file to a transfer already sent, through its recorded key', async () => {
    const sender = new ServiceSender(client)
    const f = await fileOf('first.bin', 1000, 4)
    const { t } = await send(sender, 'first.bin', f.path, 1000)
    await sender.complete(t.transferid, t.transferkey)
    const added: string[] = []
    const adder = new ExistingTransferSender(sender, { keyOf: async (id) => (id === t.transferid ? t : null) }, async (id) => void added.push(id))
    const again = await adder.initialize({ subject: 'second.bin', transfersize: 10, to: [t.transferid] }, new AbortController().signal)
    expect(again.transferid).toBe(t.transferid)
    const g = await fileOf('second.bin', 2000, 5)
    await adder.uploadFile({ ...again, fileName: 'dir/second.bin', filePath: g.path, size: 2000, chunkSize: CHUNK, confirmed: new Set(),
      onChunkConfirmed: () => undefined, signal: new AbortController().signal })
    await adder.complete(again.transferid, again.transferkey)
    expect(added).toEqual([t.transferid])
    const d = await client.transfers.details(t.transferid, { filesLimit: -1 })
    expect(d.files?.map((x) => [x.filename, x.md5]).sort()).toEqual([['dir/second.bin', g.md5], ['first.bin', f.md5]])
    await expect(adder.initialize({ subject: 'x', transfersize: 1, to: ['nope'] }, new AbortController().signal)).rejects.toMatchObject({ httpStatus: 400 })
  })
})
