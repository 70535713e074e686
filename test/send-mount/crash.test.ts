// The mount process is SIGKILLed at several points of a send (while a file is being
// written, after initialize, between chunks, before and after Complete), the points
// landed with the service's faults (a stalled upload or Complete) and counters. After a
// new mount every entry ends as exactly one complete transfer with the right bytes (one
// recipient e-mail, one sent-log record), or waits intact in outbox/: nothing lost,
// nothing sent twice.
import { spawn } from 'node:child_process'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import type { JournalRecord } from '../../src/send/journal.js'
import { unmountWithHelper } from '../../src/fuse/mount-helper.js'
import { isMounted, run, waitFor, waitForExit } from '../support/mount.js'
import { cli, mount } from '../mount/harness.js'
import { bytes, md5, outboxDrained, outboxFiles, sentRecords, transferFiles, type User, useSendingMount } from './helpers.js'

const USER: User = { email: 'crash@example.com', password: 'pw-crash-123456' }
const TO = 'rcpt@example.com'
const CHUNK = 50_000_000
const world = useSendingMount(USER)

beforeAll(async () => {
  await fsp.mkdir(path.join(world.account.mountDir, 'outbox', TO))
})

const inFolder = (name: string) => path.join(world.account.mountDir, 'outbox', TO, name)

async function kill(): Promise<void> {
  process.kill(world.pid, 'SIGKILL')
  expect(await waitForExit(world.pid)).toBe(true)
}

async function killAndRemount(): Promise<void> {
  await kill()
  await remount()
}

async function remount(): Promise<void> {
  await waitFor(async () => !(await isMounted(world.account.mountDir)), 5000)
  if (await isMounted(world.account.mountDir)) await unmountWithHelper(world.account.mountDir)
  await world.service.controls.clearFaults()
  world.pid = await mount(world.account)
}

/** Copies `data` into the recipient folder as `name` with the next `route` call stalled (never answered), and waits until that call is made. */
async function copyWithStalled(route: 'savefile' | 'complete', name: string, data: Buffer): Promise<void> {
  await world.service.controls.resetCounters()
  await world.service.controls.fault({ route, kind: 'stall', count: 1 })
  await fsp.writeFile(path.join(world.src, name), data)
  expect((await run('cp', [path.join(world.src, name), inFolder(name)])).code).toBe(0)
  expect(await waitFor(async () => ((await world.service.controls.counters()).routes[route] ?? 0) >= 1, 20_000)).toBe(true)
}

async function journals(): Promise<JournalRecord[]> {
  const dir = path.join(world.account.home, 'data', 'journal')
  const out: JournalRecord[] = []
  for (const n of await fsp.readdir(dir).catch(() => [])) {
    if (n.endsWith('.json')) out.push(JSON.parse(await fsp.readFile(path.join(dir, n), 'utf8')) as JournalRecord)
  }
  return out
}

/** The entry ended as exactly one complete transfer with these bytes, e-mailed once. */
async function sentOnce(name: string, data: Buffer): Promise<void> {
  const recs = (await sentRecords(world.account)).filter((r) => r.subject === name)
  expect(recs).toHaveLength(1)
  const id = recs[0]!.transferid
  expect(await transferFiles(world.client, id)).toEqual(new Map([[name, md5(data)]]))
  const mails = (await world.service.controls.mail()).filter((m) => m.kind === 'recipient' && m.transferid === id)
  expect(mails.map((m) => m.to)).toEqual([TO])
  // No other transfer with this subject reached anyone.
  const others = (await world.service.controls.mail()).filter((m) => m.kind === 'recipient' && m.subject.includes(name) && m.transferid !== id)
  expect(others).toEqual([])
}

