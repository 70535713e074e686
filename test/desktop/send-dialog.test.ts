// The send dialog (transferfs-send-dialog, GTK 4) driven as a person would, through AT-SPI, under
// Xvfb with a session bus of its own (test/desktop/send-dialog/drive_dialog.py), against the local
// service: filled in and confirmed with a mount running, the transfer arrives once with the right
// recipients and MD5; Cancel sends nothing; signed out, the dialog says so in plain words; the
// service unreachable, it says that. Without a display it says so in one line.
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REPO, run, tempDir, TS_REGISTER } from '../support/mount.js'
import { onXDisplay } from '../support/x-display.js'
import { CLI } from '../mount/harness.js'
import { bytes, md5, outboxDrained, outboxFiles, SETTLE, sentRecords, transferFiles, type User, useSendingMount } from '../send-mount/helpers.js'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const DRIVER = path.join(HERE, 'send-dialog', 'drive_dialog.py')
const DIALOG = path.join(REPO, 'desktop', 'send-dialog', 'transferfs-send-dialog')
const USER: User = { email: 'dialog@example.com', password: 'pw-dialog-123456' }
const BOB = 'bob@example.com'
const CAROL = 'carol@example.org'
/** Where the screenshots go for a person to look at (TRANSFERFS_TEST_SCREENSHOTS), else a temporary folder. */
const SHOTS = process.env.TRANSFERFS_TEST_SCREENSHOTS

interface Driven { code: number | null; stdout: string; stderr: string; status: string | null; error?: string }

/** The dialog on `paths`, driven by `scenario` in a display and a session bus of its own. */
async function drive(paths: string[], scenario: Record<string, unknown>): Promise<Driven> {
  const spec = JSON.stringify({ dialog: [DIALOG, ...paths], ...scenario })
  const r = await run(...onXDisplay(['dbus-run-session', '--', '/usr/bin/python3', DRIVER, spec], '1024x768x24'), { timeoutMs: 90_000 })
  const line = r.stdout.trim().split('\n').pop() ?? ''
  let driven: Driven
  try {
    driven = JSON.parse(line) as Driven
  } catch {
    throw new Error(`the driver said nothing of use (exit ${r.code}): ${r.stdout}\n${r.stderr}`)
  }
  // The session's own stderr too (the display's start, the driver's retry): what a failure needs.
  if (driven.error) throw new Error(`${driven.error}\n${driven.stderr}\n${r.stderr}`)
  return driven
}

async function shot(name: string): Promise<string> {
  const dir = SHOTS ?? await tempDir('transferfs-dialog-shots-')
  await fsp.mkdir(dir, { recursive: true })
  return path.join(dir, name)
}

/** A PNG's width and height, from its header. */
async function pngSize(file: string): Promise<[number, number]> {
  const head = await fsp.readFile(file)
  expect(head.subarray(1, 4).toString('latin1')).toBe('PNG')
  return [head.readUInt32BE(16), head.readUInt32BE(20)]
}

const savedCommand = process.env.TRANSFERFS_COMMAND
beforeAll(() => {
  // The dialog's `transferfs send` is this checkout's CLI.
  process.env.TRANSFERFS_COMMAND = `'${process.execPath}' --import '${TS_REGISTER}' '${CLI}'`
})
afterAll(() => {
  if (savedCommand === undefined) delete process.env.TRANSFERFS_COMMAND
  else process.env.TRANSFERFS_COMMAND = savedCommand
})

describe('the send dialog without a display', () => {
  // Started from a terminal outside a desktop session, or on a display that does not answer:
  // one line saying so, not a Python traceback, and nothing sent (exit 1).
  it.each([
    ['neither DISPLAY nor WAYLAND_DISPLAY set', ['-u', 'DISPLAY', '-u', 'WAYLAND_DISPLAY'], /^transferfs-send-dialog: no display to show the dialog on \(neither DISPLAY nor WAYLAND_DISPLAY is set\): run it from a desktop session$/],
    ['DISPLAY naming no server', ['-u', 'WAYLAND_DISPLAY', 'DISPLAY=:65000'], /^transferfs-send-dialog: cannot open the display \(DISPLAY=:65000\) to show the dialog on$/],
  ])('%s: says so in one line and exits 1', async (_, env, said) => {
    const r = await run('env', [...env, DIALOG, path.join(REPO, 'package.json')], { timeoutMs: 30_000 })
    expect(r.stderr.trimEnd().split('\n'), r.stderr).toHaveLength(1)
    expect(r.stderr.trimEnd()).toMatch(said)
    expect(r.stdout).toBe('')
    expect(r.code).toBe(1)
  }, 40_000)
})

