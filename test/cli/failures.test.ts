// The failures a user meets, each with a clear message and its own exit code: never
// signed in, a session renewed silently after 8 days, a session too old to renew, an
// expired transfer, and the service gone. One service, whose clock only moves forward,
// so the steps run in order.
import { copyFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EXIT } from '../../src/cli/output/exit-codes.js'
import { tempDir, unmountAll } from '../support/mount.js'
import { cli, jsonOf, startWorld, stopWorld, type CliWorld } from './harness.js'

const DAY = 86_400_000
let w: CliWorld
let shortLived: string

beforeAll(async () => {
  w = await startWorld()
  await w.service.controls.seedInbox(w.service.user.email, 2)
  const t = await w.client.transfers.initialize({ subject: 'three days', days: 3 })
  await w.client.upload.uploadFile({ transferUrl: t.transferurl, transferId: t.transferid, transferKey: t.transferkey, fileName: 'x.txt', source: { size: 1, read: async () => Buffer.from('x') } })
  shortLived = (await w.client.transfers.complete(t.transferid, t.transferkey)).id
})
afterAll(async () => {
  await stopWorld(w)
  await unmountAll()
})

describe('failures', () => {
  it('not signed in: exit 3 and the command to run', async () => {
    const saved = process.env.TRANSFERFS_CONFIG_DIR
    process.env.TRANSFERFS_CONFIG_DIR = path.join(await tempDir(), 'config')
    try {
      const r = await cli(['inbox'])
      expect(r.code).toBe(EXIT.auth)
      expect(r.stderr).toContain('not signed in: run `transferfs login --email <address>` first')
    } finally {
      process.env.TRANSFERFS_CONFIG_DIR = saved
    }
  })

  it('after 8 days the login token has expired: the session is renewed once, silently', async () => {
    await w.service.controls.advanceClock(8 * DAY)
    await w.service.controls.resetCounters()
    const r = await cli(['inbox', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(jsonOf<unknown[]>(r)).toHaveLength(2)
    expect((await w.service.controls.counters()).refreshCalls).toBe(1)
  })

  it('an expired transfer cannot be downloaded: exit 4 with the reason', async () => {
    const r = await cli(['download', shortLived, '-o', await tempDir()])
    expect(r.code).toBe(EXIT.notFound)
    expect(r.stderr).toContain(`transfer ${shortLived} has expired`)
    const info = await cli(['info', shortLived])
    expect(info.code).toBe(0)
    expect(info.stdout).toMatch(/Status:\s+complete, expired/)
  })

  it('a session older than the refresh token (3 months): exit 3, sign in again', async () => {
    await w.service.controls.advanceClock(100 * DAY)
    const r = await cli(['inbox'])
    expect(r.code).toBe(EXIT.auth)
    expect(r.stderr).toMatch(/sign in again \(transferfs login\)/)
  })

  it('the service down: exit 5 and a hint to check the URL', async () => {
    // The certificate file goes with the service; a real user's copy stays.
    const ca = path.join(await tempDir(), 'ca.pem')
    await copyFile(w.service.ca, ca)
    process.env.TRANSFERFS_CA = ca
    await w.service.close()
    const r = await cli(['info', 'anything'], { timeoutMs: 110_000 })
    expect(r.code).toBe(EXIT.unreachable)
    expect(r.stderr).toMatch(/transferfs: .*(ECONNREFUSED|connect|reach)/i)
    expect(r.stderr).toContain('hint: check that the service is running and reachable')
  })
})
