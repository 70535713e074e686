// What an entry holds at the moment its send is fixed: every file that will be in the
// transfer, with its size at once and its MD5 read from the staged bytes on worker
// threads. The sizes are all that initialize and the upload need, so a big file's
// MD5 (~1.5 s per GiB here) does not hold up its first byte; the MD5s are needed to
// compare with a journaled send and to record the sent transfer.
import { longPathFs as disk, withShortPath } from '../base/long-paths.js'
import path from 'node:path'
import { md5OfFile } from '../base/file-hash-pool.js'
import type { JournalFile } from './journal.js'
import { isTemporaryName } from './names.js'

export type Snapshot =
  | { kind: 'missing' }
  | { kind: 'symlink' }
  /** `files` have their md5 ('' until then) once `hashed` resolves; it rejects if a file cannot be read. */
  | { kind: 'content'; files: JournalFile[]; hashed: Promise<void> }

/**
 * MD5s already worked out, by path relative to the entry, each for the size it had; a
 * file of that size is taken as unchanged (the early uploads hand over only files no
 * change has touched since they were hashed).
 */
export type KnownMd5 = ReadonlyMap<string, { size: number; md5: string }>

/**
 * Files of the entry at `realPath` named `entryName`. A folder entry lists its regular
 * files with paths relative to it ("data/raw.csv"), leaving out temporary names (and
 * everything under a temporary folder name) and symbolic links.
 */

export async function takeSnapshot(realPath: string, entryName: string, signal?: AbortSignal, known: KnownMd5 = new Map()): Promise<Snapshot> {
  let st
  try {
    st = await disk.lstat(realPath)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return { kind: 'missing' }
    throw err
  }
  if (st.isSymbolicLink()) return { kind: 'symlink' }
  if (st.isFile()) return hashing([{ rel: '', full: realPath, size: st.size }], entryName, signal, known)
  if (!st.isDirectory()) return hashing([], entryName, signal, known)
  const found = await filesOfFolder(realPath)
  signal?.throwIfAborted()
  return hashing(found, entryName, signal, known)
}

/** The regular files below the folder `realPath`, by path relative to it, in name order, temporary names left out. */
export async function filesOfFolder(realPath: string): Promise<Array<{ rel: string; full: string; size: number }>> {
  const found: Array<{ rel: string; full: string; size: number }> = []
  const walk = async (dir: string, rel: string): Promise<void> => {
    const items = await disk.readdirTyped(dir)
    items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const item of items) {
      if (isTemporaryName(item.name)) continue
      const r = rel ? `${rel}/${item.name}` : item.name
      const full = path.join(dir, item.name)
      if (item.isDirectory()) await walk(full, r)
      else if (item.isFile()) found.push({ rel: r, full, size: (await disk.lstat(full)).size })
    }
  }
  await walk(realPath, '')
  return found
}

/** The snapshot of `found` (an entry that is a file has rel ''), its MD5s on the way; a send given up drops those not started. */
function hashing(found: ReadonlyArray<{ rel: string; full: string; size: number }>, entryName: string, signal: AbortSignal | undefined, known: KnownMd5): Snapshot {
  const files: JournalFile[] = found.map((f) => {
    const k = known.get(f.rel)
    return { name: f.rel || entryName, rel: f.rel, size: f.size, md5: k && k.size === f.size ? k.md5 : '' }
  })
  const hashed = Promise.all(found.map(async (f, i) => {
    if (files[i]!.md5 === '') files[i]!.md5 = await withShortPath(f.full, (s) => md5OfFile(s, 0, null, signal))
  })).then(() => undefined)
  // Whoever needs the MD5s awaits this and sees the failure; a send given up before that never does.
  hashed.catch(() => undefined)
  return { kind: 'content', files, hashed }
}

export function sameFiles(a: readonly JournalFile[], b: readonly JournalFile[]): boolean {
  if (a.length !== b.length) return false
  return a.every((f, i) => {
    const g = b[i]
    return g !== undefined && f.name === g.name && f.rel === g.rel && f.size === g.size && f.md5 === g.md5
  })
}

/**
 * Every journaled file is in `files` unchanged (name, path, size, MD5): what a transfer may
 * already hold of the entry is still what the entry holds. `files` may have more.
 */
export function holdsJournaled(files: readonly JournalFile[], journaled: readonly JournalFile[]): boolean {
  const byName = new Map(files.map((f) => [f.name, f]))
  return journaled.every((f) => {
    const g = byName.get(f.name)
    return f.md5 !== '' && g !== undefined && g.rel === f.rel && g.size === f.size && g.md5 === f.md5
  })
}
