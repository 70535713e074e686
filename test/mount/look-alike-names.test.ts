// A transfer of 10,000 files whose names agree in their first 300 bytes, through a real
// mount. Cut to 255 bytes such names all meet; telling them apart used to cost the square of
// their number on the thread that answers every FUSE operation, so one such transfer froze the
// whole mount, and again at each refresh. Here the folder lists promptly, every name is
// distinct and stays the same across a refresh, and `.status` and another transfer's file
// answer meanwhile. The limits are deadlines, far above what the work takes.
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { byteLength, NAME_MAX_BYTES } from '../../src/vfs/names.js'
import { run, unmountAll, waitFor } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { login, mount, transferFolder, useAccount, type Account } from './harness.js'

const FILES = 10_000
/** What every file name starts with: the seeded names are `<STEM>-1-<n>.txt`. */
const STEM = 'x'.repeat(300)
const LIST_DEADLINE_MS = 2000
const ANSWER_DEADLINE_MS = 1000
/** A listing is refreshed once this old (the default is 30 s). */
const LISTING_TTL_MS = 1500

let service: TestService
let account: Account
let wideId: string
let neighbourFile: string

beforeAll(async () => {
  service = await startTestService()
  const [neighbour] = await service.controls.seedInbox(service.user.email, 1, { subjectPrefix: 'Neighbour' })
  const [wide] = await service.controls.seedInbox(service.user.email, 1, { subjectPrefix: 'Look-alike', files: FILES, fileStem: STEM })
  wideId = wide!
  account = await useAccount(service, { TRANSFERFS_LISTING_TTL_MS: String(LISTING_TTL_MS) })
  await login(service)
  await mount(account)
  // Read by id: no listing of inbox/ comes before the tests'.
  neighbourFile = path.join(account.mountDir, 'by-id', neighbour!, 'file-1.txt')
}, 600_000)

afterAll(async () => {
  await unmountAll()
  await service?.close()
})

async function timed(cmd: string, args: string[]): Promise<{ ms: number; code: number; stdout: string; stderr: string }> {
  const started = performance.now()
  const r = await run(cmd, args, { timeoutMs: 120_000 })
  return { ...r, ms: performance.now() - started }
}

/** `ls` of `dir`, with `.status` and the neighbour's file read while it runs. */
async function listBeside(dir: string): Promise<string[]> {
  const listing = timed('ls', ['-1A', dir])
  const [status, neighbour] = await Promise.all([timed('cat', [path.join(account.mountDir, '.status')]), timed('cat', [neighbourFile])])
  const ls = await listing
  expect(ls.code, ls.stderr).toBe(0)
  expect(ls.ms, `ls of ${dir}`).toBeLessThan(LIST_DEADLINE_MS)
  expect(status.code, status.stderr).toBe(0)
  expect(status.ms, '.status during the listing').toBeLessThan(ANSWER_DEADLINE_MS)
  expect(neighbour.stdout).toBe('Content of seeded file 1\n')
  expect(neighbour.ms, "another transfer's file during the listing").toBeLessThan(ANSWER_DEADLINE_MS)
  return ls.stdout.split('\n').filter(Boolean)
}

describe('a transfer of 10,000 names that agree in their first 300 bytes', () => {
  it('lists within its deadline, every name distinct and within 255 bytes, and the rest of the mount answers meanwhile', async () => {
    // Listing inbox/ lays out the newest transfers' files (the desktop's thumbnails are made from them).
    await listBeside(path.join(account.mountDir, 'inbox'))
    const names = await listBeside(await transferFolder(account.mountDir, wideId))
    expect(names).toHaveLength(FILES + 1)
    expect(new Set(names).size).toBe(FILES + 1)
    for (const name of names) expect(byteLength(name)).toBeLessThanOrEqual(NAME_MAX_BYTES)
    const cut = names.filter((n) => n !== '.transfer.json')
    for (const name of cut) expect(name).toMatch(/^x+…~[0-9a-f]{8}\.txt$/u)
  }, 120_000)

  it('keeps every name across a refresh, and the rest of the mount answers during and after it', async () => {
    const wideDir = await transferFolder(account.mountDir, wideId)
    const before = (await readdir(wideDir)).sort()
    const counts = await service.controls.counters()
    const asked = (c: typeof counts) => (c.routes.inbox ?? 0) + (c.routes.details ?? 0)
    await new Promise((r) => setTimeout(r, LISTING_TTL_MS + 200))
    // Listing a stale folder starts its refresh; the listing and its neighbours answer meanwhile.
    await listBeside(wideDir)
    expect(await waitFor(async () => asked(await service.controls.counters()) > asked(counts), 30_000)).toBe(true)
    await new Promise((r) => setTimeout(r, 500))
    const after = await listBeside(wideDir)
    expect(after.sort()).toEqual(before)
  }, 120_000)
})
