// search/ in the mount's core, driven op by op as the FUSE adapter would (no kernel),
// against the real local service over HTTPS: a name looked up under search/ is the inbox
// search for its words, its folder holds the transfers found, named and read as under
// inbox/, and its result is cached like a listing. The service's counters tell every
// request made.
import { createHash } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { TransferClient } from '../../src/api/client.js'
import { silentLogger } from '../../src/base/log.js'
import { ReadPath } from '../../src/read/content.js'
import { ServiceRangeSource } from '../../src/read/service-source.js'
import { TransferFileSystem } from '../../src/vfs/filesystem.js'
import { readAll } from './fakes.js'
import { ServiceCatalog } from '../../src/vfs/service-catalog.js'
import { VFS_DEFAULTS } from '../../src/vfs/settings.js'
import { login as loginToken, sendTransfer } from '../emulator/http.js'
import { ManualClock } from '../support/manual-clock.js'
import { startTestService, type TestService } from '../support/service.js'

const S_IFDIR = 0o040000
const TTL = VFS_DEFAULTS.listingTtlMs

let service: TestService
let dataDir: string
const clients: TransferClient[] = []
const invoiceBytes = Buffer.from('ACME invoice, March: 1,234.00 EUR\n')
let ids: { invoice: string; holiday: string; offer: string; seeded: string[]; expired: string; cancelled: string; unfinished: string }

async function userToken(email: string): Promise<string> {
  await service.controls.createUser({ email, password: 'pw-search-123456' })
  return (await loginToken(service, email, 'pw-search-123456')).logintoken
}

beforeAll(async () => {
  service = await startTestService()
  dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'vfs-search-'))
  const me = service.user.email
  const bob = await userToken('bob@example.org')
  const carol = await userToken('carol@example.net')
  const expired = await sendTransfer(service, carol, { to: [me], subject: 'Invoice ACME last year', days: 1 }, { 'old.txt': Buffer.from('old\n') })
  await service.controls.advanceClock(2 * 24 * 3600 * 1000)
  const invoice = await sendTransfer(service, bob, { to: [me], subject: 'Invoice ACME March', message: 'Please pay soon.' }, { 'invoice.txt': invoiceBytes })
  const holiday = await sendTransfer(service, carol, { to: [me], subject: 'Holiday photos' }, { 'beach.txt': Buffer.from('sand\n') })
  const offer = await sendTransfer(service, undefined, { to: [me], subject: 'Angebot für Müller 3/4' }, { 'angebot.txt': Buffer.from('Angebot\n') })
  const cancelled = await sendTransfer(service, carol, { to: [me], subject: 'Invoice ACME cancelled' }, { 'c.txt': Buffer.from('c\n') })
  await service.controls.setStatus(cancelled.transferid, 'STATUS_CANCELLED')
  const unfinished = await sendTransfer(service, carol, { to: [me], subject: 'Invoice ACME unfinished' }, { 'u.txt': Buffer.from('u\n') }, false)
  const seeded = await service.controls.seedInbox(me, 3, { subjectPrefix: 'Weekly digest' })
  ids = { invoice: invoice.transferid, holiday: holiday.transferid, offer: offer.transferid, seeded, expired: expired.transferid, cancelled: cancelled.transferid, unfinished: unfinished.transferid }
})

afterAll(async () => {
  for (const c of clients) await c.close()
  await service?.close()
  if (dataDir) await fsp.rm(dataDir, { recursive: true, force: true })
})

interface Mount {
  fs: TransferFileSystem
  clock: ManualClock
  warnings: string[]
}

/** A fresh core over the service, signed in as the main user; its clock moves only when told. */
async function mountCore(retry: { maxTries: number; baseDelayMs: number } = { maxTries: 10, baseDelayMs: 200 }): Promise<Mount> {
  const client = new TransferClient({ apiUrl: service.baseUrl, apiKey: service.apiKey, ca: service.caPem, retry })
  clients.push(client)
  await client.auth.login(service.user.email, service.user.password)
  const content = await ReadPath.create(new ServiceRangeSource(client), { diskCacheDir: await fsp.mkdtemp(path.join(dataDir, 'cache-')) })
  const clock = new ManualClock(Date.now())
  const warnings: string[] = []
  const fs = new TransferFileSystem({ catalog: new ServiceCatalog(client), content, clock, log: { ...silentLogger, warn: (m) => warnings.push(m) } })
  return { fs, clock, warnings }
}

async function inboxCalls(): Promise<number> {
  return (await service.controls.counters()).routes.inbox ?? 0
}

/** Requests counted from here on. */
async function resetCounters(): Promise<void> {
  while ((await service.controls.counters() as { inFlight?: number }).inFlight) await new Promise((r) => setTimeout(r, 20))
  await service.controls.resetCounters()
}

