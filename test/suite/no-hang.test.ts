// No test can hold the suite: a test whose mount never answers a read (the fixture
// fixtures/never-answers.test.ts, run here in a vitest run of its own with the variable that
// enables it) fails by its own timeout, naming itself; a temporary folder holding a mount whose
// listing never answers is removed without walking into it; the run then ends by itself, and
// neither the mounts nor the reader stuck in one, nor any process of that run, is left.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { expect, it } from 'vitest'
import { mountsUnder } from '../support/fuse-cleanup.js'
import { REPO, tempDir, useMounts, waitFor } from '../support/mount.js'
import { collectGroup, liveProcesses } from '../../scripts/support/process-group.js'

useMounts()

const FIXTURE = 'test/suite/fixtures/never-answers.test.ts'
const FIXTURE_TEST = 'cat of a file waits for an answer that never comes'
/** ms: vitest's start, the fixture's 5 s timeout, then a teardown that must abort what does not unmount. */
const WITHIN_MS = 90_000

/** The processes whose command line names `needle`, or that are in process group `pgid`. */
async function processesOf(needle: string, pgid: number): Promise<string[]> {
  return (await liveProcesses()).filter((p) => p.pid !== process.pid && (p.cmdline.includes(needle) || p.pgid === pgid)).map((p) => `${p.pid} ${p.cmdline}`)
}

it('a test whose mount never answers a read fails within its timeout, by name, and leaves no mount or process', async () => {
  const tmp = await tempDir('transferfs-test-hang-')
  // The variables of this run's own worker stay out: the nested run is a run of its own.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST')))
  const started = Date.now()
  const child = spawn(process.execPath, [path.join(REPO, 'node_modules/vitest/vitest.mjs'), 'run', FIXTURE, '--project', 'auto', '--reporter', 'verbose'], {
    cwd: REPO,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...env, TRANSFERFS_TEST_NEVER_ANSWER: '1', TMPDIR: tmp, NO_COLOR: '1', FORCE_COLOR: '0', CI: 'true' },
  })
  const r = await collectGroup(child, 3 * WITHIN_MS, undefined, 'the nested vitest run')
  const took = Date.now() - started
  const output = `${r.stdout}\n${r.stderr}`

  expect(r.timedOut, output).toBe(false)
  expect(took, output).toBeLessThan(WITHIN_MS)
  expect(r.code, output).toBe(1)
  expect(output).toContain(FIXTURE_TEST)
  expect(output).toMatch(/Test timed out in 5000ms/)
  expect(await mountsUnder(tmp), output).toEqual([])
  // The auto_unmount helpers, and a daemon that ends itself once its mount is gone, take a moment.
  await waitFor(async () => (await processesOf(tmp, child.pid!)).length === 0, 10_000)
  expect(await processesOf(tmp, child.pid!), output).toEqual([])
}, 4 * WITHIN_MS)
