// A system command (fusermount, mount_nfs, umount, diskutil) run to its end or to a deadline,
// never through a shell, never throwing: the callers are teardown and mount paths that must
// answer within their own deadlines whatever the command does, and that report why it failed
// in the command's own words.
import { execFile } from 'node:child_process'
import path from 'node:path'

export interface CommandResult {
  ok: boolean
  stdout: string
  /** Why it failed: its own words, or that it was not found or did not finish in time. */
  stderr: string
}

/** Output kept per stream: a mount listing is the largest a caller reads. */
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024

/**
 * Runs `file` with `args` until it ends or `timeoutMs` passes (then it is killed with SIGKILL:
 * a command stuck on a mount that does not answer ignores gentler signals). `notFound` is what
 * to say when there is no such program.
 */
export function runBounded(file: string, args: readonly string[], timeoutMs: number, notFound?: string): Promise<CommandResult> {
  const name = path.basename(file)
  return new Promise((resolve) => {
    execFile(file, args, { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: MAX_OUTPUT_BYTES }, (err, stdout, stderr) => {
      if (!err) return resolve({ ok: true, stdout, stderr })
      const e = err as NodeJS.ErrnoException & { killed?: boolean }
      const why = e.code === 'ENOENT' ? notFound ?? `${name} was not found`
        : e.killed ? `${name} did not finish within ${timeoutMs / 1000} s`
        : String(stderr || stdout || err.message).trim()
      resolve({ ok: false, stdout, stderr: why })
    })
  })
}
