// run() (test/support/mount.ts) has a deadline that holds for everything its command
// started: at the timeout the whole process group goes, so a shell's child that keeps the
// output pipe open can neither keep run() waiting nor outlive it.
import { readdir, readFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { run, waitFor } from '../support/mount.js'

/** The pids whose command line is exactly `cmdline` (NUL-separated as in /proc). */
async function processesRunning(cmdline: string): Promise<number[]> {
  const found: number[] = []
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue
    if ((await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '')) === cmdline) found.push(Number(name))
  }
  return found
}

it('at its timeout, run() ends the command and what the command started, and says so', async () => {
  // A duration no other process on the machine sleeps for: the child is found by it.
  const seconds = String(600 + (process.pid % 1000) / 1000)
  const started = Date.now()
  const r = await run('sh', ['-c', `sleep ${seconds} & wait`], { timeoutMs: 1000 })
  expect(Date.now() - started).toBeLessThan(5000)
  expect(r.code).toBe(-1)
  expect(r.stderr).toContain('killed after 1000 ms')
  expect(await waitFor(async () => (await processesRunning(`sleep\0${seconds}\0`)).length === 0, 5000)).toBe(true)
}, 30_000)
