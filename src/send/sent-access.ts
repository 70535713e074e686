// Who besides the owner could read an outbox entry's files when it was sent (or the files
// `transferfs send` sent from the disk): kept in its journal and then the sent log, so that sent/ shows the transfer no more widely than the
// outbox did (a 0600 file shows 0400 there, a 0644 one 0444). Taken when the send's files are
// fixed, while the entry's modes are still at hand (after a crash it may have left the outbox).
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { readersOf } from '../base/access-bits.js'
import type { JournalFile } from './journal.js'

/** The permission bits shown for an outbox path: the mode the user set, else the default of its kind. */
export function shownPerm(stored: number | undefined, kind: 'dir' | 'file' | 'link'): number {
  return stored ?? (kind === 'dir' ? 0o755 : kind === 'link' ? 0o777 : 0o644)
}

/**
 * Each file's readers (access-bits.ts), by its name in the transfer: its own mode and those of
 * every folder above it in the outbox ("/a@b.com/data/raw.csv": "/a@b.com" and "/a@b.com/data").
 */
export function entryReaders(entryKey: string, files: readonly JournalFile[], permOf: (p: string, isDir: boolean) => number): Record<string, number> {
  const readers: Record<string, number> = {}
  for (const f of files) {
    const parts = (f.rel ? `${entryKey}/${f.rel}` : entryKey).split('/').filter((part) => part !== '')
    const folders = parts.slice(0, -1).map((_, i) => permOf(`/${parts.slice(0, i + 1).join('/')}`, true))
    readers[f.name] = readersOf(permOf(`/${parts.join('/')}`, false), folders)
  }
  return readers
}

/**
 * The same for files sent straight from the local disk (`transferfs send`): each file's mode
 * and those of every folder above it, up to the root.
 */
export async function localReaders(files: ReadonlyArray<{ name: string; path: string }>): Promise<Record<string, number>> {
  const readers: Record<string, number> = {}
  const folderModes = new Map<string, Promise<number>>()
  const folderMode = (dir: string): Promise<number> => {
    let mode = folderModes.get(dir)
    if (!mode) folderModes.set(dir, (mode = fsp.stat(dir).then((st) => st.mode)))
    return mode
  }
  for (const f of files) {
    const file = path.resolve(f.path)
    const folders: string[] = []
    for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
      folders.push(dir)
      if (path.dirname(dir) === dir) break
    }
    readers[f.name] = readersOf((await fsp.stat(file)).mode, await Promise.all(folders.map(folderMode)))
  }
  return readers
}
