// What an entry holds at the moment its send is fixed: every file that will be in the
// transfer, with its size and MD5 read from the staged bytes.
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import PQueue from 'p-queue'
import { md5OfFile } from '../api/md5.js'
import type { JournalFile } from './journal.js'
import { isTemporaryName } from './names.js'

/** Files of a folder hashed at once when its content is fixed. */
const SNAPSHOT_PARALLEL_FILES = 8

export type Snapshot =
  | { kind: 'missing' }
  | { kind: 'symlink' }
  | { kind: 'content'; files: JournalFile[] }

/**
 * Files of the entry at `realPath` named `entryName`. A folder entry lists its regular
 * files with paths relative to it ("data/raw.csv"), leaving out temporary names (and
 * everything under a temporary folder name) and symbolic links.
 */
export async function takeSnapshot(realPath: string, entryName: string, signal?: AbortSignal): Promise<Snapshot> {
  let st
  try {
    st = await fsp.lstat(realPath)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return { kind: 'missing' }
    throw err
  }
  if (st.isSymbolicLink()) return { kind: 'symlink' }
  if (st.isFile()) {
    return { kind: 'content', files: [{ name: entryName, rel: '', size: st.size, md5: await md5OfFile(realPath, { signal }) }] }
  }
  if (!st.isDirectory()) return { kind: 'content', files: [] }
  const found: Array<{ rel: string; full: string; size: number }> = []
  const walk = async (dir: string, rel: string): Promise<void> => {
    const items = await fsp.readdir(dir, { withFileTypes: true })
    items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const item of items) {
      if (isTemporaryName(item.name)) continue
      const r = rel ? `${rel}/${item.name}` : item.name
      const full = path.join(dir, item.name)
      if (item.isDirectory()) await walk(full, r)
      else if (item.isFile()) found.push({ rel: r, full, size: (await fsp.lstat(full)).size })
    }
  }
  await walk(realPath, '')
  // Several files hashed at once: a folder of many small files is bound by each file's
  // open and read, not by MD5.
  const queue = new PQueue({ concurrency: SNAPSHOT_PARALLEL_FILES })
  const md5s = await Promise.all(found.map((f) => queue.add(() => md5OfFile(f.full, { signal }))))
  return { kind: 'content', files: found.map((f, i) => ({ name: f.rel, rel: f.rel, size: f.size, md5: md5s[i]! })) }
}

export function sameFiles(a: readonly JournalFile[], b: readonly JournalFile[]): boolean {
  if (a.length !== b.length) return false
  return a.every((f, i) => {
    const g = b[i]
    return g !== undefined && f.name === g.name && f.rel === g.rel && f.size === g.size && f.md5 === g.md5
  })
}
