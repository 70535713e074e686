// A pinned file the service answers 500 for every time, through a real mount of the local
// service (its fault switch): once the retry policy gives up (the read deadline, kept short
// here by readTimeoutMs), the pin says the file failed, in `.status` and in the state
// attribute, and stops asking for it (the service's counters stand still); pinning it again
// tries again.
import path from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { PinStatusEntry } from '../../src/pin/status.js'
import { run, unmountAll, waitFor } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { cli, login, mount, transferFolder, useAccount, type Account } from './harness.js'
import { pinEntries, made, md5sum, state, type Made } from './pinning.js'

/** The read deadline, which bounds how long the policy retries one fetch. */
const DEADLINE_MS = 3000

let service: TestService
let account: Account
let failing: Made

beforeAll(async () => {
  service = await startTestService()
  failing = await made(service, 'Always failing', [{ name: 'broken.bin', size: 2 * 1024 * 1024 + 7 }])
  account = await useAccount(service, { TRANSFERFS_READ_TIMEOUT_MS: `${DEADLINE_MS}ms` })
  await login(service)
  await mount(account)
}, 300_000)

afterAll(async () => {
  await unmountAll()
  await service?.close()
})

async function pin(dir: string): Promise<void> {
  const r = await cli(['pin', dir])
  if (r.code !== 0) throw new Error(`transferfs pin ${dir}: ${r.stderr}`)
}

it('a file answered 500 every time: the pin says it failed, stops asking, and pinning again tries again', async () => {
  const dir = await transferFolder(account.mountDir, failing.id)
  await service.controls.fault({ route: 'download', kind: 'status', status: 500, probability: 1 })
  await pin(dir)

  let entry: PinStatusEntry | undefined
  let attr = ''
  const failed = await waitFor(async () => {
    entry = (await pinEntries())[0]
    attr = await state(dir)
    return entry?.state === 'failed' && attr.startsWith('pinned, failed')
  }, 60_000, 250)
  expect(failed, `status ${JSON.stringify(entry)}, attribute "${attr}"`).toBe(true)
  expect(attr).toBe('pinned, failed: the service answers 500 every time')
  expect(await state(path.join(dir, 'broken.bin'))).toBe('pinned, failed: the service answers 500 every time')
  expect(entry!.note).toMatch(/^1 file could not be fetched: the service answers 500 every time; pin it again/)
  const text = (await run('cat', [path.join(account.mountDir, '.status')])).stdout
  expect(text).toMatch(/failed .*Always failing/)
  expect(text).toMatch(/could not be fetched: the service answers 500 every time/)

  // It is asked no more: the counter stands still over more than a deadline and a pause.
  const before = (await service.controls.counters()).routes.download ?? 0
  expect(before).toBeGreaterThan(0)
  await new Promise((r) => setTimeout(r, 2 * DEADLINE_MS + 5000))
  expect((await service.controls.counters()).routes.download ?? 0).toBe(before)

  // Pinned again once the service serves it: fetched, whole.
  await service.controls.clearFaults()
  await pin(dir)
  expect(await waitFor(async () => (attr = await state(dir)) === 'pinned', 60_000, 250), attr).toBe(true)
  expect(await md5sum(path.join(dir, 'broken.bin'))).toBe(failing.files[0]!.md5)
  expect((await service.controls.counters()).routes.download ?? 0).toBeGreaterThan(before)
}, 180_000)
