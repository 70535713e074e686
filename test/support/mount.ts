// Real mounts for tests, always undone. No mount is served by the test's own process: a
// test starts a mount daemon (startDaemon), or has a core of its own mounted by one
// (mountCore, core-host.ts), each the leader of a process group of its own, and drives the
// mount with child processes (run()). Every mount is tracked; useMounts() undoes them after
// each test, each step within a deadline: the mount unmounted, or (not gone in time) its
// connection aborted and detached (fuse-cleanup.ts); then the daemon's group, and the group
// of any process whose command line names the mount's folder (a daemon `transferfs mount`
// started in the background), is killed once it has had its moment to end by itself. An exit
// hook does the same, without waiting, on whatever is left, whatever happened.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach } from 'vitest'
import { DEFAULT_SETTINGS, resolveSettings } from '../../src/config/settings.js'
import { startBackgroundMount } from '../../src/fuse/background.js'
import type { MountSettings } from '../../src/fuse/mount.js'
import type { HostReply, Inspect, MountRequest } from './core-host.js'
import { forceUnmountUnder, forceUnmountUnderSync, removeTree, STEP_DEADLINE_MS } from './fuse-cleanup.js'
import { collectGroup, killGroup, killGroupSync, liveProcesses, liveProcessesSync, namesDir, processState, type ProcessInfo } from '../../scripts/support/process-group.js'

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
/** `node --import` this to run the project's TypeScript in a child process. */
export const TS_REGISTER = path.join(REPO, 'test/fuse/fixtures/register-ts.mjs')

interface Tracked {
  dir: string
  /** Lets go of a core-host daemon's channel: it unmounts and ends itself. */
  release?: () => void
  pid?: number
  tmp?: string
}
const tracked = new Set<Tracked>()

/**
 * The last resort, at process exit: sync, so nothing may wait on a mount (a daemon killed
 * here answers no more): the daemons' groups are killed (the spare core host's too), and each
 * connection is aborted before it is detached.
 */
process.once('exit', () => {
  if (spare?.pid) killGroupSync(spare.pid)
  const processes = liveProcessesSync()
  const own = processes.find((p) => p.pid === process.pid)?.pgid
  for (const t of tracked) {
    if (t.pid) killGroupSync(t.pid)
    forceUnmountUnderSync(t.dir)
  }
  for (const dir of temps) forceUnmountUnderSync(dir)
  for (const dir of [...[...tracked].map((t) => t.dir), ...temps]) endNamingSync(processes, dir, own)
})

/** The suite runs on either FUSE library: TRANSFERFS_FUSE_LIBRARY picks it, for a test's own core as for the CLI's mounts. */
export const TEST_MOUNT_SETTINGS: MountSettings = {
  ...DEFAULT_SETTINGS,
  fuseLibrary: resolveSettings({ env: { TRANSFERFS_FUSE_LIBRARY: process.env.TRANSFERFS_FUSE_LIBRARY } }).settings.fuseLibrary,
  readTimeoutMs: 3000,
  metadataTimeoutMs: 3000,
  writeTimeoutMs: 3000,
  shutdownGraceMs: 2000,
  unmountPollMs: 200,
}

const temps = new Set<string>()

/** A fresh folder, removed by unmountAll() once nothing is mounted in it. */
// What the kernel answers on a mount whose daemon died: ENOTCONN once the connection is
// gone, ECONNABORTED while the kernel is still aborting it.
export const DEAD_MOUNT = /Transport endpoint is not connected|Software caused connection abort/

export async function tempDir(prefix = 'transferfs-test-'): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix))
  temps.add(dir)
  return dir
}

/** A core a test mounts: the export `make` of `module` called with args (what the IPC channel carries: a Buffer arrives as a Uint8Array). */
export interface CoreRecipe {
  module: string
  make: string
  args?: unknown[]
}

/** A core mounted by a daemon of its own (core-host.ts). */
export interface CoreMount {
  dir: string
  /** The daemon: the leader of a process group of its own. */
  pid: number
  /** The FUSE library it mounted with. */
  backend: string
  /** A value of the daemon's: `core.<name>` (a method is called with args), `windows.reads`, `windows.size`, `ended` ('unmounted' | 'external' once the mount is gone). */
  inspect<T = unknown>(what: string, ...args: unknown[]): Promise<T>
  /** The daemon's clean unmount (open files waited for within the grace, the core's shutdown), done when it resolves; the daemon stays to be inspected. */
  unmount(): Promise<void>
}

