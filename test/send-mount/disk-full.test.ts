// A write that failed is never sent, on a disk that really fills: the data folder is a
// 16 MiB tmpfs, `cp` of a larger file into outbox/ fails with "No space left on device",
// and no transfer goes out; `.status` says why. Once there is room, the same `cp` arrives
// whole, exactly once.
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TransferClient } from '../../src/api/client.js'
import { run, unmountAll, waitFor } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { mount, type Account } from '../mount/harness.js'
import { clientAs, md5, outboxDrained, sendingAccount, sentRecords, transferFiles } from './helpers.js'

const MiB = 1024 * 1024
const user = { email: 'full@example.com', password: 'full-disk-pw' }
let service: TestService
let client: TransferClient
let account: Account
let dataDir = ''

beforeAll(async () => {
  service = await startTestService()
  await service.controls.createUser(user)
  client = await clientAs(service, user)
  account = await sendingAccount(service, user, { TRANSFERFS_MIN_FREE_BYTES: '1M' })
  dataDir = path.join(account.home, 'data')
  await mkdir(dataDir, { recursive: true })
  const r = await run('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0700', 'tmpfs', dataDir])
  if (r.code !== 0) throw new Error(`cannot mount a tmpfs: ${r.stderr}`)
  await mount(account)
}, 60_000)

afterAll(async () => {
  await unmountAll()
  if (dataDir) await run('umount', ['-l', dataDir])
  await client?.close()
  await service?.close()
})

describe('a disk that fills during a copy', () => {
  it('the copy fails, nothing is sent, .status says why; with room again the same copy arrives whole', async () => {
    const data = randomBytes(24 * MiB)
    const src = path.join(account.home, 'big.bin')
    await writeFile(src, data)
    await service.controls.resetCounters()
    const target = path.join(account.mountDir, 'outbox', 'big.bin')
    const first = await run('cp', [src, target], { timeoutMs: 60_000 })
    expect(first.code).not.toBe(0)
    expect(first.stderr).toMatch(/no space left on device/i)
    // Well past the settle time: the entry stays, failed, and the service saw no transfer.
    const status = path.join(account.mountDir, '.status')
    expect(await waitFor(async () => /failed\s+big\.bin/.test(await readFile(status, 'utf8')), 15_000)).toBe(true)
    await new Promise((r) => setTimeout(r, 1500))
    const text = await readFile(status, 'utf8')
    expect(text).toMatch(/ENOSPC/)
    expect(text).toMatch(/copy it again in full/)
    const routes = (await service.controls.counters()).routes
    expect(routes.initialize ?? 0).toBe(0)
    expect(routes.savefile ?? 0).toBe(0)
    expect(await sentRecords(account)).toEqual([])

    // Room again: the same cp, and the file arrives whole, once.
    const grow = await run('mount', ['-o', 'remount,size=64m', dataDir])
    expect(grow.code, grow.stderr).toBe(0)
    const second = await run('cp', [src, target], { timeoutMs: 60_000 })
    expect(second.code, second.stderr).toBe(0)
    expect(await outboxDrained(account)).toBe(true)
    const sent = await sentRecords(account)
    expect(sent).toHaveLength(1)
    expect(await transferFiles(client, sent[0]!.transferid)).toEqual(new Map([['big.bin', md5(data)]]))
    expect((await service.controls.counters()).routes.initialize).toBe(1)
  })
})
