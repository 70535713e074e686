// Pinning transfers on this machine through a real mount: `transferfs pin` and the
// user.transferfs.pin attribute fetch a transfer's files into the disk cache without anyone
// reading them (the service's counters tell), the files then read right with the service
// gone, other reads past the cache's budget evict none of it, a pin that cannot fit is
// refused at once with nothing fetched, `free` drops what no pin keeps, and a pinned inbox
// keeps a transfer that arrives while mounted.
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run, unmountAll, waitFor, waitForExit } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { cli, login, mount, transferFolder, useAccount, type Account } from './harness.js'
import { made, md5sum, shown, state, total, type Made } from './pinning.js'

const MiB = 1024 * 1024

describe('pinning a transfer on this machine', () => {
  let service: TestService
  let account: Account
  let pinned: Made
  let other: Made
  let more: Made
  let big: Made
  let pid: number
  const folder = (m: Made): Promise<string> => transferFolder(account.mountDir, m.id)

  beforeAll(async () => {
    service = await startTestService()
    pinned = await made(service, 'Pinned report', [{ name: 'a.bin', size: 3 * MiB }, { name: 'docs/b.bin', size: 20 * MiB + 12345 }])
    other = await made(service, 'Other', [{ name: 'c.bin', size: 24 * MiB }])
    more = await made(service, 'More', [{ name: 'd.bin', size: 30 * MiB }])
    big = await made(service, 'Too big', [{ name: 'e.bin', size: 50 * MiB }])
    // A 64 MiB cache: the pinned transfer fits, and reading the others fills the rest past its budget.
    account = await useAccount(service, { TRANSFERFS_DISK_CACHE_BYTES: '64M' })
    await login(service)
    pid = await mount(account)
  }, 300_000)

  afterAll(async () => {
    await unmountAll()
    await service?.close()
  })

  it('transferfs pin fetches a transfer into the cache without a read, verified, and says so', async () => {
    const dir = await folder(pinned)
    expect(await state(dir)).toBe('online')
    await service.controls.resetCounters()
    const r = await cli(['pin', dir])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/pinned inbox\/.*Pinned report.*: 2 files/)
    expect(await waitFor(async () => (await state(dir)) === 'pinned', 60_000, 250), await state(dir)).toBe(true)
    const c = await service.controls.counters()
    expect(c.bytesServed).toBeGreaterThanOrEqual(total(pinned))
    expect(c.bytesServed).toBeLessThanOrEqual(total(pinned) + MiB)
    // Verified: each piece was checked against the service's hash of it.
    expect(c.bytesHashed).toBeGreaterThanOrEqual(total(pinned) - 3 * MiB)
    expect(await state(path.join(dir, 'docs', 'b.bin'))).toBe('pinned')
    expect((await run('getfattr', ['--only-values', '-n', 'user.transferfs.pin', dir])).stdout).toBe('1')
    expect(await state(path.join(await folder(other), 'c.bin'))).toBe('online')

    type Pins = { entries: Array<{ name: string; state: string; bytesCached: number; bytesTotal: number }>; cache: { pinnedBytes: number } }
    let pins!: Pins
    // status.json is rewritten within a second of a change.
    expect(await waitFor(async () => {
      pins = (JSON.parse((await cli(['status', '--json'])).stdout) as { pins: Pins }).pins
      return pins.entries[0]?.state === 'pinned'
    }, 10_000, 250), JSON.stringify(pins)).toBe(true)
    expect(pins.entries).toHaveLength(1)
    expect(pins.entries[0]).toMatchObject({ state: 'pinned', bytesCached: total(pinned), bytesTotal: total(pinned) })
    expect(pins.cache.pinnedBytes).toBeGreaterThanOrEqual(total(pinned))
    const text = await run('cat', [path.join(account.mountDir, '.status')])
    expect(text.stdout).toMatch(/kept offline: 1 pin/)
  }, 120_000)

  it('a pinned file reads right with the service gone, at once', async () => {
    const dir = await folder(pinned)
    await service.pause()
    try {
      for (const f of pinned.files) expect(await md5sum(path.join(dir, f.name)), f.name).toBe(f.md5)
    } finally {
      await service.resume()
    }
  }, 120_000)

  it('setfattr pins and unpins; getfattr shows the state', async () => {
    const file = path.join(await folder(other), 'c.bin')
    const set = await run('setfattr', ['-n', 'user.transferfs.pin', '-v', '1', file])
    expect(set.code, set.stderr).toBe(0)
    expect(await waitFor(async () => (await state(file)) === 'pinned', 60_000, 250), await state(file)).toBe(true)
    // What a file manager reads in one getxattr: the state, pinned itself, carries its page.
    expect(await shown(file)).toBe('pinned\npin page')
    const unset = await run('setfattr', ['-x', 'user.transferfs.pin', file])
    expect(unset.code, unset.stderr).toBe(0)
    // Unpinned, its bytes are ordinary cache.
    expect(await state(file)).toBe('cached')
    expect(await shown(file)).toBe('cached\npage')
    // Not listed: copies that keep attributes (cp -a, rsync -X) do not carry it off the mount.
    expect((await run('getfattr', ['-d', '-m', '-', file])).stdout).not.toContain('user.transferfs.shown')
    const again = await run('setfattr', ['-x', 'user.transferfs.pin', file])
    expect(again.stderr).toMatch(/No such attribute/)
    const wrong = await run('setfattr', ['-n', 'user.transferfs.state', '-v', 'pinned', file])
    expect(wrong.code).not.toBe(0)
  }, 120_000)

  it('free drops the bytes of what no pin keeps and keeps what a pin keeps', async () => {
    const otherDir = await folder(other)
    expect(await state(path.join(otherDir, 'c.bin'))).toBe('cached')
    const r = await cli(['free', otherDir])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/freed 24(\.\d)? MiB/)
    expect(await state(path.join(otherDir, 'c.bin'))).toBe('online')
    const stays = await cli(['free', await folder(pinned)])
    expect(stays.code, stays.stderr).toBe(0)
    expect(stays.stdout).toMatch(/freed 0 B/)
    expect(await state(await folder(pinned))).toBe('pinned')
  }, 60_000)

  it('a pin that cannot fit is refused at once, saying how much room it needs, and fetches nothing', async () => {
    const dir = await folder(big)
    await service.controls.resetCounters()
    const r = await cli(['pin', dir])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/No space left on device/)
    expect(r.stderr).toMatch(/needs [\d.]+ MiB more/)
    const set = await run('setfattr', ['-n', 'user.transferfs.pin', '-v', '1', dir])
    expect(set.code).not.toBe(0)
    expect(set.stderr).toMatch(/No space left on device/)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect((await service.controls.counters()).bytesServed).toBe(0)
    expect(await state(dir)).toBe('online')
    expect((await cli(['status', '--json'])).stdout).not.toContain('Too big')
  }, 60_000)

  it('reads of other files past the budget evict no pinned byte', async () => {
    for (const m of [other, more, big]) {
      const dir = await folder(m)
      for (const f of m.files) expect(await md5sum(path.join(dir, f.name))).toBe(f.md5)
    }
    // The others were read past what the budget leaves them: it was pressed, and held.
    const cache = (JSON.parse((await cli(['status', '--json'])).stdout) as { pins: { cache: { pinnedBytes: number; otherBytes: number; budgetBytes: number } } }).pins.cache
    expect(cache.budgetBytes).toBe(64 * MiB)
    expect(cache.otherBytes).toBeGreaterThan(0)
    expect(cache.pinnedBytes + cache.otherBytes).toBeLessThanOrEqual(cache.budgetBytes)
    expect(await state(path.join(await folder(other), 'c.bin'))).not.toBe('cached')
    const off = await cli(['unmount', account.mountDir])
    expect(off.code, off.stderr).toBe(0)
    expect(await waitForExit(pid, 15_000)).toBe(true)
    // A new mount: nothing in memory, only the disk cache. Not a byte of the pinned files is fetched again.
    pid = await mount(account)
    const dir = await folder(pinned)
    await service.controls.resetCounters()
    for (const f of pinned.files) expect(await md5sum(path.join(dir, f.name)), f.name).toBe(f.md5)
    expect((await service.controls.counters()).bytesServed).toBe(0)
    // The pin came back with the mount.
    expect(await state(dir)).toBe('pinned')
  }, 180_000)

  it('a mount started with the service unreachable lists the pinned transfer and reads it', async () => {
    const off = await cli(['unmount', account.mountDir])
    expect(off.code, off.stderr).toBe(0)
    expect(await waitForExit(pid, 15_000)).toBe(true)
    await service.pause()
    try {
      pid = await mount(account)
      const listed = await run('ls', [path.join(account.mountDir, 'inbox')])
      expect(listed.code, listed.stderr).toBe(0)
      // What was pinned, and nothing else: the others were never pinned.
      expect(listed.stdout.trim().split('\n')).toEqual([path.basename(await folder(pinned))])
      const dir = await folder(pinned)
      for (const f of pinned.files) expect(await md5sum(path.join(dir, f.name)), f.name).toBe(f.md5)
      const json = JSON.parse((await run('cat', [path.join(dir, '.transfer.json')])).stdout) as { id: string }
      expect(json.id).toBe(pinned.id)
    } finally {
      await service.resume()
    }
  }, 120_000)
})

