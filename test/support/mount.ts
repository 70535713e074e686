// Real mounts for tests, always undone. A test mounts a FileSystemCore in its own
// process (fine, as long as the test never makes a sync call into the mount: drive it
// with child processes through run()) or starts a mount daemon process. Every mount is
// tracked; useMounts() unmounts them after each test, and an exit hook runs
// `fusermount -uz` (with whichever helper is installed) on whatever is left, whatever happened.
import { execFile, execFileSync } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach } from 'vitest'
import { DEFAULT_SETTINGS, resolveSettings } from '../../src/config/settings.js'
import { startBackgroundMount } from '../../src/fuse/background.js'
import { silentLogger, type Logger } from '../../src/base/log.js'
import { mountFileSystem, type MountHandle, type MountSettings } from '../../src/fuse/mount.js'
import { mountHelperCommand, unmountWithHelper } from '../../src/fuse/mount-helper.js'
import type { FileSystemCore } from '../../src/vfs/core.js'

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
/** `node --import` this to run the project's TypeScript in a child process. */
export const TS_REGISTER = path.join(REPO, 'test/fuse/fixtures/register-ts.mjs')

interface Tracked {
  dir: string
  handle?: MountHandle
  pid?: number
  tmp?: string
}
const tracked = new Set<Tracked>()

/** The last resort, at process exit: sync is fine here (fusermount is a child, not a call into the mount). */
process.once('exit', () => {
  for (const t of tracked) {
    if (t.pid) {
      try {
        process.kill(t.pid, 'SIGKILL')
      } catch {}
    }
    try {
      execFileSync(mountHelperCommand(), ['-uz', t.dir], { stdio: 'ignore' })
    } catch {}
  }
})

/** The suite runs on either FUSE library: TRANSFERFS_FUSE_LIBRARY picks it, for in-process mounts as for the CLI's. */
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

/** Mounts core in this process at a fresh folder (or dir). */
export async function mountCore(
  core: FileSystemCore,
  opts: { settings?: Partial<MountSettings>; dir?: string; log?: Logger } = {},
): Promise<MountHandle> {
  const tmp = opts.dir ? undefined : await tempDir()
  const dir = opts.dir ?? path.join(tmp!, 'mnt')
  const t: Tracked = { dir, tmp }
  tracked.add(t)
  t.handle = await mountFileSystem(core, dir, { ...TEST_MOUNT_SETTINGS, ...opts.settings }, opts.log ?? silentLogger)
  return t.handle
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

async function undo(t: Tracked): Promise<void> {
  if (t.handle) {
    await Promise.race([t.handle.unmount().catch(() => {}), new Promise((r) => setTimeout(r, 10_000))])
  }
  if (t.pid && (await isAlive(t.pid))) {
    process.kill(t.pid, 'SIGTERM')
    if (!(await waitForExit(t.pid, 5000))) process.kill(t.pid, 'SIGKILL')
  }
  if (await isMounted(t.dir)) await unmountWithHelper(t.dir)
  if (t.tmp) await rm(t.tmp, { recursive: true, force: true }).catch(() => {})
  tracked.delete(t)
}

export async function unmountAll(): Promise<void> {
  for (const t of [...tracked]) await undo(t)
  for (const dir of [...temps]) {
    temps.delete(dir)
    await rm(dir, { recursive: true, force: true }).catch(() => {})
  }
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

/** Runs a program to completion; never throws on a failing exit code. Killed after timeoutMs. */
export function run(cmd: string, args: string[], opts: { timeoutMs?: number; input?: string; encoding?: 'utf8' | 'latin1'; cwd?: string } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { timeout: opts.timeoutMs ?? 30_000, encoding: opts.encoding ?? 'utf8', maxBuffer: 256 * 1024 * 1024, cwd: opts.cwd }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0
      resolve({ code, stdout: String(stdout), stderr: String(stderr) })
    })
    if (opts.input !== undefined) child.stdin?.end(opts.input)
  })
}

/** Runs a python3 snippet (argv available as sys.argv[1:]); used for xattrs and utime, which node lacks or we want outside this process. */
export function python(code: string, ...args: string[]): Promise<RunResult> {
  return run('python3', ['-c', code, ...args])
}