const idOf = (name: string) => /\(([^()]+)\)$/.exec(name)![1]!

let m: Mount
beforeEach(async () => {
  await service.controls.clearFaults()
  m = await mountCore()
})

describe('search/', () => {
  it('is a folder at the root, after by-id/', async () => {
    expect(await m.fs.readdir('/')).toEqual(['inbox', 'sent', 'by-id', 'search', '.status'])
    // Other users may list the searches made, but look up none (each look-up may be a search).
    expect((await m.fs.getattr('/search')).mode).toBe(S_IFDIR | 0o544)
    expect(await m.fs.readdir('/search')).toEqual([])
  })

  it('a subject word finds its transfer and nothing else, named as in inbox/, with one inbox call', async () => {
    await resetCounters()
    expect((await m.fs.getattr('/search/March')).mode).toBe(S_IFDIR | 0o555)
    const found = await m.fs.readdir('/search/March')
    expect(found.map(idOf)).toEqual([ids.invoice])
    expect(await inboxCalls()).toBe(1)
    expect(await m.fs.readdir('/inbox')).toContain(found[0])
    expect(await m.fs.readdir(`/search/March/${found[0]}`)).toEqual(['.transfer.json', 'invoice.txt'])
  })

  it('a sender\'s address finds that sender\'s transfers only', async () => {
    expect((await m.fs.readdir('/search/bob@example.org')).map(idOf)).toEqual([ids.invoice])
    expect((await m.fs.readdir('/search/carol@example.net')).map(idOf)).toEqual([ids.holiday])
    expect((await m.fs.readdir('/search/sender1@example.com')).map(idOf)).toEqual([ids.seeded[1]])
  })

  it('leaves out what inbox/ leaves out: expired, cancelled and unfinished transfers', async () => {
    const found = (await m.fs.readdir('/search/Invoice ACME')).map(idOf)
    expect(found).toEqual([ids.invoice])
    const inbox = (await m.fs.readdir('/inbox')).map(idOf)
    for (const id of [ids.expired, ids.cancelled, ids.unfinished]) expect(inbox).not.toContain(id)
  })

  it('a file found reads the bytes inbox/ reads, fetched once for both', async () => {
    await resetCounters()
    const [name] = await m.fs.readdir('/search/invoice acme march')
    const viaSearch = await readAll(m.fs, `/search/invoice acme march/${name}/invoice.txt`)
    const viaInbox = await readAll(m.fs, `/inbox/${name}/invoice.txt`)
    expect(viaSearch.equals(invoiceBytes)).toBe(true)
    expect(viaInbox.equals(viaSearch)).toBe(true)
    const counters = await service.controls.counters()
    expect(counters.bytesServed).toBe(invoiceBytes.length)
    expect(counters.routes.download).toBe(1)
    expect(counters.routes.details ?? 0).toBe(0)
    const md5 = createHash('md5').update(invoiceBytes).digest('hex')
    expect((await m.fs.getxattr(`/search/invoice acme march/${name}/invoice.txt`, 'user.md5')).toString()).toBe(md5)
  })

  it('words that match nothing are an empty folder, not an error', async () => {
    expect((await m.fs.getattr('/search/zzz nothing like it')).mode).toBe(S_IFDIR | 0o555)
    expect(await m.fs.readdir('/search/zzz nothing like it')).toEqual([])
    await expect(m.fs.getattr('/search/zzz nothing like it/anything')).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('words with spaces, accents and ∕ (how the mount shows "/") find the subject with its "/"', async () => {
    expect((await m.fs.readdir('/search/für Müller 3∕4')).map(idOf)).toEqual([ids.offer])
    expect((await m.fs.readdir('/search/Angebot für')).map(idOf)).toEqual([ids.offer])
    expect(await m.fs.readdir('/search/Muller')).toEqual([])
  })

  it('search/ lists the searches made during this mount, newest first, each once', async () => {
    for (const words of ['Holiday', 'Weekly digest', 'Holiday', 'zzz nothing']) await m.fs.getattr(`/search/${words}`)
    expect(await m.fs.readdir('/search')).toEqual(['zzz nothing', 'Weekly digest', 'Holiday'])
    expect((await m.fs.readdir('/search/Weekly digest')).map(idOf)).toEqual([...ids.seeded].reverse())
  })

  it('the names file managers probe for answer ENOENT at once and search nothing', async () => {
    await resetCounters()
    for (const probe of ['.hidden', '.DS_Store', 'desktop.ini', 'Thumbs.db', '._March', '.Trash-1000', 'autorun.inf', '.directory']) {
      await expect(m.fs.getattr(`/search/${probe}`)).rejects.toMatchObject({ code: 'ENOENT' })
      await expect(m.fs.readdir(`/search/${probe}`)).rejects.toMatchObject({ code: 'ENOENT' })
    }
    expect(await inboxCalls()).toBe(0)
    expect(await m.fs.readdir('/search')).toEqual([])
    // Inside a result, as in every folder of the mount.
    await m.fs.readdir('/search/March')
    await resetCounters()
    await expect(m.fs.getattr('/search/March/.hidden')).rejects.toMatchObject({ code: 'ENOENT' })
    expect((await service.controls.counters()).routes).toEqual({})
  })

  it('a name longer than a name may be is ENAMETOOLONG, without a search', async () => {
    await resetCounters()
    await expect(m.fs.getattr(`/search/${'é'.repeat(128)}`)).rejects.toMatchObject({ code: 'ENAMETOOLONG' })
    expect(await inboxCalls()).toBe(0)
    expect((await m.fs.getattr(`/search/${'é'.repeat(127)}x`)).mode).toBe(S_IFDIR | 0o555)
  })
})

describe('caching like a listing', () => {
  it('at most one inbox search per words per interval: cached within the TTL, then refreshed once in the background', async () => {
    await resetCounters()
    await Promise.all([m.fs.readdir('/search/Holiday'), m.fs.getattr('/search/Holiday'), m.fs.readdir('/search/Holiday')])
    expect(await inboxCalls()).toBe(1)
    for (let i = 0; i < 5; i++) await m.fs.readdir('/search/Holiday')
    m.clock.advance(TTL - 1)
    await m.fs.getattr('/search/Holiday')
    expect(await inboxCalls()).toBe(1)

    // A new match arrives; after the TTL the cached result is served at once and refreshed.
    const [me, carol] = [service.user.email, await loginToken(service, 'carol@example.net', 'pw-search-123456')]
    const later = await sendTransfer(service, carol.logintoken, { to: [me], subject: 'Holiday photos, part 2' }, { 'more.txt': Buffer.from('more\n') })
    m.clock.advance(1)
    expect((await m.fs.readdir('/search/Holiday')).map(idOf)).toEqual([ids.holiday])
    await m.fs.getattr('/search/Holiday')
    await m.fs.whenIdle()
    expect(await inboxCalls()).toBe(2)
    expect((await m.fs.readdir('/search/Holiday')).map(idOf)).toEqual([later.transferid, ids.holiday])
  })

  it('follows the inbox\'s paging: more matches than a page holds come in full', async () => {
    await service.controls.seedInbox(service.user.email, 1001, { subjectPrefix: 'Paged batch' })
    await resetCounters()
    const found = await m.fs.readdir('/search/Paged batch')
    expect(found).toHaveLength(1001)
    expect(new Set(found).size).toBe(1001)
    expect(await inboxCalls()).toBe(2)
  })
})

describe('bad input and faults', () => {
  it('words the service refuses: an empty folder and a line in the log, not asked again within the TTL', async () => {
    await service.controls.fault({ route: 'inbox', kind: 'status', status: 400, responsestatus: 'InvalidParameter', count: 1 })
    await resetCounters()
    expect(await m.fs.readdir('/search/refused words')).toEqual([])
    expect(m.warnings).toEqual([expect.stringContaining('search/refused words: the service refused these words (InvalidParameter)')])
    expect(await m.fs.readdir('/search/refused words')).toEqual([])
    expect(await inboxCalls()).toBe(1)
  })

  it('a service fault is the failure every metadata call gets: the error, no new call within the backoff, the last result kept', async () => {
    const f = await mountCore({ maxTries: 2, baseDelayMs: 10 })
    expect((await f.fs.readdir('/search/Holiday')).length).toBeGreaterThan(0)
    await service.controls.fault({ route: 'inbox', kind: 'status', status: 500, responsestatus: 'UnknownError', count: 100 })
    await resetCounters()
    await expect(f.fs.getattr('/search/Weekly')).rejects.toMatchObject({ httpStatus: 500 })
    const tries = await inboxCalls()
    expect(tries).toBe(2)
    await expect(f.fs.readdir('/search/Weekly')).rejects.toMatchObject({ httpStatus: 500 })
    expect(await inboxCalls()).toBe(tries)
    expect(await f.fs.readdir('/search')).toEqual(['Holiday'])

    f.clock.advance(TTL)
    expect((await f.fs.readdir('/search/Holiday')).length).toBeGreaterThan(0)
    await f.fs.whenIdle()
    expect((await f.fs.readdir('/search/Holiday')).length).toBeGreaterThan(0)

    await service.controls.clearFaults()
    f.clock.advance(VFS_DEFAULTS.failureBackoffMs)
    expect((await f.fs.readdir('/search/Weekly')).length).toBeGreaterThan(0)
  })
})
