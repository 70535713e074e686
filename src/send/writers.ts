// Marks of files open for writing, kept on disk while the handle is open. A mark left
// behind by a process that died names a file that may hold only part of what was being
// written (cp was cut off): such an entry is held, not sent, until the user changes or
// renames it. Marks are not synced: they guard against a killed process, where the
// page cache survives; a power loss may lose a mark along with the unsynced bytes.
import { randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import path from 'node:path'

export class WriterMarks {
  private readonly run = randomBytes(4).toString('hex')
  private halted = false

  constructor(readonly dir: string) {}

  private file(fh: number): string {
    return path.join(this.dir, `${this.run}-${fh}`)
  }

  async init(): Promise<Array<{ file: string; path: string }>> {
    await fsp.mkdir(this.dir, { recursive: true })
    const out: Array<{ file: string; path: string }> = []
    for (const name of await fsp.readdir(this.dir)) {
      const file = path.join(this.dir, name)
      const p = await fsp.readFile(file, 'utf8').catch(() => '')
      if (p.startsWith('/')) out.push({ file, path: p })
      else await fsp.rm(file, { force: true })
    }
    return out
  }

  /** The handle `fh` writes to `p` (again after a rename). */
  async set(fh: number, p: string): Promise<void> {
    if (!this.halted) await fsp.writeFile(this.file(fh), p)
  }

  async clear(fh: number): Promise<void> {
    if (!this.halted) await fsp.rm(this.file(fh), { force: true })
  }

  async remove(files: string[]): Promise<void> {
    if (this.halted) return
    for (const f of files) await fsp.rm(f, { force: true })
  }

  halt(): void {
    this.halted = true
  }
}
