// What a normal (unprivileged) user does, as that user, through the real command line:
// sign in, mount in the background (through the setuid fusermount), read a large file byte
// for byte, send a file through outbox/, mount again after the daemon was killed with
// SIGKILL (with and without the mount left behind dead), and unmount. The service runs in
// this (root) process; the user reaches it over HTTPS on loopback with a copy of its CA.
// Everything is judged from outside the user's processes: the service's state, the
// kernel's mount table, and bytes the user read compared with the service's MD5s.
import { chown, readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest'
import type { TransferClient } from '../../src/api/client.js'
import { CLI, inboxDetails, serviceClient } from '../mount/harness.js'
import { bytes, md5, SETTLE } from '../send-mount/helpers.js'
import { autoUnmountHelpers, DEAD_MOUNT, isAlive, run, TS_REGISTER, waitFor, waitForExit } from '../support/mount.js'
import {
  allowFuseDevice,
  ensureNormalUser,
  normalUserSkipReason,
  removeUserFolders,
  runAs,
  userAccount,
  type NormalUser,
  type RunAsOptions,
  type RunAsResult,
} from '../../scripts/support/normal-user.js'
import { startTestService, type TestService } from '../support/service.js'

const SKIP = normalUserSkipReason()
if (SKIP) console.warn(`test/normal-user: skipped: ${SKIP}`)

/** A line of mountinfo with what this test asks of it. */
interface MountLine {
  mountPoint: string
  fsType: string
  /** The super options (after the source): rw,user_id=...,group_id=... for FUSE. */
  superOptions: Record<string, string>
}

function parseMountLines(text: string): MountLine[] {
  const out: MountLine[] = []
  for (const line of text.split('\n')) {
    const f = line.split(' ')
    const sep = f.indexOf('-', 6)
    if (sep < 0) continue
    const superOptions: Record<string, string> = {}
    for (const opt of (f[sep + 3] ?? '').split(',')) {
      const eq = opt.indexOf('=')
      superOptions[eq < 0 ? opt : opt.slice(0, eq)] = eq < 0 ? '' : opt.slice(eq + 1)
    }
    out.push({ mountPoint: (f[4] ?? '').replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))), fsType: f[sep + 1] ?? '', superOptions })
  }
  return out
}