const CORE_HOST = path.join(REPO, 'test/support/core-host.ts')
/** ms: for a daemon to start, mount and say so. */
const READY_TIMEOUT_MS = 30_000

/** A core host started ahead of need: it loads while the test before runs, so a mount costs a mount, not a node start. */
let spare: ChildProcess | undefined

function startHost(): ChildProcess {
  const child = spawn(process.execPath, ['--import', TS_REGISTER, CORE_HOST], { detached: true, stdio: ['ignore', 'ignore', 'ignore', 'ipc'], serialization: 'advanced' })
  child.on('error', () => {})
  child.unref()
  child.channel?.unref()
  return child
}

function takeHost(): ChildProcess {
  const host = spare?.connected ? spare : startHost()
  spare = startHost()
  return host
}

/**
 * Mounts the core `recipe` makes at a fresh folder (or dir), in a daemon of its own process
 * group: a test never waits on a mount its own process serves, and the teardown can kill
 * whatever the daemon became. Rejects with the mount's error.
 */
export async function mountCore(recipe: CoreRecipe, opts: { settings?: Partial<MountSettings>; dir?: string } = {}): Promise<CoreMount> {
  const tmp = opts.dir ? undefined : await tempDir()
  const dir = path.resolve(opts.dir ?? path.join(tmp!, 'mnt'))
  const t: Tracked = { dir, tmp }
  tracked.add(t)
  const logFile = path.join(path.dirname(dir), 'core-host.log')
  const child = takeHost()
  t.pid = child.pid
  t.release = () => child.connected && child.disconnect()
  const answers = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  let ready: { resolve: (backend: string) => void; reject: (e: Error) => void } | undefined
  child.on('message', (m: HostReply) => {
    if (m.type === 'ready') ready?.resolve(m.backend)
    else if (m.type === 'failed') ready?.reject(new Error(m.message))
    else {
      const a = answers.get(m.id)
      answers.delete(m.id)
      if (m.error !== undefined) a?.reject(new Error(m.error))
      else a?.resolve(m.value)
    }
  })
  child.on('exit', (code, sig) => {
    const gone = new Error(`the mount daemon ended (${sig ?? `exit code ${code}`}); see ${logFile}`)
    ready?.reject(gone)
    for (const a of answers.values()) a.reject(gone)
    answers.clear()
  })
  const backend = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the mount daemon did not report ready within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS)
    ready = { resolve: (b) => (clearTimeout(timer), resolve(b)), reject: (e) => (clearTimeout(timer), reject(e)) }
    const request: MountRequest = { type: 'mount', module: recipe.module, make: recipe.make, args: recipe.args ?? [], dir, settings: { ...TEST_MOUNT_SETTINGS, ...opts.settings }, logFile }
    child.send(request)
  }).catch(async (err: unknown) => {
    // It mounted nothing (a failed mount undoes itself): it goes now, and the folder, maybe
    // another mount's, is no longer its to undo.
    await killGroup(child.pid!, GROUP_KILL_MS)
    tracked.delete(t)
    throw err
  })
  let next = 0
  const ask = (q: Omit<Inspect, 'id'>): Promise<unknown> =>
    new Promise((resolve, reject) => {
      if (!child.connected) return reject(new Error('the mount daemon is gone'))
      const id = next++
      answers.set(id, { resolve, reject })
      child.send({ ...q, id })
    })
  return {
    dir,
    pid: child.pid!,
    backend,
    inspect: <T>(what: string, ...args: unknown[]) => ask({ type: 'inspect', what, args }) as Promise<T>,
    unmount: async () => void (await ask({ type: 'unmount' })),
  }
}