describe('the send dialog', () => {
  const world = useSendingMount(USER)

  it('filled in and confirmed with a mount running: the transfer arrives once, to the recipients, with the file\'s MD5', async () => {
    const data = bytes(2_500_000, 7)
    const file = path.join(world.src, 'report.pdf')
    await fsp.writeFile(file, data)
    await world.service.controls.resetCounters()
    const screenshot = await shot('send-dialog.png')
    const driven = await drive([file], {
      fill: [['To:', `${BOB}, ${CAROL}`], ['Subject:', 'Quarterly report']],
      screenshot,
      press: 'Send',
    })
    expect(driven.code, driven.stderr).toBe(0)
    const entry = path.join(world.account.mountDir, 'outbox', `${BOB},${CAROL}`, 'Quarterly report')
    expect(driven.stdout.trim()).toBe(`outbox: ${entry}`)
    expect(await outboxDrained(world.account, 60_000)).toBe(true)

    const records = (await sentRecords(world.account)).filter((r) => r.subject === 'Quarterly report')
    expect(records).toHaveLength(1)
    expect(records[0]!.recipients).toEqual([BOB, CAROL])
    expect(await transferFiles(world.client, records[0]!.transferid)).toEqual(new Map([['report.pdf', md5(data)]]))
    const counters = await world.service.controls.counters()
    expect([counters.routes.initialize, counters.routes.complete]).toEqual([1, 1])
    const mails = (await world.service.controls.mail()).filter((m) => m.kind === 'recipient' && m.transferid === records[0]!.transferid)
    expect(mails.map((m) => m.to).sort()).toEqual([BOB, CAROL])
    // A real window was drawn: the dialog's frame, not an empty screen.
    const [w, h] = await pngSize(screenshot)
    expect(w).toBeGreaterThan(300)
    expect(h).toBeGreaterThan(200)
  }, 150_000)

  it('offers earlier recipients; Cancel sends nothing', async () => {
    const file = path.join(world.src, 'notes.txt')
    await fsp.writeFile(file, 'not to be sent\n')
    await world.service.controls.resetCounters()
    const mailsBefore = (await world.service.controls.mail()).length
    // The earlier send's recipient is offered as a button that adds it.
    const driven = await drive([file], { fill: [[`Add ${BOB}`, 'click'], ['Subject:', 'Never sent']], press: 'Cancel' })
    expect(driven.code).toBe(1)
    expect(driven.stdout).toBe('')
    // Longer than an entry takes to settle and be sent.
    await new Promise((resolve) => setTimeout(resolve, Number(SETTLE) * 4))
    expect(await outboxFiles(world.account)).toEqual([])
    expect((await world.service.controls.counters()).routes.initialize ?? 0).toBe(0)
    expect((await world.service.controls.mail()).length).toBe(mailsBefore)
  }, 120_000)

  it('through `transferfs send`, signed out: says so in plain words, and sends nothing', async () => {
    const file = path.join(world.src, 'secret.txt')
    await fsp.writeFile(file, 'for bob\n')
    const saved = process.env.TRANSFERFS_CONFIG_DIR
    // A message of its own sends through `transferfs send`, here with no session.
    process.env.TRANSFERFS_CONFIG_DIR = await tempDir('transferfs-signed-out-')
    try {
      await world.service.controls.resetCounters()
      const screenshot = await shot('send-dialog-signed-out.png')
      const driven = await drive([file], {
        fill: [['To:', BOB], ['Message:', 'Here it is'], ['Password:', 'open sesame']],
        press: 'Send',
        waitStatus: 'not signed in',
        statusScreenshot: screenshot,
      })
      expect(driven.status).toMatch(/^You are not signed in to transferfs, or the sign-in has ended\. Sign in with .transferfs login. in a terminal, then send again\.$/)
      expect(driven.code).toBe(1)
      expect((await world.service.controls.counters()).routes.initialize ?? 0).toBe(0)
      await pngSize(screenshot)
    } finally {
      if (saved === undefined) delete process.env.TRANSFERFS_CONFIG_DIR
      else process.env.TRANSFERFS_CONFIG_DIR = saved
    }
  }, 120_000)

  it('through `transferfs send`, the service unreachable: says so in plain words', async () => {
    const file = path.join(world.src, 'unsent.txt')
    await fsp.writeFile(file, 'for bob\n')
    const saved = process.env.TRANSFERFS_API_URL
    // Signed in, but the service's address answers nothing (a port no one listens on).
    process.env.TRANSFERFS_API_URL = 'https://127.0.0.1:9/'
    try {
      const driven = await drive([file], {
        fill: [['To:', BOB], ['Expires after', true]],
        press: 'Send',
        waitStatus: 'cannot be reached',
      })
      expect(driven.status).toMatch(/^The transfer service cannot be reached\. /)
      expect(driven.code).toBe(1)
    } finally {
      process.env.TRANSFERFS_API_URL = saved
    }
  }, 120_000)
})
