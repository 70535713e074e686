import { systemClock } from '../../src/base/clock.js'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ArrivalWatch, DEFAULT_ARRIVAL_OPTIONS } from '../../src/vfs/arrivals.js'
import { TransferFileSystem } from '../../src/vfs/filesystem.js'
import type { Arrival } from '../../src/vfs/inbox-news.js'
import { FakeCatalog, FakeClock, FakeContent, makeFile, makeTransfer } from './fakes.js'

const HOUR = 3_600_000

function setup() {
  const catalog = new FakeCatalog()
  const clock = new FakeClock()
  const told: Arrival[] = []
  const fs = new TransferFileSystem({ catalog, content: new FakeContent(), clock })
  fs.store.inboxNews.listener = (a) => told.push(...a)
  const watch = new ArrivalWatch(fs.store, catalog, clock)
  const add = (id: string, sentdate: number, fields: object = {}) => {
    const t = makeTransfer({ id, subject: `Subject ${id}`, sentdate, ...fields })
    t.files = [makeFile(id, 'a.txt')]
    return catalog.add(t)
  }
  return { catalog, clock, fs, watch, told, add }
}

describe('arrivals', () => {
  it('one small call asks for what is newer than the newest known; the new folder lists at once and is told once', async () => {
    const { catalog, clock, fs, watch, told, add } = setup()
    add('old1', clock.now() - 2 * HOUR)
    add('old2', clock.now() - HOUR)
    const before = await fs.readdir('/inbox')
    expect(before).toHaveLength(2)
    expect(told).toEqual([]) // the first listing is the baseline

    add('new1', clock.now() + 1000, { from: 'zoe@example.com' })
    const fullListings = catalog.calls.inbox
    await watch.check()
    expect(catalog.calls.inboxSince).toBe(1)
    expect(catalog.calls.inbox).toBe(fullListings) // no full listing for it
    const after = await fs.readdir('/inbox')
    expect(after).toHaveLength(3)
    expect(after[0]).toContain('(new1)')
    expect(told.map((a) => a.transfer.id)).toEqual(['new1'])
    expect(told[0]!.name).toBe(after[0])
    expect((await fs.readdir(`/inbox/${after[0]}`))).toContain('a.txt')

    // Nothing new: nothing told; a full refresh that finds it again tells nothing either.
    await watch.check()
    clock.advance(60_000)
    await fs.readdir('/inbox')
    await fs.whenIdle()
    expect(told.map((a) => a.transfer.id)).toEqual(['new1'])
  })

  it('a transfer found by the full refresh is told too; a full page asks for the whole listing again', async () => {
    const { catalog, clock, fs, told, add } = setup()
    add('a', clock.now() - HOUR)
    await fs.readdir('/inbox')
    add('b', clock.now() + 1)
    clock.advance(60_000)
    await fs.readdir('/inbox') // stale: refreshed in the background
    await fs.whenIdle()
    expect(told.map((t) => t.transfer.id)).toEqual(['b'])

    const small = new ArrivalWatch(fs.store, catalog, clock, { ...DEFAULT_ARRIVAL_OPTIONS, take: 2 })
    for (const id of ['c', 'd', 'e']) add(id, clock.now() + 10 + id.charCodeAt(0))
    await small.check()
    // Two of three came in the page; the full page made the listing stale, so the next look lists all.
    expect((await fs.readdir('/inbox')).length).toBeGreaterThanOrEqual(4)
    await fs.whenIdle()
    expect(await fs.readdir('/inbox')).toHaveLength(5)
    expect(told.map((t) => t.transfer.id).sort()).toEqual(['b', 'c', 'd', 'e'])
  })

  it('before any listing, a check lists the inbox once as the baseline and tells nothing', async () => {
    const { catalog, watch, told, add, clock } = setup()
    add('a', clock.now() - HOUR)
    await watch.check()
    expect(catalog.calls.inbox).toBe(1)
    expect(catalog.calls.inboxSince).toBe(0)
    expect(told).toEqual([])
  })

  describe('how often', () => {
    afterEach(() => {
      vi.useRealTimers()
    })

    it('one check per 8 s while the inbox was listed in the last minute, one per 50 s otherwise', async () => {
      vi.useFakeTimers({ now: Date.UTC(2026, 10, 25, 12) })
      const clock = systemClock
      const catalog = new FakeCatalog()
      const fs = new TransferFileSystem({ catalog, content: new FakeContent(), clock })
      catalog.add(makeTransfer({ id: 'a', sentdate: clock.now() - HOUR }))
      await fs.readdir('/inbox')
      const watch = new ArrivalWatch(fs.store, catalog, clock)
      watch.start()
      const at = async (ms: number) => {
        await vi.advanceTimersByTimeAsync(ms)
        return catalog.calls.inboxSince
      }
      expect(await at(0)).toBe(1) // at the start: the mount's first look
      expect(await at(49_000)).toBe(1)
      expect(await at(1_000)).toBe(2) // t = 50 s: idle interval
      watch.looked() // someone lists inbox/ at t = 50 s
      expect(await at(7_900)).toBe(2)
      expect(await at(100)).toBe(3) // t = 58 s
      // Checks at 58, 66, ..., 114 s; the look is over a minute old after that.
      expect(await at(60_000)).toBe(10)
      expect(await at(45_000)).toBe(10)
      expect(await at(1_000)).toBe(11) // t = 164 s: idle again
      await watch.stop()
      expect(catalog.calls.inbox).toBe(1) // never a full listing for it
    })
  })
})