/** Starts a mount daemon (a .ts script run with the TS loader, given DIR as its argument) and waits until it is ready. */
export async function startDaemon(script: string, dir: string, logFile?: string, env?: NodeJS.ProcessEnv): Promise<number> {
  // A folder made by tempDir() goes away with the mount.
  const parent = path.dirname(dir)
  const t: Tracked = { dir, tmp: path.basename(parent).startsWith('transferfs-test-') ? parent : undefined }
  tracked.add(t)
  const { pid } = await startBackgroundMount({ args: [script, dir], execArgv: ['--import', TS_REGISTER], logFile, readyTimeoutMs: 30_000, env: env && { ...process.env, ...env } })
  t.pid = pid
  return pid
}

/**
 * The pids of the auto_unmount helpers watching dir: libfuse 3 runs fuse3's helper by its own
 * name, libfuse 2 runs whichever is installed as fusermount. Helpers from 3.15 on, which root's
 * mounts start only to watch, take the option as `--auto-unmount`; the others as `-o auto_unmount`.
 */
export async function autoUnmountHelpers(dir: string): Promise<number[]> {
  const r = await run('pgrep', ['-f', `^fusermount3? .*auto[_-]unmount.* -- ${dir}$`])
  return r.stdout.trim().split('\n').filter(Boolean).map(Number)
}

/** True while pid runs; a zombie (dead, not yet reaped by its parent) counts as dead. */
export async function isAlive(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

/** Resolves once pid has ended (true) or after timeoutMs (false). */
export function waitForExit(pid: number, timeoutMs = 10_000): Promise<boolean> {
  return waitFor(async () => !(await isAlive(pid)), timeoutMs)
}

/** Polls until cond() is true or timeoutMs passes; returns the last result. */
export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs = 10_000, stepMs = 100): Promise<boolean> {
  const end = Date.now() + timeoutMs
  for (;;) {
    if (await cond()) return true
    if (Date.now() > end) return false
    await new Promise((r) => setTimeout(r, stepMs))
  }
}

export async function isMounted(dir: string): Promise<boolean> {
  const info = await readFile('/proc/self/mountinfo', 'utf8')
  return info.split('\n').some((l) => l.split(' ')[4] === dir)
}

/** ms: for a core host's own clean unmount (the core's shutdown included), and for a daemon to end by itself once its mount is gone. */
const OWN_END_MS = 10_000
/** ms: for a process group to be gone after SIGKILL. */
const GROUP_KILL_MS = 5000
/**
 * ms: the longest undo of one mount: its own unmount, the helper's unmount, the abort with
 * fusectl mounted first, the lazy unmount and umount -l (a step each), its daemon's own end,
 * the group's kill.
 */
export const UNDO_DEADLINE_MS = OWN_END_MS + 4 * STEP_DEADLINE_MS + OWN_END_MS + GROUP_KILL_MS

/** Undoes one mount, each step bounded: unmount, abort, kill the group; returns what was left mounted (with why), if anything. */
async function undo(t: Tracked): Promise<string[]> {
  // A core host, let go of, unmounts by itself (its open files waited for, its core shut
  // down) and ends; a stopped one cannot, and is not waited for.
  if (t.release && t.pid) {
    t.release()
    await waitFor(async () => !/^[RSD]$/.test((await processState(t.pid!)) ?? ''), OWN_END_MS, 20)
  }
  // The helper's unmount; what did not go by itself: its connection aborted, then detached.
  const left = await forceUnmountUnder(t.dir)
  await endGroups(t.dir, t.pid)
  if (t.tmp && left.length === 0) await removeTree(t.tmp).catch(() => {})
  tracked.delete(t)
  return left
}

const names = (p: ProcessInfo, dir: string): boolean => namesDir(p.rawCmdline, dir)

let ownGroup: number | undefined
async function ownProcessGroup(): Promise<number> {
  return (ownGroup ??= (await liveProcesses()).find((p) => p.pid === process.pid)?.pgid ?? process.pid)
}

/**
 * Ends the daemon (pid, the leader of a group of its own) and every process whose command line
 * names dir: each has until OWN_END_MS to end by itself (a daemon does once its mount is
 * gone, and an auto_unmount helper once its daemon is), a stopped one is killed at once (it
 * cannot end by itself, and what waits on it would wait too), then each group is killed
 * whole. A process in this process's own group (started without one of its own) is killed alone.
 */
