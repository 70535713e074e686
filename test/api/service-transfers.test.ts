// Transfers against the real local service: the whole life of a transfer, details with
// their parameters, forwarding, and inbox iteration over many pages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ServiceError } from '../../src/api/errors.js'
import { md5Hex } from '../../src/api/md5.js'
import { newUser, startHarness } from './harness.js'
import type { Harness } from './harness.js'

let h: Harness

beforeAll(async () => {
  h = await startHarness()
})
afterAll(async () => {
  await h?.close()
})

function bytes(n: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(n)
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed * 7 + (i >> 8)) & 0xff
  return b
}

describe('transfers', () => {
  it('initialize, upload, Complete, details, forward', async () => {
    const client = h.client()
    await client.auth.login(h.user.email, h.user.password)
    const init = await client.transfers.initialize({ subject: 'api test', message: 'hello', days: 3, to: ['r1@example.com'] })
    expect(init.transferurl).toMatch(/^https:\/\//)
    const content = bytes(1234, 1)
    await client.upload.uploadFile({
      transferUrl: init.transferurl, transferId: init.transferid, transferKey: init.transferkey,
      fileName: 'docs/a b+c.txt', source: { size: content.length, read: async (s, e) => content.subarray(s, e) },
    })
    const empty = Buffer.alloc(0)
    await client.upload.uploadFile({
      transferUrl: init.transferurl, transferId: init.transferid, transferKey: init.transferkey,
      fileName: 'empty.bin', source: { size: 0, read: async () => empty },
    })
    const completed = await client.transfers.complete(init.transferid, init.transferkey)
    expect(completed.status).toBe('STATUS_COMPLETE')
    // Complete is safe to repeat.
    expect((await client.transfers.complete(init.transferid, init.transferkey)).status).toBe('STATUS_COMPLETE')

    const details = await client.transfers.details(init.transferid, { filesLimit: -1, withDetails: true })
    expect(details.subject).toBe('api test')
    const byName = new Map(details.files.map((f) => [f.filename, f]))
    expect(byName.get('docs/a b+c.txt')?.md5).toBe(md5Hex(content))
    expect(byName.get('empty.bin')?.filesize).toBe(0)

    const slim = await client.transfers.details(init.transferid, { withDetails: false })
    expect(slim.files ?? []).toHaveLength(0)
    const noFiles = await client.transfers.details(init.transferid, { excludeFiles: true, excludeDownloads: true })
    expect(noFiles.files ?? []).toHaveLength(0)
    const props = await client.transfers.details(init.transferid, { fileProperties: ['filename', 'md5'] })
    expect(Object.keys(props.files[0]!).sort()).toEqual(['filename', 'md5'])

    const file = byName.get('docs/a b+c.txt')!
    const got = await client.download.fetchRange(file.downloadurl, 0, content.length)
    expect(got.equals(content)).toBe(true)

    const forwarded = await client.transfers.forward(init.transferid, ['r2@example.com'])
    const recipient = forwarded.recipients.find((r) => r.email === 'r2@example.com')
    expect(recipient?.downloadlink).toMatch(/trackid=/)
    const trackId = new URL(recipient!.downloadlink!).searchParams.get('trackid')!
    const anonymous = h.client()
    const viaTrack = await anonymous.transfers.details(null, { trackId })
    expect(viaTrack.id).toBe(init.transferid)
    expect(viaTrack.key).toBeFalsy()
  })

  it('details of a protected transfer need its password; errors carry the service status', async () => {
    const client = h.client()
    const init = await client.transfers.initialize({ subject: 'secret', password: 's3cret' })
    await client.transfers.complete(init.transferid, init.transferkey).catch(() => undefined)
    const missing = await client.transfers.details(init.transferid).catch((e: unknown) => e)
    expect((missing as ServiceError).responsestatus).toBe('PasswordRequired')
    expect((missing as ServiceError).message).toMatch(/password protected/)
    const wrong = await client.transfers.details(init.transferid, { password: 'nope' }).catch((e: unknown) => e)
    expect((wrong as ServiceError).responsestatus).toBe('AccessDenied')
    const ok = await client.transfers.details(init.transferid, { password: 's3cret' })
    expect(ok.id).toBe(init.transferid)
    const unknown = await client.transfers.details('no-such-transfer').catch((e: unknown) => e)
    expect((unknown as ServiceError).httpStatus).toBe(404)
  })

  it('inbox iteration returns every transfer of a 2,500-transfer inbox exactly once', async () => {
    const user = await newUser(h)
    await h.control('POST', '/inbox/seed', { to: user.email, count: 2500 })
    const client = h.client()
    await client.auth.login(user.email, user.password)
    for (const take of [1000, 333]) {
      await h.control('POST', '/counters/reset')
      const ids: string[] = []
      for await (const t of client.transfers.inboxAll({ take })) ids.push(t.id)
      expect(ids).toHaveLength(2500)
      expect(new Set(ids).size).toBe(2500)
      expect((await h.counters()).routes.inbox).toBe(Math.floor(2500 / take) + 1)
    }
    const page = await client.transfers.inbox({ take: 10, skip: 5, search: 'Seeded', includeExpired: true, ignoreDeletedPortals: true, from: 0 })
    expect(page.transfers).toHaveLength(10)
    expect(page.inboxOwner.email).toBe(user.email)
  })
})
