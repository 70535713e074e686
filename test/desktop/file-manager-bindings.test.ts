// Each file manager's transferfs extension (desktop/file-managers/<manager>/) loads under its
// real binding module (gi.require_version('Nautilus', '4.0'), 'Nemo' 3.0, 'Caja' 2.0), defines
// one provider class of the three providers with the "Transfer" column, leaves a local file
// alone, and offers "Send with transferfs…" on it once the send dialog is installed; entries
// carrying the mount's attributes get their emblem, column words and menu through the
// asynchronous path (read off the UI thread, applied on the main loop), and a fetch under way is
// asked again; the menu's commands run as GIO subprocesses, their failures said. A binding
// that is not installed skips its test, saying which package brings it.
// A folder of 500 entries listed as the file managers list one (one file at a time, the next
// once the last is answered) costs one enumeration of the folder, read a chunk at a time, not a
// read per entry, each entry still showing its own state; an entry changed and asked about again,
// one added since, one the menu's command ran on are each read anew, alone; the folder listed
// anew with new file objects is enumerated anew; a mount of an earlier version, without the one
// attribute that carries the others, is read entry by entry; a bug in what is shown fails each
// entry, said, and the listing goes on; and an entry whose reads the mount never
// answers is still answered ("failed", said on stderr) within the extension's time, so the
// listing goes on (check_listing.py).
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { run } from '../support/mount.js'

const CHECK = path.join(path.dirname(fileURLToPath(import.meta.url)), 'file-managers/check_binding.py')
const LISTING = path.join(path.dirname(fileURLToPath(import.meta.url)), 'file-managers/check_listing.py')
/** Entries of the listed folder, and the most answers that may wait for the mount: one a chunk of the enumeration (100 entries), and one more at each end. */
const ENTRIES = 500
const MOST_WAITS = ENTRIES / 100 + 2

interface Listing { waited: number; enumerations: number; chunks: number; alone: number }
interface ListingSeen {
  first: Listing
  firstWrong: Record<string, string>
  everyAskCompletedOnce: boolean
  completedInFirst: number
  changed: Listing & { column: string }
  added: Listing & { column: string }
  afterCommand: Listing & { column: string; invalidated: number }
  relisted: Listing
  relistedWrong: Record<string, string>
  buggy: Listing & { results: Record<string, number> }
  older: Listing & { wrong: Record<string, string>; menu: string[] }
  stuck: Listing & { result: string; seconds: number }
}

const BINDINGS = [
  { flavor: 'nautilus', module: 'Nautilus', version: '4.0', pkg: 'python3-nautilus (nautilus-python 4, Nautilus 43+)' },
  { flavor: 'nemo', module: 'Nemo', version: '3.0', pkg: 'nemo-python' },
  { flavor: 'caja', module: 'Caja', version: '2.0', pkg: 'python3-caja' },
] as const

/** The first python3 that has PyGObject and the binding's typelib (the system's, where a pyenv one comes first on PATH); null when none. */
async function pythonWith(module: string, version: string): Promise<string | null> {
  for (const python of ['/usr/bin/python3', 'python3']) {
    const r = await run(python, ['-c', `import gi; gi.require_version(${JSON.stringify(module)}, ${JSON.stringify(version)}); from gi.repository import ${module}`], { timeoutMs: 30_000 }).catch(() => null)
    if (r?.code === 0) return python
  }
  return null
}

const found = await Promise.all(BINDINGS.map(async (b) => ({ ...b, python: await pythonWith(b.module, b.version) })))

