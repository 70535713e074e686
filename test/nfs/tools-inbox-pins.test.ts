// libnfs's own tools (nfs-ls, nfs-cat, run as root so that they use a reserved port) on
// `transferfs serve-nfs` over an inbox of 5,000 transfers: search/<words>/ and by-id/<id>
// list what they hold; READDIRPLUS of the whole inbox, paged by the client's cookie, gives
// each transfer once from one listing of the service; a pinned file reads right, served
// from the cache, with the service paused.
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cli, login, useAccount, type Account } from '../mount/harness.js'
import { made, pinEntriesWhen, type Made } from '../mount/pinning.js'
import { startTestService, type Counters, type TestService } from '../support/service.js'
import { libnfs, listedNames, nfsUrl, serveNfs, type NfsServe } from './harness.js'
import { createHash } from 'node:crypto'

const TRANSFERS = 5000
/** ms: how long the account's listings are fresh. */
const LISTING_TTL_MS = 300
const MiB = 1024 * 1024
/**
 * The longest page libnfs asks READDIRPLUS for (its dircount and maxcount), and the fewest
 * bytes an entry of this inbox takes in one: fileid, name (a subject and an id), cookie,
 * attributes and handle with the words that say they follow.
 */
const LIBNFS_PAGE_BYTES = 8192
const MIN_ENTRY_BYTES = 4 + 8 + 4 + 20 + 8 + 4 + 84 + 4 + 4 + 8

let service: TestService
let account: Account
let server: NfsServe
let pinned: Made
let seeded: string[]

beforeAll(async () => {
  service = await startTestService()
  pinned = await made(service, 'Pinned rushes', [{ name: 'take.bin', size: 3 * MiB + 4321 }])
  seeded = await service.controls.seedInbox(service.user.email, TRANSFERS - 1, { subjectPrefix: 'Seeded' })
  // Listings go stale within a second, well within the time libnfs takes to page the inbox:
  // a page that asked the service's listing again would list the inbox again.
  account = await useAccount(service, { TRANSFERFS_LISTING_TTL_MS: String(LISTING_TTL_MS) })
  await login(service)
  server = await serveNfs([account.mountDir])
}, 180_000)

afterAll(async () => {
  await server?.stop()
  await service?.close()
})

/** What nfs-ls lists at `p`, having checked it succeeded. */
async function ls(p: string): Promise<{ names: string[]; lines: string[] }> {
  const r = await libnfs('nfs-ls', nfsUrl(server.port, p), { timeoutMs: 120_000 })
  expect(r.code, r.stderr).toBe(0)
  return { names: listedNames(r.stdout), lines: r.stdout.split('\n').filter(Boolean) }
}

/** Resolves once no request to the service has been under way for a second, then zeroes its counters. */
async function quietCounters(): Promise<void> {
  for (let idle = 0; idle < 5;) {
    await new Promise((r) => setTimeout(r, 200))
    idle = (await service.controls.counters()).inFlight > 0 ? 0 : idle + 1
  }
  await service.controls.resetCounters()
}

/** The service's counters once no request has been under way and none has been counted for 2 s. */
async function settledCounters(): Promise<Counters> {
  let last = ''
  for (let still = 0; still < 10;) {
    await new Promise((r) => setTimeout(r, 200))
    const c = await service.controls.counters()
    const now = JSON.stringify(c.routes)
    still = c.inFlight === 0 && now === last ? still + 1 : 0
    last = now
  }
  return service.controls.counters()
}

describe('libnfs\'s tools over a 5,000-transfer inbox', () => {
  it('READDIRPLUS pages the whole inbox by cookie from one listing of the service, each transfer once', async () => {
    // The listing the server holds from its start is stale by now: the first page lists the inbox again.
    await new Promise((r) => setTimeout(r, LISTING_TTL_MS))
    await quietCounters()
    const started = Date.now()
    const { names } = await ls('/inbox')
    const ms = Date.now() - started
    // Each transfer once, and every one of them.
    expect(new Set(names).size).toBe(names.length)
    const ids = names.map((n) => /\(([^()]+)\)$/.exec(n)?.[1])
    expect(new Set(ids)).toEqual(new Set([...seeded, pinned.id]))
    // Paged: libnfs's pages hold at most this many entries, so the listing took this many calls or more.
    expect(TRANSFERS / Math.floor(LIBNFS_PAGE_BYTES / MIN_ENTRY_BYTES)).toBeGreaterThan(50)
    // One listing of the service (its pages of 1,000 transfers), however many calls paged it:
    // counted once the listing the first page started in the background is done.
    const c = await settledCounters()
    expect(ms, 'paged for longer than a listing stays fresh').toBeGreaterThan(LISTING_TTL_MS)
    expect(c.inboxListed, `listed in ${ms} ms; inbox calls ${c.routes.inbox}`).toBe(TRANSFERS)
  }, 180_000)

  it('nfs-ls lists search/<words>/ and by-id/<id>', async () => {
    const found = await ls('/search/Pinned')
    expect(found.names).toHaveLength(1)
    expect(found.names[0]).toMatch(new RegExp(`Pinned rushes.*\\(${pinned.id}\\)$`))
    const none = await ls('/search/nothing-matches-these-words')
    expect(none.names).toEqual([])
    const byId = await ls(`/by-id/${pinned.id}`)
    const line = byId.lines.find((l) => l.endsWith(' take.bin'))
    expect(line, byId.lines.join('\n')).toMatch(new RegExp(`^-r.* ${3 * MiB + 4321} take\\.bin$`))
    // The search lists the folder under which it reads as under inbox/.
    const inSearch = await ls(`/search/Pinned/${found.names[0]}`)
    expect(inSearch.names).toContain('take.bin')
  }, 120_000)

  it('nfs-cat reads a pinned file with the service paused: the right md5, nothing served', async () => {
    const folder = (await ls('/search/Pinned')).names[0] as string
    // serve-nfs maps the paths under the folder it names to its tree, as a mount does.
    const pin = await cli(['pin', path.join(account.mountDir, 'inbox', folder)])
    expect(pin.code, pin.stderr).toBe(0)
    const entries = await pinEntriesWhen((e) => e[0]?.state === 'pinned', 60_000)
    expect(entries[0]?.state, JSON.stringify(entries)).toBe('pinned')

    await quietCounters()
    await service.pause()
    try {
      const r = await libnfs('nfs-cat', nfsUrl(server.port, `/inbox/${folder}/take.bin`), { encoding: 'latin1', timeoutMs: 60_000 })
      expect(r.code, r.stderr).toBe(0)
      expect(createHash('md5').update(Buffer.from(r.stdout, 'latin1')).digest('hex')).toBe(pinned.files[0]?.md5)
    } finally {
      await service.resume()
    }
    expect((await service.controls.counters()).bytesServed).toBe(0)
  }, 120_000)
})
