// The chaos run (scripts/chaos/run.ts) for one minute at a 20% fault rate, as CI runs it:
// random faults on every route, three readers, copies into outbox/ and the mount killed
// and started again at random moments; it fails on a wrong byte, an entry that did not
// arrive exactly once, or a read that outlived its deadline.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { run, TS_REGISTER } from '../support/mount.js'

const RUNNER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scripts/chaos/run.ts')

describe('chaos', () => {
  it('one minute at a 20% fault rate: every byte right, every entry once, no read past its deadline', async () => {
    const r = await run(process.execPath, ['--import', TS_REGISTER, RUNNER, '--minutes', '1', '--fault-rate', '0.2'], { timeoutMs: 360_000 })
    console.log(r.stdout.split('\n').slice(-45).join('\n'))
    expect(r.stderr).not.toMatch(/^chaos: (?!passed)/m)
    expect(r.stdout).toMatch(/^chaos: passed$/m)
    expect(r.code).toBe(0)
  }, 400_000)
})
