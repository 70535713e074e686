// Pinning a transfer on this machine when things go wrong, through real mounts of the local
// service: a pinned 256 MiB fetch whose mount is SIGKILLed half way goes on after a new mount
// without asking again what is on disk; a network loss in the middle of a fetch is ridden out;
// a pinned transfer that expires on the service stays listed and readable until unpinned; one
// cancelled, deleted or expired while it is fetched stops at once with a line in the status; pins come
// back with a remount. The link is throttled so that "half way" can be caught by polling.
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { PinStatusEntry } from '../../src/pin/status.js'
import { run, unmountAll, useMounts, waitFor, waitForExit } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { cli, login, mount, transferFolder, useAccount, type Account } from './harness.js'
import { pinEntries, pinEntriesWhen, made, md5sum, state, total, type Made } from './pinning.js'

const MiB = 1024 * 1024
/** The largest range the read path asks at once: what a cut-short fetch may have to ask again. */
const CHUNK = 50 * MiB

/** The percentage a "pinned, fetching N%" state gives; null for any other state. */
function fetchingPercent(s: string): number | null {
  const m = /^pinned, fetching (\d+)%$/.exec(s)
  return m ? Number(m[1]) : null
}

/** The status entry of the pin made on `folder` (entries are named by the path pinned). */
async function entryOf(folder: string): Promise<PinStatusEntry | undefined> {
  return (await pinEntries()).find((e) => e.name.endsWith(path.basename(folder)))
}

/** The status entry of the pin made on `folder`, once status says it is pinned (or after 10 s, as it stands). */
async function pinnedEntryOf(folder: string): Promise<PinStatusEntry | undefined> {
  const mine = (entries: PinStatusEntry[]): PinStatusEntry | undefined => entries.find((e) => e.name.endsWith(path.basename(folder)))
  return mine(await pinEntriesWhen((entries) => mine(entries)?.state === 'pinned'))
}

async function pin(p: string): Promise<void> {
  const r = await cli(['pin', p])
  if (r.code !== 0) throw new Error(`transferfs pin ${p}: ${r.stderr}`)
}

/** Waits (polling the state attribute) until the pinned folder is at least `percent` on disk; the percentage seen. */
async function fetchedAtLeast(dir: string, percent: number, timeoutMs = 120_000): Promise<number> {
  let seen = ''
  const ok = await waitFor(async () => {
    seen = await state(dir)
    const p = fetchingPercent(seen)
    return seen === 'pinned' || (p !== null && p >= percent)
  }, timeoutMs, 100)
  if (!ok) throw new Error(`${dir} never reached ${percent}% (last state: ${seen})`)
  const p = fetchingPercent(seen)
  if (p === null) throw new Error(`${dir} was complete before it could be caught at ${percent}%: the link is not slow enough`)
  return p
}

async function untilPinned(dir: string, timeoutMs = 180_000): Promise<void> {
  let seen = ''
  const ok = await waitFor(async () => (seen = await state(dir)) === 'pinned', timeoutMs, 250)
  expect(ok, `${dir} never became pinned (last state: ${seen})`).toBe(true)
}

/** Resets the service's counters once nothing is being answered (a request under way would count after the reset). */
async function countFromZero(service: TestService): Promise<void> {
  await waitFor(async () => (await service.controls.counters()).inFlight === 0, 10_000, 50)
  await service.controls.resetCounters()
}

const names = async (a: Account): Promise<string[]> => readdir(path.join(a.mountDir, 'inbox'))

let service: TestService
let big: Made
let lossy: Made
let cancelled: Made
let deleted: Made
let expiring: Made
let small: Made

useMounts()

