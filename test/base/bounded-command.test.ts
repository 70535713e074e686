// runBounded, with real programs: what it says when a command fails, is missing or overruns its
// deadline, and that an overrunning one is killed (its deadline holds even when it ignores SIGTERM).
import { describe, expect, it } from 'vitest'
import { runBounded } from '../../src/base/bounded-command.js'

describe('runBounded', () => {
  it('gives the output of a command that succeeds', async () => {
    expect(await runBounded('/bin/sh', ['-c', 'echo out; echo err >&2'], 10_000)).toEqual({ ok: true, stdout: 'out\n', stderr: 'err\n' })
  })

  it('says why a command failed in its own words: stderr, else stdout', async () => {
    expect((await runBounded('/bin/sh', ['-c', 'echo said-on-stdout; echo said-on-stderr >&2; exit 3'], 10_000)).stderr).toBe('said-on-stderr')
    expect((await runBounded('/bin/sh', ['-c', 'echo only-stdout; exit 3'], 10_000))).toEqual({ ok: false, stdout: 'only-stdout\n', stderr: 'only-stdout' })
  })

  it('names a missing program, in the caller\'s words where given', async () => {
    expect((await runBounded('/nonexistent/umount', [], 10_000)).stderr).toBe('umount was not found')
    expect((await runBounded('/nonexistent/umount', [], 10_000, 'umount is not installed')).stderr).toBe('umount is not installed')
  })

  it('kills a command past its deadline, one that ignores SIGTERM too, and says so', async () => {
    const started = Date.now()
    const r = await runBounded('/bin/sh', ['-c', 'trap "" TERM; sleep 30'], 300)
    expect(r).toMatchObject({ ok: false, stderr: 'sh did not finish within 0.3 s' })
    // Well short of the command's own 30 s: it was killed, not waited for.
    expect(Date.now() - started).toBeLessThan(20_000)
  })
})