describe('the file-manager extensions under their bindings', () => {
  for (const b of found) {
    it.skipIf(b.python === null)(`${b.module} ${b.version} loads the extension${b.python === null ? ` (skipped: ${b.pkg} is not installed)` : ''}`, async () => {
      const r = await run(b.python!, [CHECK, b.flavor], { timeoutMs: 60_000 })
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr, 'no traceback or warning').toBe('')
      const seen = JSON.parse(r.stdout) as Record<string, unknown>
      expect(seen).toEqual({
        classes: ['TransferfsExtension'],
        gtype: `TransferfsExtension_${b.flavor}`,
        providers: ['InfoProvider', 'ColumnProvider', 'MenuProvider'],
        columns: [['Transferfs::state', 'transferfs_state', 'Transfer']],
        localInfo: { result: 'complete', emblems: [], attributes: {} },
        localMenu: [],
        localMenuWithDialog: ['Send with transferfs…'],
        asynchronous: {
          results: ['in_progress', 'in_progress', 'in_progress'],
          completions: ['complete', 'complete', 'complete'],
          emblems: { 'inbox/T': ['emblem-web'], 'inbox/T/a.bin': ['emblem-synchronizing'], 'outbox/x.bin': ['emblem-important'] },
          column: { 'inbox/T': 'Only on the service', 'inbox/T/a.bin': 'Keeping: fetching 40%', 'outbox/x.bin': 'Failed: the address is not valid' },
          // A fetch under way is asked again; the others stand until something changes them.
          askedAgain: { 'inbox/T': false, 'inbox/T/a.bin': true, 'outbox/x.bin': false },
          menu: { 'inbox/T': ['Keep on this computer', 'Show details'], 'inbox/T/a.bin': ['Copy link', 'Open in browser', 'Show details'], 'outbox/x.bin': [] },
          // Its address, read when "Copy link" is chosen.
          link: [['copy-link', 'https://example.com/t/abc']],
        },
        // The menu's commands, run by GIO and answered on the main loop: a failure's reason, a
        // program that cannot be started, one stopped past its time.
        commands: [
          [3, 'No space left on device: needs 12 MiB more'],
          [null, expect.stringMatching(/^Failed to execute child process .*No such file or directory/)],
          [null, 'no answer within 1 s'],
        ],
      })
    })
    it.skipIf(b.python === null)(`${b.module} ${b.version}: a folder's entries are read in one enumeration, not one by one${b.python === null ? ` (skipped: ${b.pkg} is not installed)` : ''}`, async () => {
      const r = await run(b.python!, [LISTING, b.flavor, String(ENTRIES)], { timeoutMs: 60_000 })
      expect(r.code, r.stderr).toBe(0)
      // Said: each entry of the listing made with a bug in what is shown (answered at once from
      // the enumeration: "showing"; through its completion: "reading"), and the entry the mount
      // never answered. No traceback or warning.
      const said = r.stderr.trimEnd().split('\n')
      expect(said.pop()).toMatch(/^transferfs: reading \/\S+\/stuck\/x\.bin: no answer within 0.2 s$/)
      expect(said.filter((l) => !/^transferfs: (showing|reading) \/.+: a bug$/.test(l))).toEqual([])
      expect(said).toHaveLength(ENTRIES + 1)
      expect(said.filter((l) => l.startsWith('transferfs: showing ')).length).toBeGreaterThan(ENTRIES / 2)
      const seen = JSON.parse(r.stdout) as ListingSeen
      expect(seen.first).toEqual({ enumerations: 1, alone: 0, chunks: expect.any(Number), waited: expect.any(Number) })
      expect(seen.first.chunks).toBeLessThanOrEqual(MOST_WAITS)
      expect(seen.first.waited).toBeLessThanOrEqual(MOST_WAITS)
      expect(seen.firstWrong, 'every entry shows its own state').toEqual({})
      expect(seen.everyAskCompletedOnce).toBe(true)
      expect(seen.completedInFirst).toBe(seen.first.waited)
      const alone = { waited: 1, enumerations: 0, chunks: 0, alone: 1 }
      expect(seen.changed).toEqual({ ...alone, column: 'Keeping: fetching 40%' })
      expect(seen.added).toEqual({ ...alone, column: 'On this computer' })
      expect(seen.afterCommand).toEqual({ ...alone, invalidated: 1, column: 'Kept on this computer' })
      expect(seen.relisted).toEqual({ enumerations: 1, alone: 0, chunks: expect.any(Number), waited: expect.any(Number) })
      expect(seen.relisted.waited).toBeLessThanOrEqual(MOST_WAITS)
      expect(seen.relistedWrong).toEqual({})
      // A bug in what is shown: every entry (the 500 and one added) answered failed, the listing to its end.
      expect(seen.buggy).toMatchObject({ enumerations: 1, alone: 0, results: { failed: ENTRIES + 1 } })
      // A mount of an earlier version: its folder's one enumeration, at the first entry, finds no
      // shown attribute; that entry is read alone for it, then for each attribute, and every
      // other entry for each at once. Right all the same, its pin included.
      expect(seen.older).toEqual({ waited: 5, enumerations: 1, chunks: 2, alone: 6, wrong: {}, menu: ['Stop keeping', 'Show details'] })
      expect(seen.stuck).toMatchObject({ waited: 1, result: 'failed' })
      expect(seen.stuck.seconds).toBeLessThan(5)
    })
  }
})
