// user.transferfs.state in outbox/ and sent/ through a real mount, with real sends against the
// local service and its fault switches: an entry held open waits, a stalled upload shows how
// far its send went, a refused one says failed and why in a few words, folders sum up the
// sends below them, a file being added to a sent transfer shows its send; and reading every
// state serves no file byte and makes no request.
import { spawn } from 'node:child_process'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { run, waitFor } from '../support/mount.js'
import { state } from '../mount/pinning.js'
import { bytes, outboxDrained, sentRecords, type User, useSendingMount } from './helpers.js'

const USER: User = { email: 'states@example.com', password: 'pw-states-123456' }
const TO = 'rcpt@example.com'
// Listings refreshed after 5 s, so that a transfer sent to this user shows in inbox/ soon.
const world = useSendingMount(USER, { TRANSFERFS_LISTING_TTL_MS: '5s' })
const outbox = (...names: string[]): string => path.join(world.account.mountDir, 'outbox', ...names)

/** Waits until the state of `p` matches; the last state read, for the failure message. */
async function stateWhen(p: string, wanted: RegExp, timeoutMs = 20_000): Promise<string> {
  let last = ''
  await waitFor(async () => wanted.test((last = await state(p).catch((e: Error) => e.message))), timeoutMs, 100)
  return last
}

