// Open files of the outbox: a real file handle per open, keyed by the number the
// kernel gets back. Each follows its file through renames (rsync renames its temp file
// while the handle may still be open; release can come after the rename), and marks
// itself on disk while it may write (see WriterMarks).
import type { FileHandle } from 'node:fs/promises'
import { FsError } from '../vfs/core.js'
import { isWithin } from './names.js'
import type { WriterMarks } from './writers.js'

export interface OpenFile {
  /** Where the file is now in the outbox (renames follow it); null once unlinked or replaced. */
  path: string | null
  handle: FileHandle
  wrote: boolean
  /** Opened for writing: a mark on disk says so until release. */
  marked: boolean
  /** Released: its mark is gone from disk, though the handle is still being let go of. */
  unmarked?: boolean
}

export class OpenFiles {
  private files = new Map<number, OpenFile>()
  private nextFh = 1
  /** Paths being opened for writing right now (before their handle exists). */
  private opening: string[] = []

  constructor(private readonly marks: WriterMarks) {}

  async add(f: OpenFile): Promise<number> {
    const fh = this.nextFh++
    this.files.set(fh, f)
    if (f.marked && f.path) await this.marks.set(fh, f.path)
    return fh
  }

  get(fh: number): OpenFile {
    const f = this.files.get(fh)
    if (!f) throw new FsError('EBADF')
    return f
  }

  /**
   * Every writer has closed the file (release): its mark goes now, before the release's
   * sync. The writer was told its copy succeeded before release came; a process killed
   * during that sync leaves the bytes whole in the page cache, and must not hold them as
   * cut off.
   */
  async released(fh: number): Promise<void> {
    const f = this.files.get(fh)
    if (!f || !markedOnDisk(f)) return
    f.unmarked = true
    await this.marks.clear(fh)
  }

  /** Forgets the handle (the caller closes it). */
  async remove(fh: number): Promise<OpenFile | undefined> {
    const f = this.files.get(fh)
    this.files.delete(fh)
    if (f && markedOnDisk(f)) await this.marks.clear(fh)
    return f
  }

  /** Announces an open for writing of `p` before its handle exists; returns the undo. */
  announceOpening(p: string): () => void {
    this.opening.push(p)
    let done = false
    return () => {
      if (done) return
      done = true
      this.opening.splice(this.opening.indexOf(p), 1)
    }
  }

  isOpen(key: string): boolean {
    for (const f of this.files.values()) if (f.path !== null && isWithin(f.path, key)) return true
    return false
  }

  hasWriters(key: string): boolean {
    for (const f of this.files.values()) if (f.marked && f.path !== null && isWithin(f.path, key)) return true
    return this.opening.some((p) => isWithin(p, key))
  }

  async renamed(from: string, to: string): Promise<void> {
    for (const [fh, f] of this.files) {
      if (f.path === null) continue
      if (isWithin(f.path, from)) {
        f.path = to + f.path.slice(from.length)
        if (markedOnDisk(f)) await this.marks.set(fh, f.path)
      } else if (f.path === to) {
        f.path = null // the file that was replaced
        if (markedOnDisk(f)) await this.marks.clear(fh)
      }
    }
  }

  async unlinked(p: string): Promise<void> {
    for (const [fh, f] of this.files) {
      if (f.path !== p) continue
      f.path = null
      if (markedOnDisk(f)) await this.marks.clear(fh)
    }
  }

  /** Takes every handle out (to close them: shutdown, or a dead process's files). */
  drain(): OpenFile[] {
    const all = [...this.files.values()]
    this.files.clear()
    return all
  }
}

const markedOnDisk = (f: OpenFile): boolean => f.marked && f.unmarked !== true
