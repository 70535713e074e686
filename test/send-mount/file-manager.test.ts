// What the file-manager extensions (desktop/file-managers) show and offer for real entries of a
// real mount of the local service, read through their core as Nautilus, Nemo and Caja do: a
// refused send, a sent transfer with its link, a received transfer only on the service, kept
// through the menu's command and then offering "Stop keeping". Reading serves no file byte.
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { run, TS_REGISTER, waitFor } from '../support/mount.js'
import { withoutQuery } from '../../src/vfs/shown-urls.js'
import { CLI } from '../mount/harness.js'
import { state } from '../mount/pinning.js'
import { bytes, outboxDrained, sentRecords, type User, useSendingMount } from './helpers.js'

const READER = path.join(path.dirname(fileURLToPath(import.meta.url)), '../desktop/file-managers/read_entries.py')
const USER: User = { email: 'files@example.com', password: 'pw-files-123456' }
const TO = 'rcpt@example.com'
const world = useSendingMount(USER, { TRANSFERFS_LISTING_TTL_MS: '5s' })
const saved = process.env.TRANSFERFS_COMMAND

interface Seen { state: string | null; kind: string | null; emblem: string | null; column: string; menu: string[]; pinnedItself: boolean; link: string | null; details: string | null }

async function seen(p: string): Promise<Seen> {
  const r = await run('python3', [READER, 'read', p], { timeoutMs: 30_000 })
  if (r.code !== 0) throw new Error(`read_entries.py: ${r.stderr}`)
  return (JSON.parse(r.stdout) as Seen[])[0]!
}

afterAll(() => {
  if (saved === undefined) delete process.env.TRANSFERFS_COMMAND
  else process.env.TRANSFERFS_COMMAND = saved
})

describe('the file-manager extensions on a real mount', () => {
  it('show a failed send, a sent transfer\'s link, and keep a received transfer through the menu\'s command', async () => {
    const mnt = world.account.mountDir
    // A refused upload: failed, with the reason in the column, and nothing to keep or free.
    await world.service.controls.fault({ route: 'savefile', kind: 'status', status: 400, count: 1 })
    await fsp.writeFile(path.join(world.src, 'refused.bin'), bytes(100_000, 1))
    expect((await run('cp', [path.join(world.src, 'refused.bin'), path.join(mnt, 'outbox', 'refused.bin')])).code).toBe(0)
    const refused = path.join(mnt, 'outbox', 'refused.bin')
    expect(await waitFor(async () => (await state(refused)).startsWith('failed: '), 20_000, 100)).toBe(true)
    const failed = await seen(refused)
    expect(failed).toMatchObject({ kind: 'failed', emblem: 'emblem-important', menu: [], details: null })
    expect(failed.column).toBe(`Failed: ${failed.state!.slice('failed: '.length)}`)
    await world.service.controls.clearFaults()
    await fsp.rm(refused)

    // A sent transfer: its link (link.url), its details, and where it stands on this computer.
    expect((await run('cp', [path.join(world.src, 'refused.bin'), path.join(mnt, 'outbox', TO + '-sent.bin')])).code).toBe(0)
    expect(await outboxDrained(world.account, 30_000)).toBe(true)
    const id = (await sentRecords(world.account)).find((r) => r.subject === `${TO}-sent.bin`)?.transferid
    expect(id).toBeTruthy()
    const sentName = (await fsp.readdir(path.join(mnt, 'sent'))).find((n) => n.endsWith(`(${id})`))!
    const sent = await seen(path.join(mnt, 'sent', sentName))
    expect(sent.kind).toMatch(/^(online|cached)$/)
    expect(sent.link).toMatch(/^https:\/\/\S+$/)
    expect(sent.menu).toEqual(expect.arrayContaining(['keep', 'copy-link', 'open-link', 'details']))
    expect(sent.details).toContain(`Link: ${sent.link}`)

    // A received transfer, never opened: only on the service; "Keep" runs transferfs pin.
    const init = await world.client.transfers.initialize({ subject: 'For the menu', to: [USER.email] })
    const data = bytes(300_000, 2)
    await world.client.upload.uploadFile({
      transferUrl: init.transferurl, transferId: init.transferid, transferKey: init.transferkey, fileName: 'n.bin',
      source: { size: data.length, read: async (a, b) => data.subarray(a, b) },
    })
    const completed = await world.client.transfers.complete(init.transferid, init.transferkey)
    const received = completed.id
    let name: string | undefined
    expect(await waitFor(async () => (name = (await fsp.readdir(path.join(mnt, 'inbox'))).find((n) => n.endsWith(`(${received})`))) !== undefined, 20_000, 500)).toBe(true)
    const folder = path.join(mnt, 'inbox', name!)
    await waitFor(async () => (await world.service.controls.counters()).inFlight === 0, 5000)
    await world.service.controls.resetCounters()
    const online = await seen(folder)
    expect(online).toMatchObject({ state: 'online', kind: 'online', emblem: 'emblem-web', column: 'Only on the service', menu: ['keep', 'copy-link', 'open-link', 'details'], pinnedItself: false })
    // Its page, from the listing that named it (the folder has no link.url).
    expect(online.link).toBe(withoutQuery(completed.url))
    const file = await seen(path.join(folder, 'n.bin'))
    expect(file).toMatchObject({ kind: 'online', menu: ['keep', 'copy-link', 'open-link', 'details'] })
    expect(file.link).toMatch(/^https:\/\/\S+$/)
    // Looking, as the file manager does, fetched no byte of the files.
    expect((await world.service.controls.counters()).bytesServed).toBe(0)

    process.env.TRANSFERFS_COMMAND = `'${process.execPath}' --import '${TS_REGISTER}' '${CLI}'`
    const keep = await run('python3', [READER, 'act', 'keep', folder], { timeoutMs: 120_000 })
    expect(keep.code, keep.stderr).toBe(0)
    expect(JSON.parse(keep.stdout)).toEqual({ ok: true, text: `Keeping ${name}` })
    expect(await waitFor(async () => (await state(folder)) === 'pinned', 30_000, 250), await state(folder)).toBe(true)
    expect(await seen(folder)).toMatchObject({ kind: 'pinned', emblem: 'emblem-favorite', column: 'Kept on this computer', menu: ['stop-keeping', 'copy-link', 'open-link', 'details'], pinnedItself: true })
    const stop = await run('python3', [READER, 'act', 'stop-keeping', folder], { timeoutMs: 120_000 })
    expect(JSON.parse(stop.stdout)).toEqual({ ok: true, text: `No longer keeping ${name}` })
    expect(await seen(folder)).toMatchObject({ kind: 'cached', menu: ['keep', 'free', 'copy-link', 'open-link', 'details'], pinnedItself: false })
  }, 150_000)
})
