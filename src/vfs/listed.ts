// What the model tells the mount's desktop side about a folder it just listed: the files
// it leads to as the service describes them, with the path and mtime the mount shows.
// The listener is called synchronously and must only take note (it never delays the readdir).
import type { FileDto } from '../api/types.js'
import type { RemoteFile } from '../read/source.js'
import type { TreeDir } from './transfer-tree.js'

export interface ListedFile {
  /** Path on the mount, from its root: `/inbox/<folder>/photos/a.png`. */
  path: string
  dto: FileDto
  size: number
  /** Unix ms, as getattr shows it. */
  mtimeMs: number
}

export type FilesListed = (files: ListedFile[]) => void

/** Every file of `dir` and the folders below it, their paths under `base`. */
export function filesBelow(dir: TreeDir, base: string, mtimeMs: number, out: ListedFile[]): void {
  for (const [name, child] of dir.entries) {
    if (child.kind === 'dir') filesBelow(child, `${base}/${name}`, mtimeMs, out)
    else out.push({ path: `${base}/${name}`, dto: child.dto, size: child.remote.size, mtimeMs })
  }
}

/** The first file of `dir` or the folders below it, or null when there is none. */
export function firstFileBelow(dir: TreeDir): RemoteFile | null {
  for (const child of dir.entries.values()) {
    const found = child.kind === 'dir' ? firstFileBelow(child) : child.remote
    if (found) return found
  }
  return null
}
