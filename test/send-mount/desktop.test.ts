// The desktop side of a real mount, with a real session bus (dbus-daemon), real
// notify-send and a stand-in notification server that prints what it is sent: a finished
// outbox entry leaves a `link.url` Internet shortcut with its link in its sent/ folder and
// a notification carrying the link; a transfer that arrives is told with its sender,
// subject, size and folder.
import { spawn, type ChildProcess } from 'node:child_process'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run, waitFor } from '../support/mount.js'
import { outboxDrained, sentRecords, type User, useSendingMount } from './helpers.js'

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), '../desktop/fixtures/notification-server.py')
const USER: User = { email: 'desk@example.com', password: 'pw-desk-123456' }

interface Told {
  app: string
  summary: string
  body: string
}

let bus: { pid: number } | undefined
let server: ChildProcess | undefined
const told: Told[] = []

// Before the mount starts (hooks run in order): it must find the session bus.
beforeAll(async () => {
  const r = await run('dbus-daemon', ['--session', '--fork', '--print-address=1', '--print-pid=1'])
  expect(r.code, r.stderr).toBe(0)
  const [address, pid] = r.stdout.trim().split('\n')
  bus = { pid: Number(pid) }
  process.env.DBUS_SESSION_BUS_ADDRESS = address
  server = spawn('/usr/bin/python3', [SERVER], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env })
  let out = ''
  server.stdout!.on('data', (d: Buffer) => {
    out += d.toString()
    const lines = out.split('\n')
    out = lines.pop()!
    for (const line of lines) if (line.startsWith('{')) told.push(JSON.parse(line) as Told)
  })
  let ready = false
  server.stdout!.on('data', (d: Buffer) => (ready ||= d.toString().includes('ready')))
  if (!(await waitFor(() => ready, 15_000))) throw new Error('the notification server did not start')
})

const world = useSendingMount(USER)

afterAll(() => {
  server?.kill('SIGKILL')
  if (bus) process.kill(bus.pid, 'SIGTERM')
  delete process.env.DBUS_SESSION_BUS_ADDRESS
})

describe('on the desktop', () => {
  it('a finished send leaves link.url in its sent folder and a notification with the link', async () => {
    const src = path.join(world.src, 'plans.txt')
    await fsp.writeFile(src, 'the plans\n')
    expect((await run('cp', [src, path.join(world.account.mountDir, 'outbox/')])).code).toBe(0)
    expect(await outboxDrained(world.account)).toBe(true)
    const [record] = (await sentRecords(world.account)).filter((r) => r.subject === 'plans.txt')
    expect(record?.url).toMatch(/^https:\/\//)
    const folder = (await fsp.readdir(path.join(world.account.mountDir, 'sent'))).find((n) => n.endsWith(`(${record!.transferid})`))
    expect(folder).toBeDefined()
    const dir = path.join(world.account.mountDir, 'sent', folder!)
    const details = JSON.parse(await fsp.readFile(path.join(dir, '.transfer.json'), 'utf8')) as { url: string }
    expect(details.url).toBe(record!.url)
    expect(await fsp.readFile(path.join(dir, 'link.url'), 'utf8')).toBe(`[InternetShortcut]\nURL=${details.url}\n`)
    expect((await fsp.readdir(dir)).sort()).toEqual(['.forward', '.transfer.json', 'link.url', 'plans.txt'])

    expect(await waitFor(() => told.some((n) => n.summary === 'Sent: plans.txt'), 20_000)).toBe(true)
    const note = told.find((n) => n.summary === 'Sent: plans.txt')!
    expect(note.app).toBe('transferfs')
    expect(note.body.split('\n')).toEqual([details.url, dir])
  })

  it('a transfer that arrives is told with sender, subject, size and folder', async () => {
    const inbox = path.join(world.account.mountDir, 'inbox')
    await fsp.readdir(inbox) // someone looks: the short interval
    const [id] = await world.service.controls.seedInbox(USER.email, 1, { subjectPrefix: 'Hello desk' })
    expect(await waitFor(() => told.some((n) => n.summary.startsWith('New transfer')), 30_000)).toBe(true)
    const note = told.find((n) => n.summary.startsWith('New transfer'))!
    const name = (await fsp.readdir(inbox)).find((n) => n.endsWith(`(${id})`))
    expect(name).toBeDefined()
    const details = JSON.parse(await fsp.readFile(path.join(inbox, name!, '.transfer.json'), 'utf8')) as { from: string; size: number }
    expect(note.summary).toBe(`New transfer from ${details.from}`)
    const [subject, files, where] = note.body.split('\n')
    expect(subject).toBe('Hello desk 1')
    expect(files).toMatch(/^1 file, \d+ B$/)
    expect(where).toBe(path.join(inbox, name!))
    expect(told.filter((n) => n.summary.startsWith('New transfer'))).toHaveLength(1)
  })

  it('a pin is told once its files are all on this computer, with its folder', async () => {
    const inbox = path.join(world.account.mountDir, 'inbox')
    const name = (await fsp.readdir(inbox)).find((n) => n.includes('Hello desk'))
    expect(name).toBeDefined()
    const dir = path.join(inbox, name!)
    const pin = await run('setfattr', ['-n', 'user.transferfs.pin', '-v', '1', dir])
    expect(pin.code, pin.stderr).toBe(0)
    expect(await waitFor(() => told.some((n) => n.summary.startsWith('Kept on this computer')), 30_000)).toBe(true)
    const note = told.find((n) => n.summary.startsWith('Kept on this computer'))!
    expect(note.summary).toBe(`Kept on this computer: ${name}`)
    expect(note.body.split('\n')).toEqual([dir, 'readable offline'])
  })
})
