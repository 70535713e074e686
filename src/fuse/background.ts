// `transferfs mount DIR` without -f: start a detached child that mounts (in the
// foreground, from its own point of view) and return once it reports ready over the
// IPC channel, or with its error. The child's output goes to a log file.
import { spawn } from 'node:child_process'
import { open } from 'node:fs/promises'

/** Set in the child's environment: it is a daemon and has a parent waiting on IPC. */
export const DAEMON_ENV = 'TRANSFERFS_DAEMON'

type DaemonMessage = { type: 'ready' } | { type: 'failed'; message: string }

export interface BackgroundOptions {
  /** Arguments of the child node process after execArgv, e.g. [cliPath, 'mount', dir, '--foreground']. */
  args: string[]
  /** Node options of the child (loaders and the like); default: this process's. */
  execArgv?: string[]
  env?: NodeJS.ProcessEnv
  /** Where the child's stdout and stderr go; default: nowhere. */
  logFile?: string
  /** ms: how long to wait for the child's report. */
  readyTimeoutMs?: number
}

/** Starts the daemon; resolves with its pid once it reports ready, rejects with its error otherwise. */
export async function startBackgroundMount(opts: BackgroundOptions): Promise<{ pid: number }> {
  const out = opts.logFile ? await open(opts.logFile, 'a', 0o600) : undefined
  try {
    const child = spawn(process.execPath, [...(opts.execArgv ?? process.execArgv), ...opts.args], {
      detached: true,
      stdio: ['ignore', out?.fd ?? 'ignore', out?.fd ?? 'ignore', 'ipc'],
      env: { ...(opts.env ?? process.env), [DAEMON_ENV]: '1' },
    })
    const timeoutMs = opts.readyTimeoutMs ?? 60_000
    const pid = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGTERM')
        reject(new Error(`the mount did not report ready within ${timeoutMs} ms`))
      }, timeoutMs)
      const done = (fn: () => void) => {
        clearTimeout(timer)
        child.removeAllListeners('message')
        child.removeAllListeners('exit')
        child.removeAllListeners('error')
        fn()
      }
      child.on('message', (m: DaemonMessage) => {
        if (m?.type === 'ready') done(() => resolve(child.pid!))
        else if (m?.type === 'failed') done(() => reject(new Error(m.message)))
      })
      child.on('error', (err) => done(() => reject(err)))
      child.on('exit', (code, signal) =>
        done(() => reject(new Error(`the mount process ended (${signal ?? 'exit code ' + code}) before it was ready${opts.logFile ? '; see ' + opts.logFile : ''}`))),
      )
    })
    if (child.connected) child.disconnect()
    child.unref()
    return { pid }
  } finally {
    await out?.close()
  }
}

function parentWaiting(): boolean {
  return process.env[DAEMON_ENV] === '1' && typeof process.send === 'function' && process.connected
}

function tellParent(m: DaemonMessage): Promise<void> {
  if (!parentWaiting()) return Promise.resolve()
  return new Promise((resolve) => {
    process.send!(m, () => {
      // Disconnecting lets the parent return while this process lives on.
      if (process.connected) process.disconnect()
      resolve()
    })
  })
}

/** In the daemon: tell the waiting parent the mount is ready, then let it go. */
export function reportReady(): Promise<void> {
  return tellParent({ type: 'ready' })
}

/** In the daemon: tell the waiting parent why the mount failed (resolves once sent: exit after it). */
export function reportFailure(err: unknown): Promise<void> {
  return tellParent({ type: 'failed', message: err instanceof Error ? err.message : String(err) })
}