describe('a pinned inbox', () => {
  let service: TestService
  let account: Account

  beforeAll(async () => {
    service = await startTestService()
    await service.controls.seedInbox(service.user.email, 2, { subjectPrefix: 'Earlier' })
    delete process.env.DBUS_SESSION_BUS_ADDRESS
    account = await useAccount(service, { TRANSFERFS_LISTING_TTL_MS: '10m' })
    await login(service)
    await mount(account)
  }, 120_000)

  afterAll(async () => {
    await unmountAll()
    await service?.close()
  })

  it('keeps a transfer that arrives while mounted, within the arrival interval and its fetch', async () => {
    const inbox = path.join(account.mountDir, 'inbox')
    const r = await cli(['pin', inbox])
    expect(r.code, r.stderr).toBe(0)
    expect(await waitFor(async () => (await state(inbox)) === 'pinned', 30_000, 250)).toBe(true)
    const arrived = await made(service, 'Arrival', [{ name: 'new.bin', size: 5 * MiB }])
    const since = Date.now()
    // Someone looks at the inbox: arrivals are checked every few seconds.
    expect((await run('ls', [inbox])).code).toBe(0)
    let dir = ''
    const isPinned = await waitFor(async () => {
      dir = await transferFolder(account.mountDir, arrived.id).catch(() => '')
      return dir !== '' && (await state(dir)) === 'pinned'
    }, 30_000, 250)
    expect(isPinned, `not pinned ${Date.now() - since} ms after it arrived: ${dir && (await state(dir))}`).toBe(true)
    await service.pause()
    try {
      expect(await md5sum(path.join(dir, 'new.bin'))).toBe(arrived.files[0]!.md5)
    } finally {
      await service.resume()
    }
    const unpin = await run('setfattr', ['-x', 'user.transferfs.pin', inbox])
    expect(unpin.code, unpin.stderr).toBe(0)
    expect(await state(inbox)).toBe('cached')
  }, 120_000)

  it('a pinned search keeps a transfer it finds once it arrives, and only that one', async () => {
    const search = path.join(account.mountDir, 'search', 'Quarterly')
    const r = await cli(['pin', search])
    expect(r.code, r.stderr).toBe(0)
    const found = await made(service, 'Quarterly figures', [{ name: 'q.bin', size: 4 * MiB }])
    const other = await made(service, 'Holiday photos', [{ name: 'h.bin', size: 4 * MiB }])
    expect((await run('ls', [path.join(account.mountDir, 'inbox')])).code).toBe(0)
    let dir = ''
    const isPinned = await waitFor(async () => {
      dir = await transferFolder(account.mountDir, found.id).catch(() => '')
      return dir !== '' && (await state(dir)) === 'pinned'
    }, 30_000, 250)
    expect(isPinned, dir && (await state(dir))).toBe(true)
    expect(await state(await transferFolder(account.mountDir, other.id))).toBe('online')
    expect(await state(search)).toBe('pinned')
  }, 120_000)
})