beforeAll(async () => {
  service = await startTestService()
  // Several chunks, and at the kill more on disk than a chunk (what a fetch begun again at 0
  // would serve beyond the bound): more would only make the upload and the fetches longer.
  big = await made(service, 'Big delivery', [{ name: 'big.bin', size: 256 * MiB }])
  lossy = await made(service, 'Over a bad link', [{ name: 'a.bin', size: 160 * MiB }, { name: 'b.bin', size: 96 * MiB + 4321 }])
  // Each a pass of at least 3 s through the throttle below: caught at 10%, it is still fetching when it ends.
  cancelled = await made(service, 'Soon cancelled', [{ name: 'c.bin', size: 96 * MiB }])
  deleted = await made(service, 'Soon deleted', [{ name: 'd.bin', size: 96 * MiB }])
  expiring = await made(service, 'Soon expired', [{ name: 'e.bin', size: 96 * MiB }], 1)
  small = await made(service, 'Small one', [{ name: 'one.bin', size: 3 * MiB + 17 }, { name: 'sub/two.bin', size: 1 * MiB }])
}, 600_000)

afterEach(async () => {
  // An outage or a throttle a failed test left behind must not slow the next one.
  await service?.resume()
  await service?.controls.throttle({})
})

afterAll(async () => {
  await unmountAll()
  await service?.close()
})

describe('a pinned fetch cut short', () => {
  it('SIGKILLed half way through 256 MiB, goes on after a new mount: every byte right, the file and at most a chunk served', async () => {
    const account = await useAccount(service)
    await login(service)
    const first = await mount(account)
    const dir = await transferFolder(account.mountDir, big.id)
    // 32 MiB/s: a whole pass takes at least 8 s, so the state is polled well inside it.
    await service.controls.throttle({ bytesPerSecond: 32 * MiB })
    await countFromZero(service)
    await pin(dir)
    const atKill = await fetchedAtLeast(dir, 40)
    process.kill(first, 'SIGKILL')
    expect(await waitForExit(first, 15_000)).toBe(true)
    expect(atKill).toBeLessThan(100)
    const servedBefore = (await service.controls.counters()).bytesServed
    expect(servedBefore).toBeLessThan(big.files[0]!.size)
    // A fetch begun again at 0 would serve more than the bound below allows.
    expect(servedBefore).toBeGreaterThan(CHUNK)

    // The same mount command again, on the same folder (the dead mount is cleaned up by it).
    await mount(account)
    const again = await transferFolder(account.mountDir, big.id)
    // The kill kept what was on disk: the new mount starts where the first stopped, not at 0.
    const resumed = fetchingPercent(await state(again))
    expect(resumed === null || resumed > 0, `state after the remount: ${await state(again)}`).toBe(true)
    await service.controls.throttle({})
    await untilPinned(again)

    const served = (await service.controls.counters()).bytesServed
    expect(served).toBeGreaterThanOrEqual(big.files[0]!.size)
    expect(served, `${atKill}% on disk at the kill; ${servedBefore} bytes served before it`).toBeLessThanOrEqual(big.files[0]!.size + CHUNK)
    // Every byte right, from the cache alone.
    expect(await md5sum(path.join(again, 'big.bin'))).toBe(big.files[0]!.md5)
    expect((await service.controls.counters()).bytesServed).toBe(served)
    expect(await pinnedEntryOf(again)).toMatchObject({ state: 'pinned', bytesCached: total(big), bytesTotal: total(big) })
  }, 400_000)

  it('a network loss in the middle is ridden out: the pin completes, nothing served twice beyond a chunk', async () => {
    // A read deadline shorter than the outage: the fetch itself gives up on the service and
    // the pin has to wait for it to come back, not only the retries of one request.
    const account = await useAccount(service, { TRANSFERFS_READ_TIMEOUT_MS: '2s' })
    await login(service)
    await mount(account)
    const dir = await transferFolder(account.mountDir, lossy.id)
    await service.controls.throttle({ bytesPerSecond: 32 * MiB })
    await countFromZero(service)
    await pin(dir)
    await fetchedAtLeast(dir, 25)
    await service.pause()
    try {
      await new Promise((resolve) => setTimeout(resolve, 6000))
      // An outage is not a failure: the pin waits for the service.
      const during = await entryOf(dir)
      expect(during?.state, JSON.stringify(during)).not.toBe('failed')
      expect(fetchingPercent(await state(dir))).not.toBeNull()
    } finally {
      await service.resume()
    }
    await untilPinned(dir)
    const served = (await service.controls.counters()).bytesServed
    expect(served).toBeGreaterThanOrEqual(total(lossy))
    expect(served).toBeLessThanOrEqual(total(lossy) + CHUNK)
    await service.controls.throttle({})
    for (const f of lossy.files) expect(await md5sum(path.join(dir, f.name)), f.name).toBe(f.md5)
    expect((await service.controls.counters()).bytesServed).toBe(served)
    expect(await pinnedEntryOf(dir)).toMatchObject({ state: 'pinned', note: null })
  }, 300_000)
})

