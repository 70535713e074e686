// A mount test's teardown holds for a daemon that cannot take part in it: one stopped
// (SIGSTOP) with a reader waiting in its mount, and a tool of its own still running; and a
// test's own core, mounted by a daemon of its own process group (never in the test's
// process, whose stop would stop the test), stopped likewise. The teardown unmounts within
// its deadline, aborts the connection that would not let go, and kills the daemon's process
// group: nothing is left in /proc/mounts, no process of that group is left, and the reader
// gets its answer (the connection is gone).
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { groupMembers, liveProcesses } from '../../scripts/support/process-group.js'
import { DEAD_MOUNT, mountCore, run, startDaemon, tempDir, UNDO_DEADLINE_MS, unmountAll, useMounts, waitFor } from '../support/mount.js'
import { memory } from '../fuse/fixtures/cores.js'

useMounts()

const DAEMON = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/daemon-with-tool.ts')

const inProcMounts = async (dir: string): Promise<string[]> => (await readFile('/proc/mounts', 'utf8')).split('\n').filter((l) => l.split(' ')[1] === dir)

/** Stops the daemon pid with a reader waiting in its mount, then undoes every mount: within the deadline, nothing of it may be left. */
async function stopAndUndo(pid: number, dir: string): Promise<void> {
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
}

it('a stopped daemon with a reader waiting in its mount is unmounted, aborted and its group killed within the deadline', async () => {
  const dir = path.join(await tempDir(), 'mnt')
  const pid = await startDaemon(DAEMON, dir)
  expect((await run('cat', [path.join(dir, 'hello.txt')])).stdout).toBe('hello\n')
  // The daemon leads a group of its own, its tool in it.
  expect((await groupMembers(pid)).map((p) => p.cmdline)).toContainEqual('sleep 3600')
  await stopAndUndo(pid, dir)
}, 6 * UNDO_DEADLINE_MS)

it('a test\'s own core is served by a daemon leading a group of its own, and undone likewise when stopped', async () => {
  const m = await mountCore(memory({ files: [['/hello.txt', 'hello\n'], ['/waiting.txt', 'never served while stopped\n']] }))
  expect((await run('cat', [path.join(m.dir, 'hello.txt')])).stdout).toBe('hello\n')
  expect(m.pid).not.toBe(process.pid)
  expect((await groupMembers(m.pid)).map((p) => p.pid)).toContain(m.pid)
  await stopAndUndo(m.pid, m.dir)
}, 6 * UNDO_DEADLINE_MS)
