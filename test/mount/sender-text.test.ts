// A sender's text is shown as text. A transfer whose subject and sender hold an escape
// sequence (OSC 0, which retitles a terminal) and a newline followed by a line of their own
// making: `transferfs inbox --watch` prints it as one line with both escaped (its --json as
// the exact text), `inbox` and `info` too; the background mount's log (mount.log) tells its
// arrival in one line, with no line the sender forged.
import { spawn, type ChildProcess } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MOUNT_LOG_FILE } from '../../src/cli/compose.js'
import { TS_REGISTER, undoMountsAt, unmountAll, waitFor } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { CLI, cli, login, useAccount, type Account } from './harness.js'

const SUBJECT = 'Invoice\x1b]0;owned\x07\nforged row'
const FROM = 'mallory@example.com\x1b]0;owned\x07\ntransferfs: error: forged by the sender'
/** How the two read once shown as text. */
const SUBJECT_SHOWN = 'Invoice\\x1b]0;owned\\x07\\nforged row'
const FROM_SHOWN = 'mallory@example.com\\x1b]0;owned\\x07\\ntransferfs: error: forged by the sender'
/** Any control character, the escape (ESC) and the bell (BEL) of OSC 0 among them, but the newline ending each line. */
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/

let service: TestService
let account: Account
const children: ChildProcess[] = []

beforeAll(async () => {
  service = await startTestService()
  await service.controls.seedInbox(service.user.email, 1, { subjectPrefix: 'Earlier' })
  // No session bus: the mount tells arrivals in its log only.
  delete process.env.DBUS_SESSION_BUS_ADDRESS
  account = await useAccount(service, { TRANSFERFS_LISTING_TTL_MS: '10m' })
  await login(service)
})

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL')
  await unmountAll()
  await service?.close()
})

/** `transferfs inbox --watch ...` running, its stdout kept whole; resolves once it has taken its starting point. */
async function watcher(extra: string[]): Promise<{ out: () => string }> {
  const child = spawn(process.execPath, ['--import', TS_REGISTER, CLI, 'inbox', '--watch', '--interval', '1s', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  let out = ''
  let err = ''
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()))
  if (!(await waitFor(() => err.includes('watching the inbox'), 30_000))) throw new Error(`the watch did not start: ${err}`)
  return { out: () => out }
}

/** Lines of `text` a sender made: ones that start with their words. */
const forged = (text: string): string[] => text.split('\n').filter((l) => l.startsWith('forged row') || l.startsWith('transferfs: error: forged'))

describe('a sender\'s subject and address with an escape sequence and a newline', () => {
  it('inbox --watch prints one line with both escaped, --json the exact text; inbox and info show them escaped', async () => {
    const plain = await watcher([])
    const json = await watcher(['--json'])
    const [id] = await service.controls.seedInbox(service.user.email, 1, { subjectPrefix: SUBJECT, from: FROM })
    expect(await waitFor(() => plain.out().includes(id!) && json.out().endsWith('\n'), 30_000), plain.out()).toBe(true)

    const lines = plain.out().split('\n').filter(Boolean)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(`${FROM_SHOWN}  ${SUBJECT_SHOWN} 1`)
    expect(plain.out()).not.toMatch(CONTROL)
    expect(forged(plain.out())).toEqual([])
    const arrived = JSON.parse(json.out()) as { subject: string; from: string }
    expect([arrived.subject, arrived.from]).toEqual([`${SUBJECT} 1`, FROM])

    const table = await cli(['inbox'])
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).not.toMatch(CONTROL)
    expect(forged(table.stdout)).toEqual([])
    expect(table.stdout.split('\n').filter((l) => l.includes(id!))).toHaveLength(1)
    const info = await cli(['info', id!, '--files'])
    expect(info.code, info.stderr).toBe(0)
    expect(info.stdout).not.toMatch(CONTROL)
    expect(forged(info.stdout)).toEqual([])
    expect(info.stdout).toContain(`${SUBJECT_SHOWN} 1`)
    expect(info.stdout).toContain(FROM_SHOWN)
  })

  it('the background mount\'s log tells the arrival in one line: no line the sender forged', async () => {
    const r = await cli(['mount', account.mountDir])
    try {
      expect(r.code, r.stderr).toBe(0)
      const inbox = path.join(account.mountDir, 'inbox')
      await readdir(inbox) // someone looks: arrivals are asked for at the short interval
      const [id] = await service.controls.seedInbox(service.user.email, 1, { subjectPrefix: 'Log', from: FROM })
      expect(await waitFor(async () => (await readdir(inbox)).some((n) => n.endsWith(`(${id})`)), 30_000, 250)).toBe(true)
      const logFile = path.join(account.home, 'data', MOUNT_LOG_FILE)
      expect(await waitFor(async () => (await readFile(logFile, 'utf8')).includes('new transfer from mallory'), 30_000), await readFile(logFile, 'utf8')).toBe(true)
      const log = await readFile(logFile, 'utf8')
      expect(log).toMatch(new RegExp(`^transferfs: info: new transfer from ${FROM_SHOWN.replace(/[\\[\]().]/g, '\\$&')}: ${inbox}/.*\\(${id}\\)$`, 'm'))
      expect(forged(log)).toEqual([])
      expect(log).not.toMatch(CONTROL)
      const u = await cli(['unmount', account.mountDir])
      expect(u.code, u.stderr).toBe(0)
    } finally {
      // Unmounted, aborted if it does not go, then the daemon's group killed.
      await undoMountsAt(account.mountDir)
    }
  })
})