describe('a transfer that ends on the service while pinned', () => {
  // The service's downloads of each answer 404 from then on.
  const ends = {
    cancelled: (t: Made) => service.controls.setStatus(t.id, 'STATUS_CANCELLED'),
    deleted: (t: Made) => service.controls.setStatus(t.id, 'STATUS_DELETED'),
    // Its lifetime (a day) and an hour: the other transfers here live for weeks.
    expired: (t: Made) => service.controls.advanceClock(t.expiredate - t.sentdate + 60 * 60 * 1000),
  }
  it.each([
    ['cancelled', () => cancelled],
    ['deleted', () => deleted],
    ['expired', () => expiring],
  ] as const)('%s while its pin is fetching: stops at once with a line in the status, and the mount goes on', async (how, which) => {
    const t = which()
    // A read deadline far beyond the wait below: a stop that waited for it would not be seen in time.
    // Listings refreshed often, so that a cancelled or deleted transfer leaves inbox/ before the unpin below.
    const account = await useAccount(service, { TRANSFERFS_READ_TIMEOUT_MS: '10m', TRANSFERFS_LISTING_TTL_MS: '500' })
    await login(service)
    await mount(account)
    const dir = await transferFolder(account.mountDir, t.id)
    await service.controls.throttle({ bytesPerSecond: 32 * MiB })
    await pin(dir)
    const at = await fetchedAtLeast(dir, 10)
    await ends[how](t)

    let entry: PinStatusEntry | undefined
    const stopped = await waitFor(async () => (entry = await entryOf(dir))?.state === 'failed', 60_000, 500)
    expect(stopped, `caught at ${at}%; status: ${JSON.stringify(entry)}`).toBe(true)
    expect(entry!.note).toMatch(/could not be fetched/)
    expect(entry!.bytesCached).toBeLessThan(total(t))
    const text = await run('cat', [path.join(account.mountDir, '.status')])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toMatch(new RegExp(`^failed .*${t.subject}`, 'm'))
    expect(text.stdout).toMatch(/could not be fetched/)

    // Nothing more is asked of it: what was served stays put.
    await countFromZero(service)
    await new Promise((resolve) => setTimeout(resolve, 2000))
    expect((await service.controls.counters()).routes.download ?? 0).toBe(0)

    // The mount goes on: other transfers list and read right.
    await service.controls.throttle({})
    const other = await transferFolder(account.mountDir, small.id)
    for (const f of small.files) expect(await md5sum(path.join(other, f.name)), f.name).toBe(f.md5)

    // Unpinned by the path it had, whether or not inbox/ still shows it (an expired one stays).
    // A listing is refreshed behind the one it answers with: looked at over a few refreshes.
    const shown = async (): Promise<boolean> => (await names(account)).some((n) => n.endsWith(`(${t.id})`))
    if (how === 'expired') {
      await new Promise((resolve) => setTimeout(resolve, 1500))
      expect(await shown()).toBe(true)
      expect(await shown()).toBe(true)
    } else expect(await waitFor(async () => !(await shown()), 10_000, 250)).toBe(true)
    const unpin = await cli(['unpin', dir])
    expect(unpin.code, unpin.stderr).toBe(0)
    expect(unpin.stdout).toMatch(/^unpinned inbox\//)
    // status.json is rewritten within a second of a change.
    expect(await waitFor(async () => (await entryOf(dir)) === undefined, 5_000, 250)).toBe(true)
  }, 300_000)
})

describe('pins across mounts', () => {
  it('survive an unmount and a new mount: the attribute still says 1 and status lists them', async () => {
    const account = await useAccount(service)
    await login(service)
    const pid = await mount(account)
    const dir = await transferFolder(account.mountDir, small.id)
    const set = await run('setfattr', ['-n', 'user.transferfs.pin', '-v', '1', dir])
    expect(set.code, set.stderr).toBe(0)
    await untilPinned(dir)
    const off = await cli(['unmount', account.mountDir])
    expect(off.code, off.stderr).toBe(0)
    expect(await waitForExit(pid, 15_000)).toBe(true)

    await mount(account)
    const again = await transferFolder(account.mountDir, small.id)
    const attr = await run('getfattr', ['--only-values', '-n', 'user.transferfs.pin', again])
    expect(attr.code, attr.stderr).toBe(0)
    expect(attr.stdout).toBe('1')
    expect(await state(again)).toBe('pinned')
    const entries = await pinEntriesWhen((e) => e.length === 1 && e[0]!.state === 'pinned')
    expect(entries).toHaveLength(1)
    expect(entries[0]).toMatchObject({ state: 'pinned', files: 2, bytesCached: total(small), bytesTotal: total(small) })
    expect(entries[0]!.name).toContain('Small one')
  }, 120_000)
})

// Its transfers are made here, as the service's clock stands now (the tests above move it a day on).
describe('a pinned transfer that expires on the service', () => {
  it('stays in inbox/, marked expired and read from the cache, until unpinned; an unpinned one leaves', async () => {
    const pinnedOne = await made(service, 'Pinned past expiry', [{ name: 'k.bin', size: 5 * MiB + 3 }, { name: 'docs/l.bin', size: 2 * MiB }], 1)
    const leftOne = await made(service, 'Left to expire', [{ name: 'x.bin', size: MiB }], 1)
    const account = await useAccount(service, { TRANSFERFS_LISTING_TTL_MS: '500ms' })
    await login(service)
    await mount(account)
    const dir = await transferFolder(account.mountDir, pinnedOne.id)
    await pin(dir)
    await untilPinned(dir)
    const pinnedName = path.basename(dir)
    const leftName = path.basename(await transferFolder(account.mountDir, leftOne.id))

    await service.controls.advanceClock(pinnedOne.expiredate - pinnedOne.sentdate + 60 * 60 * 1000)
    // The listing refreshes: the unpinned expired transfer leaves inbox/ as any expired one does.
    const refreshed = await waitFor(async () => !(await names(account)).includes(leftName), 30_000, 250)
    expect(refreshed, (await names(account)).join(', ')).toBe(true)
    expect(await names(account)).toContain(pinnedName)

    const json = JSON.parse((await run('cat', [path.join(dir, '.transfer.json')])).stdout) as { id: string; isexpired: boolean }
    expect(json).toMatchObject({ id: pinnedOne.id, isexpired: true })
    await countFromZero(service)
    for (const f of pinnedOne.files) expect(await md5sum(path.join(dir, f.name)), f.name).toBe(f.md5)
    expect((await service.controls.counters()).bytesServed).toBe(0)
    expect(await state(dir)).toBe('pinned')

    const un = await cli(['unpin', dir])
    expect(un.code, un.stderr).toBe(0)
    const gone = await waitFor(async () => !(await names(account)).includes(pinnedName), 30_000, 250)
    expect(gone, (await names(account)).join(', ')).toBe(true)
  }, 180_000)
})
