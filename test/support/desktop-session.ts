// A desktop application under test, in a session of its own: a display of its own (x-display.ts)
// and `dbus-run-session` with accessibility on (test/desktop/fixtures/desktop-session.sh), in a
// process group of its own that ends by itself after `lifeMs` whatever happens to the test. Clients (AT-SPI drivers,
// `import` for screenshots) run inside it through run(). stop() ends all of it within a
// deadline: the group asked to end, then killed, then whatever the session bus started that
// left the group (found by a mark in its environment) killed too; an exit hook does the same
// without waiting.
import { spawn } from 'node:child_process'
import { openSync, closeSync, readFileSync, readdirSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { collectGroup, killGroup, killGroupSync } from '../../scripts/support/process-group.js'
import { REPO, tempDir, waitFor, type RunResult } from './mount.js'
import { onXDisplay } from './x-display.js'

const SESSION_SCRIPT = path.join(REPO, 'test/desktop/fixtures/desktop-session.sh')
/** ms: for the session to be up (X server, session bus, accessibility on). */
const START_TIMEOUT_MS = 30_000
/** ms: for the session to end once asked, before it is killed. */
const END_MS = 5000

export interface DesktopSession {
  /** What reaches the session: DISPLAY, XAUTHORITY, DBUS_SESSION_BUS_ADDRESS, with the environment given. */
  env: NodeJS.ProcessEnv
  /** The application's (and the session's) stdout and stderr, as written so far. */
  log(): Promise<string>
  /** A command run inside the session, to completion or `timeoutMs` (then its group is killed). */
  run(cmd: string, args: string[], timeoutMs?: number): Promise<RunResult>
  /** The whole screen as a PNG (ImageMagick's `import -window root`). */
  screenshot(file: string): Promise<void>
  /** Ends the session and all it started; resolves once nothing of it is left (or, past the deadline, after killing it). */
  stop(): Promise<void>
}

const live = new Map<string, number>()
process.once('exit', () => {
  for (const [mark, pgid] of live) {
    killGroupSync(pgid)
    for (const pid of marked(mark)) signal(pid)
  }
})

function signal(pid: number, sig: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, sig)
  } catch {}
}

/** The processes whose environment carries the session's mark (what the session bus started, in a group of their own). */
function marked(mark: string): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(`TRANSFERFS_DESKTOP_SESSION=${mark}`)) out.push(Number(name))
    } catch {}
  }
  return out
}

/** `cmd` run with exactly `env`, in a process group of its own, to completion or `timeoutMs` (then the group is killed). */
export async function runWith(env: NodeJS.ProcessEnv, cmd: string, args: string[], timeoutMs = 60_000): Promise<RunResult> {
  const c = spawn(cmd, args, { detached: true, stdio: ['pipe', 'pipe', 'pipe'], env })
  const r = await collectGroup(c, timeoutMs, undefined, cmd)
  return { code: r.code, stdout: r.stdout, stderr: r.stderr }
}

/**
 * Starts `app` (argv) in a new session on a `width`x`height` screen with `env` added, and
 * resolves once the session is up (the application itself may still be starting).
 */
export async function startDesktopSession(app: string[], opts: { env?: NodeJS.ProcessEnv; width?: number; height?: number; lifeMs?: number } = {}): Promise<DesktopSession> {
  const dir = await tempDir('transferfs-test-desktop-')
  const envFile = path.join(dir, 'session.env')
  const logFile = path.join(dir, 'session.log')
  const mark = path.basename(dir)
  const lifeS = Math.ceil((opts.lifeMs ?? 300_000) / 1000)
  const [launcher, onDisplay] = onXDisplay(['dbus-run-session', '--', 'bash', SESSION_SCRIPT, envFile, ...app], `${opts.width ?? 1280}x${opts.height ?? 800}x24`)
  const base: NodeJS.ProcessEnv = { ...process.env, ...opts.env, TRANSFERFS_DESKTOP_SESSION: mark }
  const out = openSync(logFile, 'a')
  // timeout(1) ends the whole group after lifeS, then kills it 5 s later: the session never outlives that.
  const child = spawn('timeout', ['-k', '5', String(lifeS), launcher, ...onDisplay], {
    detached: true,
    stdio: ['ignore', out, out],
    env: base,
  })
  closeSync(out)
  child.on('error', () => {})
  child.unref()
  const pgid = child.pid!
  live.set(mark, pgid)
  const stop = async (): Promise<void> => {
    try {
      process.kill(-pgid, 'SIGTERM')
    } catch {}
    const ended = await waitFor(() => {
      try {
        process.kill(-pgid, 0)
        return false
      } catch {
        return true
      }
    }, END_MS, 100)
    if (!ended) await killGroup(pgid, END_MS)
    for (const pid of marked(mark)) signal(pid)
    live.delete(mark)
  }
  const up = await waitFor(async () => (await readFile(envFile, 'utf8').catch(() => '')).includes('DBUS_SESSION_BUS_ADDRESS='), START_TIMEOUT_MS, 100)
  if (!up) {
    await stop()
    throw new Error(`the desktop session did not start within ${START_TIMEOUT_MS} ms: ${await readFile(logFile, 'utf8').catch(() => '')}`)
  }
  const sessionEnv: NodeJS.ProcessEnv = { ...base }
  for (const line of (await readFile(envFile, 'utf8')).split('\n')) {
    const eq = line.indexOf('=')
    if (eq > 0) sessionEnv[line.slice(0, eq)] = line.slice(eq + 1)
  }
  const run = (cmd: string, args: string[], timeoutMs = 60_000): Promise<RunResult> => runWith(sessionEnv, cmd, args, timeoutMs)
  return {
    env: sessionEnv,
    log: () => readFile(logFile, 'utf8').catch(() => ''),
    run,
    screenshot: async (file: string) => {
      const r = await run('import', ['-window', 'root', file], 30_000)
      if (r.code !== 0) throw new Error(`import -window root: ${r.stderr}`)
    },
    stop,
  }
}
