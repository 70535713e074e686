// A command started in a process group of its own (`detached: true`), run to completion: its
// output collected, and on timeout the whole group killed, so what it started in the
// foreground (a shell's children, nsenter's command) ends with it. And what /proc tells of
// processes and their groups, to find what a group left behind and end it.
import type { ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'

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

/** What /proc says of a process: its state letter, its process group and its command line (NULs as spaces). */
export interface ProcessInfo {
  pid: number
  state: string
  pgid: number
  cmdline: string
  /** The command line as /proc has it, NUL-separated. */
  rawCmdline: string
}

function parseStat(pid: number, stat: string, cmdline: string): ProcessInfo | undefined {
  // The command name may hold spaces and parentheses: the fields start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  if (!fields[0] || fields[0] === 'Z' || fields[0] === 'X') return undefined
  return { pid, state: fields[0], pgid: Number(fields[2]), cmdline: cmdline.replaceAll('\0', ' ').trim(), rawCmdline: cmdline }
}

/** Every live process (zombies, ended but for their parent's wait, left out). */
export async function liveProcesses(): Promise<ProcessInfo[]> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name))
  const found = await Promise.all(pids.map(async (name) => {
    const [stat, cmdline] = await Promise.all([readFile(`/proc/${name}/stat`, 'utf8').catch(() => ''), readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '')])
    return stat ? parseStat(Number(name), stat, cmdline) : undefined
  }))
  return found.filter((p): p is ProcessInfo => p !== undefined)
}

export function liveProcessesSync(): ProcessInfo[] {
  const out: ProcessInfo[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const info = parseStat(Number(name), readFileSync(`/proc/${name}/stat`, 'utf8'), readFileSync(`/proc/${name}/cmdline`, 'utf8'))
      if (info) out.push(info)
    } catch {
      // Ended meanwhile.
    }
  }
  return out
}

/** The live processes of process group pgid. */
export async function groupMembers(pgid: number): Promise<ProcessInfo[]> {
  return (await liveProcesses()).filter((p) => p.pgid === pgid)
}

/** The process's state letter (R, S, D, T for stopped, ...), or undefined once it has ended. */
export async function processState(pid: number): Promise<string | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')
  return stat ? parseStat(pid, stat, '')?.state : undefined
}

function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}

function sendToGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig)
  } catch {
    // No such group any more.
  }
}

/**
 * SIGKILL to the whole group (a stopped process dies of it too), then a wait, bounded, until
 * none of it is left; returns what is left (empty: the group is gone).
 */
export async function killGroup(pgid: number, timeoutMs: number): Promise<ProcessInfo[]> {
  const end = Date.now() + timeoutMs
  for (;;) {
    // No process has that group any more (not even a zombie): nothing to look for.
    if (!groupExists(pgid)) return []
    const left = await groupMembers(pgid)
    if (left.length === 0 || Date.now() > end) return left
    sendToGroup(pgid, 'SIGKILL')
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** At exit, where nothing can wait: SIGKILL to the group, not waited for. */
export function killGroupSync(pgid: number): void {
  sendToGroup(pgid, 'SIGKILL')
}

/** Whether a command line (NUL-separated, as in /proc) names dir or something below it (an argument, or a word of a `sh -c` script). */
export function namesDir(cmdline: string, dir: string): boolean {
  // dir followed by the end, a slash or anything that cannot continue a file name: never a sibling such as dir-2.
  const re = new RegExp(`${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w.-])`)
  return cmdline.split('\0').some((arg) => re.test(arg))
}
