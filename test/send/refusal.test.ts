// A refusal by the service leaves the entry in outbox/ with its reason in the status,
// and fixing the cause sends it; network trouble is retried until it works.
import { afterEach, describe, expect, it } from 'vitest'
import { NetworkError, ServiceError } from '../../src/api/errors.js'
import { renderStatusText } from '../../src/status/mount-status.js'
import { md5, refusal } from './fake-service.js'
import { bytes, cp, Harness } from './harness.js'

let h: Harness
afterEach(async () => h?.cleanup())

describe('refusals and retries', () => {
  it('a bad address: failed with the reason; renaming the recipient folder sends it', async () => {
    h = await Harness.create()
    await h.fs.mkdir('/bob@exampel.con', 0o755)
    await cp(h.fs, '/bob@exampel.con/report.pdf', bytes(2000))
    h.service.failNext('initialize', () => refusal('InvalidEmail'))
    await h.settle()
    expect(h.service.completed()).toEqual([])
    const st = h.fs.status().entries.find((e) => e.name === 'bob@exampel.con/report.pdf')
    expect(st).toMatchObject({ state: 'failed' })
    expect(st?.lastError).toContain('InvalidEmail')
    expect(renderStatusText(h.fs.status())).toContain('InvalidEmail')
    expect(await h.ls('/bob@exampel.con')).toEqual(['report.pdf'])
    await h.fs.rename('/bob@exampel.con', '/bob@example.com')
    await h.settle()
    expect(h.service.sentAs('report.pdf')).toEqual([{ 'report.pdf': md5(bytes(2000)) }])
    expect(h.service.completed()[0]?.req.to).toEqual(['bob@example.com'])
    expect(await h.ls()).toEqual(['bob@example.com'])
  })

  it('refused during upload: the started transfer is dropped; a settings change and retry send a new one', async () => {
    h = await Harness.create()
    await cp(h.fs, '/huge.iso', bytes(5000))
    h.service.failNext('chunk', () => refusal('FileSizeBlockSender'))
    await h.settle()
    expect(h.fs.status().entries[0]).toMatchObject({ name: 'huge.iso', state: 'failed' })
    expect(h.fs.status().entries[0]?.lastError).toContain('FileSizeBlockSender')
    await h.fs.updateSettings({ days: 3 })
    await h.settle()
    expect(h.service.sentAs('huge.iso')).toEqual([{ 'huge.iso': md5(bytes(5000)) }])
    expect(h.service.completed()[0]?.req.days).toBe(3)
    expect(h.service.initializeCount('huge.iso')).toBe(2)
  })

  it('network errors and overload are retried with backoff until the send goes through', async () => {
    h = await Harness.create()
    await cp(h.fs, '/a.bin', bytes(4000))
    h.service.failNext('initialize', () => new NetworkError('connection refused', 'ECONNREFUSED'), 2)
    h.service.failNext('chunk', () => new ServiceError('overloaded', 503, 'ServiceInterruption'), 3)
    h.service.failNext('complete', () => new ServiceError('busy', 429, 'RateLimitExceeded', null, null, null, 30))
    await h.settle()
    expect(h.service.sentAs('a.bin')).toEqual([{ 'a.bin': md5(bytes(4000)) }])
    expect(h.service.initializeCount('a.bin')).toBe(3)
    expect(h.service.completed()).toHaveLength(1)
  })

  it('the status shows progress while sending, as text and JSON', async () => {
    h = await Harness.create()
    await cp(h.fs, '/p.bin', bytes(4096))
    let seen: string | null = null
    h.service.beforeCall = (c) => {
      if (c.op === 'chunk' && c.chunk === 2) seen = renderStatusText(h.fs.status())
    }
    await h.settle()
    expect(seen).toContain('sending  p.bin  2 KiB / 4 KiB')
    expect(h.fs.status().entries[0]).toMatchObject({ name: 'p.bin', state: 'done', bytesSent: 4096, transferid: 't1' })
    expect(JSON.stringify(h.fs.status())).not.toContain('transferkey')
  })
})
