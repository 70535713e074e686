// What an entry holds at the moment its send is fixed: every file that will be in the
// transfer, with its size and MD5 read from the staged bytes.
import { createHash } from 'node:crypto'
import { createReadStream, promises as fsp } from 'node:fs'
import path from 'node:path'
import type { JournalFile } from './journal.js'
import { isTemporaryName } from './names.js'

export type Snapshot =
  | { kind: 'missing' }
  | { kind: 'symlink' }
  | { kind: 'content'; files: JournalFile[] }

export async function md5OfFile(file: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('md5')
  const stream = createReadStream(file, { highWaterMark: 1024 * 1024, signal })
  for await (const chunk of stream) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

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
    return { kind: 'content', files: [{ name: entryName, rel: '', size: st.size, md5: await md5OfFile(realPath, signal) }] }
  }
  if (!st.isDirectory()) return { kind: 'content', files: [] }
  const files: JournalFile[] = []
  const walk = async (dir: string, rel: string): Promise<void> => {
    const items = await fsp.readdir(dir, { withFileTypes: true })
    items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const item of items) {
      if (isTemporaryName(item.name)) continue
      const r = rel ? `${rel}/${item.name}` : item.name
      const full = path.join(dir, item.name)
      if (item.isDirectory()) await walk(full, r)
      else if (item.isFile()) {
        const s = await fsp.lstat(full)
        files.push({ name: r, rel: r, size: s.size, md5: await md5OfFile(full, signal) })
      }
    }
  }
  await walk(realPath, '')
  return { kind: 'content', files }
}

export function sameFiles(a: readonly JournalFile[], b: readonly JournalFile[]): boolean {
  if (a.length !== b.length) return false
  return a.every((f, i) => {
    const g = b[i]
    return g !== undefined && f.name === g.name && f.rel === g.rel && f.size === g.size && f.md5 === g.md5
  })
}
