// A mount test's teardown holds for a daemon that cannot take part in it: one stopped
// (SIGSTOP) with a reader waiting in its mount, and a tool of its own still running. The
// teardown unmounts within its deadline, aborts the connection that would not let go, and
// kills the daemon's process group: nothing is left in /proc/mounts, no process of that
// group is left, and the reader gets its answer (the connection is gone).
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { groupMembers, liveProcesses } from '../../scripts/support/process-group.js'
import { DEAD_MOUNT, run, startDaemon, tempDir, UNDO_DEADLINE_MS, unmountAll, useMounts, waitFor } from '../support/mount.js'

useMounts()

const DAEMON = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/daemon-with-tool.ts')

const inProcMounts = async (dir: string): Promise<string[]> => (await readFile('/proc/mounts', 'utf8')).split('\n').filter((l) => l.split(' ')[1] === dir)

it('a stopped daemon with a reader waiting in its mount is unmounted, aborted and its group killed within the deadline', async () => {
  const dir = path.join(await tempDir(), 'mnt')
  const pid = await startDaemon(DAEMON, dir)
  expect((await run('cat', [path.join(dir, 'hello.txt')])).stdout).toBe('hello\n')
  // The daemon leads a group of its own, its tool in it.
  expect((await groupMembers(pid)).map((p) => p.cmdline)).toContainEqual('sleep 3600')

  process.kill(pid, 'SIGSTOP')
  const waiting = path.join(dir, 'waiting.txt')
  const reader = run('cat', [waiting], { timeoutMs: 5 * UNDO_DEADLINE_MS })
  // The reader's open is in the kernel, waiting on the stopped daemon.
  expect(await waitFor(async () => (await liveProcesses()).some((p) => p.cmdline === `cat ${waiting}` && p.state !== 'R'), 5000)).toBe(true)

  const started = Date.now()
  await unmountAll()
  const took = Date.now() - started

  expect(took).toBeLessThan(UNDO_DEADLINE_MS)
  expect(await inProcMounts(dir)).toEqual([])
  expect(await groupMembers(pid)).toEqual([])
  const r = await reader
  expect(r.code).not.toBe(0)
  expect(r.stderr).toMatch(DEAD_MOUNT)
}, 6 * UNDO_DEADLINE_MS)
