// search/ through a real mount of the local service (`transferfs mount`, driven by ls, cat
// and stat in child processes): a subject word or a sender's address finds its transfers
// and nothing else, under the names inbox/ gives them; a file found reads the bytes inbox/
// reads, downloaded once for both (the service's counters); words matching nothing are an
// empty folder; words with spaces, accents and ∕ work; `search/` lists the words used,
// newest first; a probe name searches nothing.
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { login as loginToken, sendTransfer } from '../emulator/http.js'
import { run, unmountAll, waitFor } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { login, mount, useAccount, type Account } from './harness.js'

let service: TestService
let account: Account
const invoiceBytes = Buffer.from('ACME invoice, March: 1,234.00 EUR\n'.repeat(100))
let ids: { invoice: string; holiday: string; offer: string; seeded: string[] }

async function userToken(email: string): Promise<string> {
  await service.controls.createUser({ email, password: 'pw-search-123456' })
  return (await loginToken(service, email, 'pw-search-123456')).logintoken
}

beforeAll(async () => {
  service = await startTestService()
  const me = service.user.email
  const bob = await userToken('bob@example.org')
  const carol = await userToken('carol@example.net')
  const invoice = await sendTransfer(service, bob, { to: [me], subject: 'Invoice ACME March' }, { 'invoice.txt': invoiceBytes })
  const holiday = await sendTransfer(service, carol, { to: [me], subject: 'Holiday photos' }, { 'beach.txt': Buffer.from('sand\n') })
  const offer = await sendTransfer(service, undefined, { to: [me], subject: 'Angebot für Müller 3/4' }, { 'angebot.txt': Buffer.from('Angebot\n') })
  const seeded = await service.controls.seedInbox(me, 3, { subjectPrefix: 'Weekly digest' })
  ids = { invoice: invoice.transferid, holiday: holiday.transferid, offer: offer.transferid, seeded }
  account = await useAccount(service)
  await login(service)
  await mount(account)
})

afterAll(async () => {
  await unmountAll()
  await service?.close()
})

const at = (...names: string[]) => path.join(account.mountDir, ...names)

/** `ls -1AU`: every name, in the order the folder gives them (no sorting by ls). */
async function ls(dir: string): Promise<string[]> {
  const r = await run('ls', ['-1AU', dir])
  expect(r.code, r.stderr).toBe(0)
  return r.stdout.split('\n').filter(Boolean)
}

const idOf = (name: string) => /\(([^()]+)\)$/.exec(name)![1]!

/** Counters from here on, once the mount's own calls (start-up, arrivals) have ended. */
async function quietCounters(): Promise<void> {
  await waitFor(async () => ((await service.controls.counters()) as { inFlight?: number }).inFlight === 0, 10_000, 50)
  await service.controls.resetCounters()
}

describe('search/ on the mount', () => {
  it('a subject word finds its transfer and nothing else, under its inbox/ name', async () => {
    const found = await ls(at('search', 'March'))
    expect(found.map(idOf)).toEqual([ids.invoice])
    expect(await ls(at('inbox'))).toContain(found[0])
    expect(await ls(at('search', 'March', found[0]!))).toEqual(['.transfer.json', 'invoice.txt'])
  })

  it('a sender\'s address finds that sender\'s transfers only', async () => {
    expect((await ls(at('search', 'bob@example.org'))).map(idOf)).toEqual([ids.invoice])
    expect((await ls(at('search', 'carol@example.net'))).map(idOf)).toEqual([ids.holiday])
  })

  it('a file under search/ reads the bytes inbox/ reads, downloaded once for both', async () => {
    const [name] = await ls(at('search', 'Invoice ACME'))
    await quietCounters()
    const viaSearch = await run('cat', [at('search', 'Invoice ACME', name!, 'invoice.txt')], { encoding: 'latin1' })
    const viaInbox = await run('cat', [at('inbox', name!, 'invoice.txt')], { encoding: 'latin1' })
    expect(viaSearch.code, viaSearch.stderr).toBe(0)
    expect(Buffer.from(viaSearch.stdout, 'latin1').equals(invoiceBytes)).toBe(true)
    expect(viaInbox.stdout).toBe(viaSearch.stdout)
    const counters = await service.controls.counters()
    expect(counters.bytesServed).toBe(invoiceBytes.length)
    expect(counters.routes.download).toBe(1)
  })

  it('words that match nothing are an empty folder', async () => {
    const r = await run('stat', ['-c', '%F', at('search', 'zzz nothing like it')])
    expect(r.stdout.trim()).toBe('directory')
    expect(await ls(at('search', 'zzz nothing like it'))).toEqual([])
  })

  it('words with spaces, accents and ∕ find the transfer whose subject has them (with its "/")', async () => {
    const found = await ls(at('search', 'für Müller 3∕4'))
    expect(found.map(idOf)).toEqual([ids.offer])
    expect(found[0]).toContain('Angebot für Müller 3∕4')
  })

  it('search/ lists the words used during this mount, newest first; probe names search nothing', async () => {
    await ls(at('search', 'Weekly digest'))
    for (const probe of ['.hidden', '.DS_Store', 'desktop.ini']) {
      const r = await run('stat', [at('search', probe)])
      expect(r.code).not.toBe(0)
      expect(r.stderr).toContain('No such file or directory')
    }
    expect(await ls(at('search'))).toEqual(['Weekly digest', 'für Müller 3∕4', 'zzz nothing like it', 'Invoice ACME', 'carol@example.net', 'bob@example.org', 'March'])
  })
})