describe('SIGKILL of the mount in the middle of a send', () => {
  it('while a file is being written: held after the restart (never sent half-written), sent once written again', async () => {
    const data = bytes(6_000_000, 11)
    await fsp.writeFile(path.join(world.src, 'writing.bin'), data)
    const target = inFolder('writing.bin')
    // A writer that writes half, then keeps the file open.
    const writer = spawn('bash', ['-c', 'exec 3>"$2"; head -c 3000000 "$1" >&3; sleep 60', 'bash', path.join(world.src, 'writing.bin'), target], { stdio: 'ignore' })
    try {
      expect(await waitFor(async () => (await fsp.stat(target).catch(() => ({ size: 0 }))).size === 3_000_000, 10_000)).toBe(true)
      await killAndRemount()
    } finally {
      writer.kill('SIGKILL')
    }
    expect(await waitFor(async () => {
      const s = JSON.parse((await cli(['status', '--json'])).stdout) as { entries: Array<{ name: string; state: string; note: string | null }> }
      const e = s.entries.find((x) => x.name === `${TO}/writing.bin`)
      return e?.state === 'waiting' && /being written/.test(e.note ?? '')
    }, 20_000)).toBe(true)
    expect((await sentRecords(world.account)).some((r) => r.subject === 'writing.bin')).toBe(false)
    expect((await run('cp', [path.join(world.src, 'writing.bin'), target])).code).toBe(0)
    expect(await outboxDrained(world.account)).toBe(true)
    await sentOnce('writing.bin', data)
  })

  it('after initialize (its one chunk stalled): resumed into the same transfer', async () => {
    const data = bytes(2_000_000, 12)
    await copyWithStalled('savefile', 'init.bin', data)
    expect((await journals()).some((j) => j.subject === 'init.bin' && j.transfer !== null)).toBe(true)
    await killAndRemount()
    expect(await outboxDrained(world.account)).toBe(true)
    await sentOnce('init.bin', data)
    expect((await world.service.controls.counters()).routes.initialize).toBe(1)
  })

  it('between chunks: only the chunk not confirmed is sent again', async () => {
    const data = bytes(2 * CHUNK + 1_000_000, 13)
    await copyWithStalled('savefile', 'chunks.bin', data)
    expect(await waitFor(async () => {
      const j = (await journals()).find((x) => x.subject === 'chunks.bin')
      return (j?.confirmed['chunks.bin']?.length ?? 0) === 2
    }, 30_000)).toBe(true)
    await killAndRemount()
    await world.service.controls.resetCounters()
    expect(await outboxDrained(world.account)).toBe(true)
    await sentOnce('chunks.bin', data)
    const c = await world.service.controls.counters()
    expect(c.routes.savefile).toBe(1)
    expect(c.routes.initialize ?? 0).toBe(0)
  })

  it('before Complete answered (Complete stalled): completed once after the restart', async () => {
    const data = bytes(1_000_000, 14)
    await copyWithStalled('complete', 'complete.bin', data)
    await killAndRemount()
    expect(await outboxDrained(world.account)).toBe(true)
    await sentOnce('complete.bin', data)
  })

  it('right after Complete answered: recorded once, nothing sent twice', async () => {
    const data = bytes(1_500_000, 15)
    await world.service.controls.resetCounters()
    await fsp.writeFile(path.join(world.src, 'after.bin'), data)
    expect((await run('cp', [path.join(world.src, 'after.bin'), inFolder('after.bin')])).code).toBe(0)
    expect(await waitFor(async () => ((await world.service.controls.counters()).routes.complete ?? 0) >= 1, 20_000, 2)).toBe(true)
    await killAndRemount()
    expect(await outboxDrained(world.account)).toBe(true)
    await sentOnce('after.bin', data)
    expect(await outboxFiles(world.account)).toEqual([])
  })

  it('Complete done but its answer lost, then the folder grew before the restart: sent as it was, then anew as it is', async () => {
    const a = bytes(700_000, 16)
    const b = bytes(300_000, 17)
    await world.service.controls.resetCounters()
    // Complete takes effect, and every answer to it is cut off: the journal can only say it was asked.
    await world.service.controls.fault({ route: 'complete', kind: 'reset', count: 1000 })
    const folder = path.join(world.account.mountDir, 'outbox', TO, 'grown')
    await fsp.mkdir(folder)
    await fsp.writeFile(path.join(folder, 'a.bin'), a)
    expect(await waitFor(async () => ((await world.service.controls.counters()).routes.complete ?? 0) >= 1, 20_000)).toBe(true)
    await kill()
    const [rec] = (await journals()).filter((j) => j.subject === 'grown')
    expect(rec).toMatchObject({ completing: true, completed: false })
    // A file joins the folder before the next start sends it (in its staging folder: the mount is down).
    await fsp.writeFile(path.join(world.account.home, 'data', 'outbox', TO, 'grown', 'b.bin'), b)
    await remount()
    expect(await outboxDrained(world.account)).toBe(true)
    const recs = (await sentRecords(world.account)).filter((r) => r.subject === 'grown')
    const contents = await Promise.all(recs.map((r) => transferFiles(world.client, r.transferid)))
    // The transfer Complete sent keeps the folder as it was; the grown folder is a transfer of its own.
    expect(contents).toEqual([
      new Map([['a.bin', md5(a)]]),
      new Map([['a.bin', md5(a)], ['b.bin', md5(b)]]),
    ])
    const mails = (await world.service.controls.mail()).filter((m) => m.kind === 'recipient' && m.subject.includes('grown'))
    expect(mails.map((m) => m.transferid).sort()).toEqual(recs.map((r) => r.transferid).sort())
  })
})