async function endGroups(dir: string, pid?: number): Promise<void> {
  const own = await ownProcessGroup()
  const naming = (await liveProcesses()).filter((p) => p.pid !== process.pid && names(p, dir))
  const groups = new Set([...(pid ? [pid] : []), ...naming.filter((p) => p.pgid !== own).map((p) => p.pgid)])
  const alone = naming.filter((p) => p.pgid === own).map((p) => p.pid)
  const kill = (leader: number): void => (groups.has(leader) ? killGroupSync(leader) : signal(leader, 'SIGKILL'))
  const leaders = [...groups, ...alone]
  const end = Date.now() + OWN_END_MS
  while (leaders.length > 0 && Date.now() < end) {
    const states = await Promise.all(leaders.map((l) => processState(l)))
    states.forEach((state, i) => state && /^[Tt]$/.test(state) && kill(leaders[i]!))
    if (states.every((state) => state === undefined)) break
    await new Promise((r) => setTimeout(r, 100))
  }
  for (const p of alone) signal(p, 'SIGKILL')
  await Promise.all([...groups].map((g) => killGroup(g, GROUP_KILL_MS)))
}

/** At exit: the groups of the processes naming dir killed, not waited for. */
function endNamingSync(processes: ProcessInfo[], dir: string, own: number | undefined): void {
  for (const p of processes) {
    if (p.pid === process.pid || !names(p, dir)) continue
    if (p.pgid === p.pid && p.pgid !== own) killGroupSync(p.pgid)
    else signal(p.pid, 'SIGKILL')
  }
}

/** A signal to a process that may have ended meanwhile (a test may have killed it). */
function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig)
  } catch {}
}

/**
 * Undoes what is mounted at dir or in it that this harness does not track (`transferfs mount`
 * run by the test), as a tracked mount is: unmounted, aborted if it does not go, then the
 * groups of the processes naming dir (its daemon among them) killed. Returns what was left mounted.
 */
export async function undoMountsAt(dir: string): Promise<string[]> {
  const left = await forceUnmountUnder(dir)
  await endGroups(dir)
  return left
}

/** Undoes every mount and removes every temporary folder; throws, once all is done, naming any mount that would not go. */
export async function unmountAll(): Promise<void> {
  const left: string[] = []
  // The newest first: a mount made over an older one at the same folder (the older one stale), whose helper waits on its daemon, goes first.
  for (const t of [...tracked].reverse()) {
    left.push(...(await undo(t).catch((err: Error) => {
      tracked.delete(t)
      return [`${t.dir}: ${err.message}`]
    })))
  }
  for (const dir of [...temps]) {
    temps.delete(dir)
    // A mount in it that no one tracks (`transferfs mount`'s own daemon): unmounted, and its group ended.
    await undoMountsAt(dir)
    await removeTree(dir).catch((err: Error) => left.push(err.message))
  }
  if (left.length > 0) throw new Error(`left mounted after the test: ${left.join('; ')}`)
}

/** Registers the unmounting hooks in the calling test file. */
export function useMounts(): void {
  afterEach(unmountAll)
  afterAll(unmountAll)
}

export interface RunResult {
  code: number
  stdout: string
  stderr: string
}

/**
 * Runs a program to completion in a process group of its own; never throws on a failing exit
 * code. After timeoutMs the whole group is killed (a shell's children too), and stderr says so.
 */
export async function run(cmd: string, args: string[], opts: { timeoutMs?: number; input?: string; encoding?: 'utf8' | 'latin1'; cwd?: string } = {}): Promise<RunResult> {
  const child = spawn(cmd, args, { cwd: opts.cwd, detached: true, stdio: ['pipe', 'pipe', 'pipe'] })
  const r = await collectGroup(child, opts.timeoutMs ?? 30_000, opts.input, cmd, opts.encoding ?? 'utf8')
  return { code: r.code, stdout: r.stdout, stderr: r.stderr }
}

/** Runs a python3 snippet (argv available as sys.argv[1:]); used for xattrs and utime, which node lacks or we want outside this process. */
export function python(code: string, ...args: string[]): Promise<RunResult> {
  return run('python3', ['-c', code, ...args])
}