describe.skipIf(SKIP !== null)(`a normal user, through the real command line${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let service: TestService
  let client: TransferClient
  let user: NormalUser
  /** The user's own folder (0700): config/, cache/, data/, mnt/, the CA and files to send. */
  let home: string
  let mountDir: string
  let env: Record<string, string>
  /** The running mount daemon (0 when none is known). */
  let daemon = 0
  /** How many transfers `ls inbox` showed at the first mount. */
  let inboxCount = 0
  /** Why the user cannot mount on this machine at all (found in beforeAll), or null. */
  let cannotMount: string | null = null

  /** Skips the test when the machine lets no normal user mount; else fails it if an earlier step left no mount. */
  const needs = (ctx: TestContext, mounted: boolean): void => {
    if (cannotMount) ctx.skip(`the test user cannot mount here: ${cannotMount}`)
    if (mounted) expect(daemon, 'no mount (an earlier test of this file failed)').toBeGreaterThan(0)
  }

  /** `transferfs ...` as the user, from TypeScript as the other tests run it. */
  const transferfs = (args: string[], opts: RunAsOptions = {}): Promise<RunAsResult> =>
    runAs(user, process.execPath, ['--import', TS_REGISTER, CLI, ...args], { cwd: home, timeoutMs: 90_000, ...opts, env: { ...env, ...opts.env } })

  /** A shell command line as the user ($1.. are args). */
  const sh = (script: string, args: string[] = [], timeoutMs = 60_000): Promise<RunAsResult> => runAs(user, 'sh', ['-c', script, 'sh', ...args], { cwd: home, env, timeoutMs })

  /** The end of the daemon's log, for failure messages. */
  const mountLog = async (): Promise<string> => {
    const text = await readFile(path.join(home, 'data', 'mount.log'), 'utf8').catch((e: Error) => `(no mount.log: ${e.message})`)
    return `\n--- mount.log (last 6000 characters) ---\n${text.slice(-6000)}`
  }
  const explain = async (what: string, r: RunAsResult): Promise<string> =>
    `${what}: exit ${r.code}${r.signal ? ` (${r.signal})` : ''}\nstdout: ${r.stdout}\nstderr: ${r.stderr}${await mountLog()}`

  /** The mounts at mountDir as the user's own process sees them. */
  const userMounts = async (): Promise<MountLine[]> => {
    const r = await sh('cat /proc/self/mountinfo')
    expect(r.code, r.stderr).toBe(0)
    return parseMountLines(r.stdout).filter((m) => m.mountPoint === mountDir)
  }
  /** Whether mountDir is mounted, from this (root) process's mount table: never touches the mount. */
  const mountedHere = async (): Promise<boolean> =>
    parseMountLines(await readFile('/proc/self/mountinfo', 'utf8')).some((m) => m.mountPoint === mountDir)

  const realUidOf = async (pid: number): Promise<number> => Number(/^Uid:\s+(\d+)/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1])

  /** `transferfs mount mountDir` as the user; the daemon's pid, after checking it is the user's. */
  const mountAsUser = async (): Promise<number> => {
    const r = await transferfs(['mount', mountDir])
    expect(r.code, await explain('transferfs mount', r)).toBe(0)
    const pid = Number(/process (\d+)/.exec(r.stdout)?.[1])
    expect(pid, await explain('transferfs mount printed no process id', r)).toBeGreaterThan(0)
    daemon = pid
    expect(await realUidOf(pid)).toBe(user.uid)
    return pid
  }

  const lsInbox = async (): Promise<string[]> => {
    const r = await sh('ls -1 "$1/inbox"', [mountDir])
    expect(r.code, await explain('ls inbox', r)).toBe(0)
    return r.stdout.split('\n').filter(Boolean)
  }

  beforeAll(async () => {
    user = await ensureNormalUser()
    cannotMount = await allowFuseDevice(user)
    if (cannotMount) {
      console.warn(`test/normal-user: skipped: ${cannotMount}`)
      return
    }
    service = await startTestService({ demo: true })
    client = await serviceClient(service)
    ;({ home, env } = await userAccount(user, service, {
      TRANSFERFS_READ_TIMEOUT_MS: '30s',
      TRANSFERFS_UNMOUNT_POLL_MS: '200',
      TRANSFERFS_SHUTDOWN_GRACE_MS: '3s',
      TRANSFERFS_SETTLE_MS: SETTLE,
      TRANSFERFS_LOG_LEVEL: 'debug',
    }))
    mountDir = path.join(home, 'mnt')
    // Transpiling the sources as root first fills the loader's cache, which the user may read
    // but not write: every command of the user then starts in about 2 s instead of 5 s.
    await run(process.execPath, ['--import', TS_REGISTER, CLI, '--version'], { timeoutMs: 60_000 })
  }, 120_000)

  afterAll(async () => {
    // Ends the user's daemons and helpers of this folder, detaches its mounts as root, removes it.
    await removeUserFolders()
    await client?.close()
    await service?.close()
  }, 60_000)

  it('signs in and mounts in the background; the mount is the user\'s own', async (ctx) => {
    needs(ctx, false)
    const login = await transferfs(['login', '--email', service.user.email, '--password-stdin'], { input: `${service.user.password}\n` })
    expect(login.code, await explain('transferfs login', login)).toBe(0)
    // The session was written by the user, for the user alone.
    const tokens = await stat(path.join(home, 'config', 'tokens.json'))
    expect({ uid: tokens.uid, mode: (tokens.mode & 0o777).toString(8) }).toEqual({ uid: user.uid, mode: '600' })

    await mountAsUser()
    // The suite installs both libraries: left to choose, the mount takes libfuse 3.
    const library = process.env.TRANSFERFS_FUSE_LIBRARY === 'libfuse2' ? /\/libfuse\.so\.2/ : /\/libfuse3\.so\.\d/
    expect(await readFile(`/proc/${daemon}/maps`, 'utf8'), await mountLog()).toMatch(library)
    // Readahead is the one setting that needs root: the user is told once that it stayed at the kernel's default.
    const log = await mountLog()
    expect(log.match(/readahead stays at the kernel's default/g)?.length, log).toBe(1)
    const mounts = await userMounts()
    expect(mounts.map((m) => m.fsType), await mountLog()).toEqual(['fuse.transferfs'])
    expect(mounts[0]!.superOptions.user_id).toBe(String(user.uid))
    expect(mounts[0]!.superOptions.group_id).toBe(String(user.gid))
    // Without allow_other the kernel keeps everyone else out, root included.
    await expect(stat(mountDir)).rejects.toMatchObject({ code: 'EACCES' })

    const top = await sh('ls -1A "$1"', [mountDir])
    expect(top.code, await explain('ls of the mount', top)).toBe(0)
    expect(top.stdout.split('\n')).toEqual(expect.arrayContaining(['inbox', 'outbox', 'sent']))
    const expected = (await inboxDetails(client)).length
    const names = await lsInbox()
    expect(names.length, names.join('\n') + (await mountLog())).toBe(expected)
    inboxCount = names.length
  }, 120_000)

  it('reads the biggest file of the inbox byte for byte (md5sum as the user = the service\'s MD5)', async (ctx) => {
    needs(ctx, true)
    const files = (await inboxDetails(client)).flatMap((t) => (t.files ?? []).map((f) => ({ t, f })))
    const { t, f } = files.reduce((a, b) => ((b.f.filesize ?? 0) > (a.f.filesize ?? 0) ? b : a))
    expect(f.filesize).toBeGreaterThan(500 * 1024 * 1024)
    expect(f.md5).toMatch(/^[0-9a-f]{32}$/)
    const folder = (await lsInbox()).find((n) => n.endsWith(`(${t.id})`))
    expect(folder, `no folder for transfer ${t.id}`).toBeDefined()
    const file = path.join(mountDir, 'inbox', folder!, f.filename!)
    const size = await sh('stat -c %s "$1"', [file])
    expect(size.stdout.trim(), await explain('stat', size)).toBe(String(f.filesize))
    const started = Date.now()
    const sum = await sh('md5sum "$1"', [file], 170_000)
    expect(sum.code, await explain(`md5sum (after ${Date.now() - started} ms)`, sum)).toBe(0)
    expect(sum.stdout.split(' ')[0], await mountLog()).toBe(f.md5)
  }, 200_000)

  it('sends a file copied into outbox/: the service holds a new transfer with the same bytes', async (ctx) => {
    needs(ctx, true)
    const data = bytes(6 * 1024 * 1024 + 12_345, 7)
    const src = path.join(home, 'to-send.bin')
    await writeFile(src, data, { mode: 0o600 })
    await chown(src, user.uid, user.gid)
    // A recipient nobody else uses: the service's mail to it names the transfer.
    const to = `normal-user-${process.pid}-${Date.now()}@example.com`
    const cp = await sh('mkdir "$1/outbox/$2" && cp "$3" "$1/outbox/$2/note.bin"', [mountDir, to, src])
    expect(cp.code, await explain('cp into outbox', cp)).toBe(0)

    let transferId = ''
    const mailed = await waitFor(async () => {
      const mail = (await service.controls.mail()).find((m) => m.kind === 'recipient' && m.to === to)
      transferId = mail?.transferid ?? ''
      return transferId !== ''
    }, 60_000, 250)
    expect(mailed, `no transfer reached ${to} within 60 s${await mountLog()}`).toBe(true)
    const sent = await client.transfers.details(transferId, { filesLimit: -1 })
    expect(sent.status).toBe('STATUS_COMPLETE')
    expect((sent.files ?? []).map((x) => ({ name: x.filename, size: x.filesize, md5: x.md5 }))).toEqual([{ name: 'note.bin', size: data.length, md5: md5(data) }])

    // The user's view: the entry left outbox/ and the transfer is in sent/.
    const drained = await waitFor(async () => {
      const r = await sh('find "$1/outbox" -type f', [mountDir])
      return r.code === 0 && r.stdout.trim() === ''
    }, 30_000, 250)
    expect(drained, `outbox/ still holds files${await mountLog()}`).toBe(true)
    const sentList = await sh('ls -1 "$1/sent"', [mountDir])
    expect(sentList.stdout.split('\n').some((n) => n.endsWith(`(${transferId})`)), await explain('ls sent', sentList)).toBe(true)
  }, 120_000)

  it('keeps a transfer offline with transferfs pin, unpins and pins it with the attribute', async (ctx) => {
    needs(ctx, true)
    // The smallest readable transfer of the demo inbox with files, so the pin completes quickly.
    const t = (await inboxDetails(client)).filter((x) => !x.passwordprotected && (x.files ?? []).length > 0)
      .reduce((a, b) => ((b.size ?? 0) < (a.size ?? 0) ? b : a))
    const folder = (await lsInbox()).find((n) => n.endsWith(`(${t.id})`))
    expect(folder, `no folder for transfer ${t.id}`).toBeDefined()
    const dir = path.join(mountDir, 'inbox', folder!)
    const pin = await transferfs(['pin', dir])
    expect(pin.code, await explain('transferfs pin', pin)).toBe(0)
    expect(pin.stdout).toMatch(/^pinned inbox\//)
    const state = async (): Promise<string> => (await sh('getfattr --only-values -n user.transferfs.state "$1"', [dir])).stdout
    expect(await waitFor(async () => (await state()) === 'pinned', 60_000, 250), `state: ${await state()}${await mountLog()}`).toBe(true)
    // status.json is rewritten within a second of a change.
    const pins = async (): Promise<string[] | undefined> =>
      (JSON.parse((await transferfs(['status', '--json'])).stdout) as { pins?: { entries: Array<{ state: string }> } }).pins?.entries.map((e) => e.state)
    expect(await waitFor(async () => JSON.stringify(await pins()) === '["pinned"]', 10_000, 500), JSON.stringify(await pins())).toBe(true)
    const unpin = await sh('setfattr -x user.transferfs.pin "$1"', [dir])
    expect(unpin.code, await explain('setfattr -x', unpin)).toBe(0)
    expect(await state()).toBe('cached')
    // The attribute pins too, as the user: the folder is the owner's to write (its files stay 0444).
    const again = await sh('setfattr -n user.transferfs.pin -v 1 "$1" && getfattr --only-values -n user.transferfs.pin "$1"', [dir])
    expect(again.code, await explain('setfattr -n', again)).toBe(0)
    expect(again.stdout).toBe('1')
    const touch = await sh('touch "$1/new-file"', [dir])
    expect(touch.stderr).toMatch(/Read-only file system/)
  }, 120_000)

  it('transferfs unpin, pin and status reach the mount their path is on with another data folder configured', async (ctx) => {
    needs(ctx, true)
    // As after the demo, which keeps its own data folder: the commands' configured one has no mount.
    const elsewhere = { env: { TRANSFERFS_DATA_DIR: path.join(home, 'other-data') } }
    const t = (await inboxDetails(client)).filter((x) => !x.passwordprotected && (x.files ?? []).length > 0)
      .reduce((a, b) => ((b.size ?? 0) < (a.size ?? 0) ? b : a))
    const dir = path.join(mountDir, 'inbox', (await lsInbox()).find((n) => n.endsWith(`(${t.id})`))!)
    const unpin = await transferfs(['unpin', dir], elsewhere)
    expect(unpin.code, await explain('transferfs unpin', unpin)).toBe(0)
    const pin = await transferfs(['pin', dir], elsewhere)
    expect(pin.code, await explain('transferfs pin', pin)).toBe(0)
    expect(pin.stdout).toMatch(/^pinned inbox\//)
    const status = await transferfs(['status', '--json', dir], elsewhere)
    expect(status.code, await explain('transferfs status', status)).toBe(0)
    expect((JSON.parse(status.stdout) as { mounted: boolean }).mounted).toBe(true)
  }, 120_000)

  it('after kill -9 of the daemon, the next mount of the same folder works', async (ctx) => {
    needs(ctx, true)
    const first = daemon
    const kill = await sh('kill -9 "$1"', [String(first)])
    expect(kill.code, kill.stderr).toBe(0)
    expect(await waitForExit(first, 10_000)).toBe(true)
    // The mount goes with its process (auto_unmount), or is at least dead; never alive. (The
    // fusermount3 of fuse 3.14 and older leaves a normal user's mount dead: its auto_unmount
    // check runs as root, whom the kernel keeps out of a mount without allow_other.)
    const gone = await waitFor(async () => !(await mountedHere()), 3000)
    if (!gone) expect((await sh('ls "$1"', [mountDir])).stderr).toMatch(DEAD_MOUNT)

    const second = await mountAsUser()
    expect(second).not.toBe(first)
    expect((await userMounts()).map((m) => m.superOptions.user_id)).toEqual([String(user.uid)])
    expect((await lsInbox()).length).toBe(inboxCount)
  }, 120_000)

  it('a mount left dead (daemon and its unmount helper killed) is cleaned by the user\'s next mount', async (ctx) => {
    needs(ctx, true)
    const first = daemon
    // The helper that would unmount when the daemon dies (fusermount ... auto_unmount ... DIR),
    // if this mount has one: without it the dead mount stays, as after a crash of both.
    for (const pid of await fusermountHelpers()) process.kill(pid, 'SIGKILL')
    const kill = await sh('kill -9 "$1"', [String(first)])
    expect(kill.code, kill.stderr).toBe(0)
    expect(await waitForExit(first, 10_000)).toBe(true)
    // Left behind: still in the mount table, answering "not connected".
    expect(await mountedHere()).toBe(true)
    expect((await sh('ls "$1"', [mountDir])).stderr).toMatch(DEAD_MOUNT)

    const second = await mountAsUser()
    expect(second).not.toBe(first)
    // One mount there, the new one, and it answers.
    expect((await userMounts()).map((m) => m.superOptions.user_id)).toEqual([String(user.uid)])
    expect((await lsInbox()).length).toBe(inboxCount)
  }, 120_000)

  it('`transferfs unmount` as the user ends the mount and the daemon', async (ctx) => {
    needs(ctx, true)
    const pid = daemon
    const r = await transferfs(['unmount', mountDir])
    expect(r.code, await explain('transferfs unmount', r)).toBe(0)
    expect(await mountedHere()).toBe(false)
    expect(await waitForExit(pid, 15_000), await mountLog()).toBe(true)
    daemon = 0
    // The folder is an ordinary empty folder of the user's again.
    const ls = await sh('ls -1A "$1"', [mountDir])
    expect({ code: ls.code, out: ls.stdout }).toEqual({ code: 0, out: '' })
  }, 60_000)

  /** Pids of the running fusermount helpers watching mountDir. */
  async function fusermountHelpers(): Promise<number[]> {
    const out: number[] = []
    for (const pid of await autoUnmountHelpers(mountDir)) if (await isAlive(pid)) out.push(pid)
    return out
  }
})
