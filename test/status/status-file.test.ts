// status.json as `transferfs status` reads it: a mount an upgrade left running still writes the
// earlier shape (the pins' section as `keep`, `keptBytes`, a pin all on disk as `kept`), read
// as this version's (`pins`, `pinnedBytes`, `pinned`), while this version's passes untouched.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { renderStatusText } from '../../src/status/mount-status.js'
import { readStatusFile, STATUS_JSON_FILE } from '../../src/status/status-file.js'

const pinEntry = (name: string, state: string) => ({ name, state, files: 2, bytesCached: 10, bytesTotal: 10, rate: null, eta: null, note: null })
const written = { at: 1_000, entries: [], service: { state: 'online', since: null, reason: null, retryingReads: 0 } }
const who = { pid: 4242, running: true, intervalMs: 1000 }

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tfs-status-file-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function read(content: unknown): Promise<unknown> {
  await writeFile(path.join(dir, STATUS_JSON_FILE), JSON.stringify(content))
  return readStatusFile(dir)
}

describe('readStatusFile', () => {
  it('reads an earlier version\'s pins section (keep, keptBytes, kept) as this version\'s (pins, pinnedBytes, pinned)', async () => {
    const s = await read({
      ...written,
      keep: {
        entries: [pinEntry('inbox/Photos', 'kept'), pinEntry('inbox/Report', 'fetching')],
        cache: { keptBytes: 2048, otherBytes: 512, budgetBytes: 4096 },
        notices: ['pins.json: 1 of 2 entries are not pins'],
      },
      ...who,
    })
    expect(s).toEqual({
      ...written,
      pins: {
        entries: [pinEntry('inbox/Photos', 'pinned'), pinEntry('inbox/Report', 'fetching')],
        cache: { pinnedBytes: 2048, otherBytes: 512, budgetBytes: 4096 },
        notices: ['pins.json: 1 of 2 entries are not pins'],
      },
      ...who,
    })
    // The section keeps its place among the others, as this version writes it.
    expect(Object.keys(s as object)).toEqual(['at', 'entries', 'service', 'pins', 'pid', 'running', 'intervalMs'])
    // And renders as this version's does.
    const text = renderStatusText(s as Parameters<typeof renderStatusText>[0])
    expect(text).toContain('cache: 2 KiB pinned, 512 B other, budget 4 KiB')
    expect(text).toMatch(/^pinned {3}inbox\/Photos {2}10 B \/ 10 B, 2 files$/m)
    // This version's shape, and a file without pins, pass as they are.
    const now = { ...written, pins: { entries: [pinEntry('search/q', 'pinned')], cache: { pinnedBytes: 1, otherBytes: 2, budgetBytes: 3 } }, ...who }
    expect(await read(now)).toEqual(now)
    expect(await read({ ...written, ...who })).toEqual({ ...written, ...who })
  })

  it('leaves an earlier section it cannot make sense of as it found it, without throwing', async () => {
    expect(await read({ ...written, keep: 'garbage', ...who })).toEqual({ ...written, pins: 'garbage', ...who })
    expect(await read({ ...written, keep: { entries: [null, 3], cache: null }, ...who })).toEqual({ ...written, pins: { entries: [null, 3], cache: null }, ...who })
  })
})
