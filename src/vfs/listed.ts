// What the model tells the mount's desktop side about a folder it just listed: its files
// as the service describes them, with the mtime the mount shows for each. The listener is
// called synchronously and must only take note (it never delays the readdir).
import type { FileDto } from '../api/types.js'

export interface ListedFile {
  /** Path on the mount, from its root: `/inbox/<folder>/photos/a.png`. */
  path: string
  dto: FileDto
  size: number
  /** Unix ms, as getattr shows it. */
  mtimeMs: number
}

export type FilesListed = (files: ListedFile[]) => void
