// A command started in a process group of its own (`detached: true`), run to completion: its
// output collected, and on timeout the whole group killed, so what it started in the
// foreground (a shell's children, nsenter's command) ends with it.
import type { ChildProcess } from 'node:child_process'

export interface GroupResult {
  /** The exit code; -1 when the process was ended by a signal (see signal) or could not start. */
  code: number
  stdout: string
  stderr: string
  signal: NodeJS.Signals | null
  /** True when the timeout ended it. */
  timedOut: boolean
}

/** Waits for `child`; `input` (or nothing) goes to its stdin when it has one. Never rejects. */
export function collectGroup(child: ChildProcess, timeoutMs: number, input?: string | Buffer, name = 'the command', encoding: BufferEncoding = 'utf8'): Promise<GroupResult> {
  return new Promise((resolve) => {
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout?.on('data', (b: Buffer) => out.push(b))
    child.stderr?.on('data', (b: Buffer) => err.push(b))
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        child.kill('SIGKILL')
      }
    }, timeoutMs)
    let settled = false
    const finish = (code: number, signal: NodeJS.Signals | null, extra = ''): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve({
        code,
        signal,
        timedOut,
        stdout: Buffer.concat(out).toString(encoding),
        stderr: Buffer.concat(err).toString(encoding) + extra + (timedOut ? `\n[killed after ${timeoutMs} ms]` : ''),
      })
    }
    child.on('error', (e) => finish(-1, null, `[${name} did not start: ${e.message}]`))
    child.on('close', (code, signal) => finish(code ?? -1, signal))
    if (child.stdin) {
      child.stdin.on('error', () => {})
      child.stdin.end(input ?? '')
    }
  })
}