describe('the state of what is being sent', () => {
  it('waiting while held open, sending N% while an upload stalls, folders summing their sends up', async () => {
    await fsp.mkdir(path.join(world.src, 'folder'), { recursive: true })
    await fsp.writeFile(path.join(world.src, 'folder', 'a.bin'), bytes(1_000_000, 1))
    await fsp.writeFile(path.join(world.src, 'folder', 'b.bin'), bytes(3_000_000, 2))
    await fsp.mkdir(outbox(TO))
    // The next upload is held 12 s: the other file of the folder goes up meanwhile.
    await world.service.controls.fault({ route: 'savefile', kind: 'stall', count: 1, ms: 12_000 })
    // An entry held open never settles: it waits.
    const holder = spawn('bash', ['-c', 'exec 3>"$1"; echo later >&3; sleep 8', 'bash', outbox('held.txt')], { stdio: 'ignore' })
    try {
      expect(await stateWhen(outbox('held.txt'), /^waiting$/)).toBe('waiting')
      expect((await run('cp', ['-r', path.join(world.src, 'folder'), outbox(TO)])).code).toBe(0)
      const sending = await stateWhen(outbox(TO, 'folder'), /^sending [1-9]\d*%$/)
      expect(sending).toMatch(/^sending [1-9]\d*%$/)
      // A file inside an entry shows the entry's send; the recipient folder holds that one send.
      expect(await state(outbox(TO, 'folder', 'a.bin'))).toMatch(/^sending \d+%$/)
      expect(await state(outbox(TO))).toMatch(/^sending \d+%$/)
      const root = await state(outbox())
      process.stdout.write(`stalled upload: ${sending}; outbox/: ${root}\n`)
      expect(root).toMatch(/^1 sending \d+%, 1 waiting$/)
    } finally {
      holder.kill('SIGKILL')
    }
    expect(await outboxDrained(world.account, 60_000)).toBe(true)
    expect(await state(outbox())).toBe('empty')
  }, 90_000)

  it('failed: and a reason in a few words when the service refuses the upload', async () => {
    await world.service.controls.fault({ route: 'savefile', kind: 'status', status: 400, count: 1 })
    try {
      await fsp.writeFile(path.join(world.src, 'refused.bin'), bytes(200_000, 3))
      expect((await run('cp', [path.join(world.src, 'refused.bin'), outbox('refused.bin')])).code).toBe(0)
      const failed = await stateWhen(outbox('refused.bin'), /^failed: /)
      process.stdout.write(`refused upload: ${failed}\n`)
      expect(failed).toMatch(/^failed: \S/)
      expect(failed.length).toBeLessThanOrEqual('failed: '.length + 61)
      // The same send as .status tells it.
      const status = await fsp.readFile(path.join(world.account.mountDir, '.status'), 'utf8')
      expect(status).toMatch(/failed\s+.*refused\.bin/)
      expect(await state(outbox())).toBe(failed)
    } finally {
      await world.service.controls.clearFaults()
    }
    await fsp.rm(outbox('refused.bin'))
  }, 60_000)

  it('a file being added to a sent transfer shows its send; the transfer folder, the additions summed up', async () => {
    await fsp.writeFile(path.join(world.src, 'first.txt'), 'first\n')
    expect((await run('cp', [path.join(world.src, 'first.txt'), outbox(TO, 'first.txt')])).code).toBe(0)
    expect(await outboxDrained(world.account, 30_000)).toBe(true)
    const id = (await sentRecords(world.account)).find((r) => r.subject === 'first.txt')!.transferid
    const folder = path.join(world.account.mountDir, 'sent', (await fsp.readdir(path.join(world.account.mountDir, 'sent'))).find((n) => n.endsWith(`(${id})`))!)
    // Sent and not kept here: the pin and cache state, as in inbox/.
    expect(await state(folder)).toMatch(/^(online|cached)$/)
    expect(await fsp.readdir(folder)).toContain('first.txt')
    await world.service.controls.fault({ route: 'savefile', kind: 'stall', count: 1, ms: 8000 })
    const holder = spawn('bash', ['-c', 'exec 3>"$1"; echo added >&3; sleep 6', 'bash', path.join(folder, 'added.txt')], { stdio: 'ignore' })
    try {
      expect(await stateWhen(path.join(folder, 'added.txt'), /^waiting$/)).toBe('waiting')
      // The transfer's own file counts as sent.
      expect(await state(folder)).toBe('1 of 2 sent, 1 waiting')
    } finally {
      holder.kill('SIGKILL')
    }
    expect(await stateWhen(path.join(folder, 'added.txt'), /^sending \d+%$/)).toMatch(/^sending \d+%$/)
    expect(await state(folder)).toMatch(/^1 of 2 sent, 1 sending \d+%$/)
    expect(await stateWhen(folder, /^(online|cached)$/, 30_000)).toMatch(/^(online|cached)$/)
  }, 90_000)

  it('reading every state serves no file byte and makes no request, even of a transfer not opened yet', async () => {
    const mnt = world.account.mountDir
    // Transfers to this user, listed in inbox/ and never opened.
    const toSelf = async (subject: string): Promise<string> => {
      const init = await world.client.transfers.initialize({ subject, to: [USER.email] })
      const data = bytes(100_000, 4)
      await world.client.upload.uploadFile({
        transferUrl: init.transferurl, transferId: init.transferid, transferKey: init.transferkey, fileName: 'n.bin',
        source: { size: data.length, read: async (a, b) => data.subarray(a, b) },
      })
      return (await world.client.transfers.complete(init.transferid, init.transferkey)).id
    }
    const notOpened = await toSelf('Not opened')
    const newest = await toSelf('Newest')
    const listed = (): Promise<boolean> => fsp.readdir(path.join(mnt, 'inbox')).then((names) => [notOpened, newest].every((id) => names.some((n) => n.endsWith(`(${id})`))))
    expect(await waitFor(listed, 20_000, 500)).toBe(true)
    // sent/ itself cannot be pinned and has no state; each transfer in it has.
    const paths = [outbox(), path.join(mnt, 'inbox')]
    for (const area of ['sent', 'inbox']) for (const n of await fsp.readdir(path.join(mnt, area))) paths.push(path.join(mnt, area, n))
    await waitFor(async () => (await world.service.controls.counters()).inFlight === 0, 5000)
    await world.service.controls.resetCounters()
    const r = await run('getfattr', ['--absolute-names', '-n', 'user.transferfs.state', ...paths])
    expect(r.code, r.stderr).toBe(0)
    process.stdout.write(`states read:\n${r.stdout}`)
    // The attribute a file manager reads instead carries the same state, and costs no call either.
    for (const p of paths) {
      const one = await run('getfattr', ['--only-values', '-n', 'user.transferfs.state', p])
      const all = await run('getfattr', ['--only-values', '-n', 'user.transferfs.shown', p])
      expect(all.code, all.stderr).toBe(0)
      expect(all.stdout.split('\n')[0], p).toBe(one.stdout)
    }
    const c = await world.service.controls.counters()
    expect(c.bytesServed).toBe(0)
    expect(c.routes).toEqual({})
  }, 60_000)
})
