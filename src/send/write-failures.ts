// Files of the outbox whose last write failed (no space, an I/O error, a failed sync):
// their entry is not sent, since the bytes staged may be a fraction of what the user
// wrote. A mark lasts until the file is written again from its start (created, or
// truncated to nothing, as `cp` does) or removed, and it survives a remount: it is kept
// on disk with the journal's care.
import { writeFileDurably } from '../base/durable-file.js'
import { readStateFile } from '../base/state-file.js'
import { isWithin } from './names.js'

export class WriteFailures {
  /** Outbox path → why its last write failed. */
  private marks = new Map<string, string>()
  private saving: Promise<void> = Promise.resolve()

  constructor(private readonly file: string) {}

  async load(): Promise<void> {
    try {
      const saved = await readStateFile(this.file)
      this.marks = typeof saved === 'object' && saved !== null ? new Map(Object.entries(saved).filter((e): e is [string, string] => typeof e[1] === 'string')) : new Map()
    } catch {
      this.marks = new Map()
    }
  }

  /** Why a write into the entry at `key` failed, or null when none did. */
  failureIn(key: string): string | null {
    for (const [p, why] of this.marks) if (isWithin(p, key)) return `${p.slice(1)}: ${why}`
    return null
  }

  mark(p: string, why: string): Promise<void> {
    this.marks.set(p, why)
    return this.save()
  }

  /** `p` is written again from its start. */
  clear(p: string): Promise<void> {
    return this.marks.delete(p) ? this.save() : Promise.resolve()
  }

  /** `p`, or the folder `p` and everything in it, is gone. */
  removed(p: string): Promise<void> {
    let changed = false
    for (const k of [...this.marks.keys()]) if (isWithin(k, p)) changed = this.marks.delete(k) || changed
    return changed ? this.save() : Promise.resolve()
  }

  renamed(from: string, to: string): Promise<void> {
    let changed = false
    for (const [k, why] of [...this.marks]) {
      if (!isWithin(k, from)) continue
      this.marks.delete(k)
      this.marks.set(to + k.slice(from.length), why)
      changed = true
    }
    return changed ? this.save() : Promise.resolve()
  }

  private save(): Promise<void> {
    const content = JSON.stringify(Object.fromEntries(this.marks))
    this.saving = this.saving.catch(() => undefined).then(() => writeFileDurably(this.file, content))
    return this.saving
  }
}
