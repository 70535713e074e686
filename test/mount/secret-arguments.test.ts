// Secrets given as flags are not left on the command line, which every user of the
// computer can read in /proc/PID/cmdline. A real mount in the foreground with --proxy
// http://user:password@... (a real proxy asking for them) and one with --api-key (none in
// the environment): neither shows its secret in its cmdline once it has said so, and the
// mount works with it. A background mount: neither the parent, while it waits for the
// daemon, nor the daemon shows the secrets, and the daemon uses them.
import { spawn, type ChildProcess } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startProxy, type RunningProxy } from '../../scripts/tinyproxy.js'
import { TS_REGISTER, undoMountsAt, unmountAll, waitFor } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { CLI, cli, login, useAccount, type Account } from './harness.js'

const USER = 'ann'
/** Letters, digits and dashes only: what tinyproxy takes. */
const PROXY_PASSWORD = 'pw-never-in-cmdline-83'

let service: TestService
let proxy: RunningProxy
let account: Account
let apiKey: string
let ids: string[]

beforeAll(async () => {
  service = await startTestService()
  ids = await service.controls.seedInbox(service.user.email, 1, { subjectPrefix: 'Kept secret' })
  proxy = await startProxy({ user: USER, password: PROXY_PASSWORD })
  account = await useAccount(service)
  await login(service)
  // From here on the key is only where a test gives it.
  apiKey = process.env.TRANSFERFS_API_KEY!
  delete process.env.TRANSFERFS_API_KEY
})

afterEach(async () => {
  // The foreground mount and the background one's daemon both name the folder: unmounted, then their groups killed.
  expect(await undoMountsAt(account.mountDir)).toEqual([])
})

afterAll(async () => {
  await unmountAll()
  await proxy?.stop()
  await service?.close()
})

/** A process's arguments as every user of the computer reads them. */
async function cmdline(pid: number): Promise<string> {
  return (await readFile(`/proc/${pid}/cmdline`, 'utf8')).replace(/\0/g, ' ')
}

/** `transferfs mount ...args` started, its stdout and stderr collected as they come. */
function startMount(args: string[]): { child: ChildProcess; out: () => string; err: () => string } {
  // A group of its own, as every mount daemon of the tests has.
  const child = spawn(process.execPath, ['--import', TS_REGISTER, CLI, 'mount', account.mountDir, ...args], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()))
  return { child, out: () => out, err: () => err }
}

/** The seeded transfer's file, read through the mount. */
async function readThroughMount(): Promise<string> {
  const inbox = path.join(account.mountDir, 'inbox')
  const folder = (await readdir(inbox)).find((n) => n.endsWith(`(${ids[0]})`))
  expect(folder, 'the seeded transfer on the mount').toBeDefined()
  return readFile(path.join(inbox, folder!, 'file-1.txt'), 'utf8')
}

/** Waits for the warning about `flag` on stderr: the arguments are hidden by then. */
async function warned(err: () => string, flag: string): Promise<void> {
  expect(await waitFor(() => err().includes(`warning: ${flag}`), 30_000), `no warning about ${flag}: ${err()}`).toBe(true)
  expect(err()).toContain('transferfs config set')
}

describe('a secret given as a flag', () => {
  it('--proxy http://user:password@...: not in the foreground mount\'s cmdline, and the mount goes through that proxy with it', async () => {
    await proxy.clearLog()
    const m = startMount(['--foreground', '--api-key', apiKey, '--proxy', proxy.url(`${USER}:${PROXY_PASSWORD}`)])
    await warned(m.err, '--proxy')
    await warned(m.err, '--api-key')
    expect(await waitFor(() => m.err().includes('is mounted'), 60_000), m.err()).toBe(true)
    const shown = await cmdline(m.child.pid!)
    expect(shown).toContain(`mount ${account.mountDir}`)
    expect(shown).not.toContain(PROXY_PASSWORD)
    expect(shown).not.toContain(apiKey)

    expect(await readThroughMount()).toBe('Content of seeded file 1\n')
    expect(await proxy.connects()).toContain(new URL(service.baseUrl).host)
    expect(await cmdline(m.child.pid!)).not.toContain(PROXY_PASSWORD)
  })

  it('--api-key: not in the foreground mount\'s cmdline, and the mount works with it (the environment has none)', async () => {
    const m = startMount(['--foreground', '--api-key', apiKey])
    await warned(m.err, '--api-key')
    expect(await waitFor(() => m.err().includes('is mounted'), 60_000), m.err()).toBe(true)
    expect(await cmdline(m.child.pid!)).not.toContain(apiKey)
    expect(await readThroughMount()).toBe('Content of seeded file 1\n')
  })

  it('a background mount: neither the waiting parent nor the daemon shows them, and the daemon uses them', async () => {
    await proxy.clearLog()
    const m = startMount([`--api-key=${apiKey}`, '--proxy', proxy.url(`${USER}:${PROXY_PASSWORD}`)])
    await warned(m.err, '--proxy')
    // The parent is waiting for the daemon to report ready (it takes seconds to load).
    const parent = await cmdline(m.child.pid!)
    expect(parent).toContain(`mount ${account.mountDir}`)
    expect(parent).not.toContain(PROXY_PASSWORD)
    expect(parent).not.toContain(apiKey)

    expect(await waitFor(() => m.child.exitCode !== null, 60_000), m.err()).toBe(true)
    expect(m.child.exitCode, m.err()).toBe(0)
    const daemon = Number(/process (\d+)/.exec(m.out())?.[1])
    expect(daemon).toBeGreaterThan(0)
    const shown = await cmdline(daemon)
    expect(shown).toContain(account.mountDir)
    expect(shown).not.toContain(PROXY_PASSWORD)
    expect(shown).not.toContain(apiKey)

    expect(await readThroughMount()).toBe('Content of seeded file 1\n')
    expect(await proxy.connects()).toContain(new URL(service.baseUrl).host)
    const u = await cli(['unmount', account.mountDir])
    expect(u.code, u.stderr).toBe(0)
  })
})
