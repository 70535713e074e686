// The file-manager extensions' logic (desktop/file-managers/transferfs_fm/core.py) is Python, as
// Nautilus, Nemo and Caja load it: its unit tests (file-managers/test_core.py) run under the
// python3 on PATH, the way CI has it. Each state's emblem and words, each entry's menu, the
// commands behind the menu and what a failed one (a pin over the cache's budget) says; each
// file manager's entry file, the same few lines naming it (test_entries.py); and the send
// dialog's logic (test_sending.py: which way a send goes, the outbox entry).
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { run } from '../support/mount.js'

const TESTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'file-managers')

describe('the file-manager extensions\' logic', () => {
  it('passes its Python unit tests', async () => {
    const r = await run('python3', ['-m', 'unittest', 'discover', '-v', '-s', TESTS, '-p', 'test_*.py'], { timeoutMs: 60_000 })
    expect(r.code, r.stderr).toBe(0)
    // unittest finding nothing also ends 0: the count says the tests ran.
    expect(Number(/Ran (\d+) tests?/.exec(r.stderr)?.[1] ?? 0), r.stderr).toBeGreaterThanOrEqual(40)
    expect(r.stderr).toMatch(/\nOK\b/)
  })
})
