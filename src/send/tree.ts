// The shape of the outbox: which top-level names are folders, which folders name
// recipients, and so which entry (the unit that becomes one transfer) a path is in.
import { longPathFs as disk } from '../base/long-paths.js'
import { isWithin, recipientsOf, splitPath } from './names.js'
import { realPathOf } from './staging.js'

export type RootKind = 'file' | 'dir' | 'symlink' | 'other'

export interface EntryInfo {
  key: string
  /** Subject of the transfer: the entry's own name. */
  subject: string
  recipients: string[]
  realPath: string
}

export class OutboxTree {
  /** Kinds of the top-level names, kept in step with every op (no stat on the hot path). */
  private kinds = new Map<string, RootKind>()

  /**
   * `existing`: the staging of files added to sent transfers, where every top-level
   * folder is named by a transfer id and stands for that transfer (its one "recipient").
   */
  constructor(readonly root: string, private groups: readonly string[], readonly existing = false) {}

  setGroups(groups: readonly string[]): void {
    this.groups = groups
  }

  real(p: string): string {
    return realPathOf(this.root, p)
  }

  setKind(name: string, kind: RootKind | null): void {
    if (kind === null) this.kinds.delete(name)
    else this.kinds.set(name, kind)
  }

  /** Updates the kind of a top-level path after an op changed it. */
  async refreshKind(p: string): Promise<void> {
    const parts = splitPath(p)
    if (parts.length !== 1) return
    const name = parts[0] as string
    try {
      const st = await disk.lstat(this.real(p))
      this.kinds.set(name, st.isDirectory() ? 'dir' : st.isFile() ? 'file' : st.isSymbolicLink() ? 'symlink' : 'other')
    } catch {
      this.kinds.delete(name)
    }
  }

  /** Recipients of a top-level recipient folder, or null when `name` is not one. */
  recipientFolder(name: string): string[] | null {
    if (this.kinds.get(name) !== 'dir') return null
    return this.existing ? [name] : recipientsOf(name, this.groups)
  }

  /** The entry `p` belongs to; null for the root and for recipient folders themselves. */
  entryOf(p: string): string | null {
    const parts = splitPath(p)
    const top = parts[0]
    if (top === undefined) return null
    if (this.recipientFolder(top)) {
      const child = parts[1]
      return child === undefined ? null : `/${top}/${child}`
    }
    return `/${top}`
  }

  describe(key: string): EntryInfo | null {
    if (this.entryOf(key) !== key) return null
    const parts = splitPath(key)
    const recipients = parts.length === 2 ? (this.recipientFolder(parts[0] as string) ?? []) : []
    return { key, subject: parts[parts.length - 1] as string, recipients, realPath: this.real(key) }
  }

  /** Every entry at or under `p`, or containing it, as the tree is now. */
  async entriesAt(p: string): Promise<string[]> {
    const own = this.entryOf(p)
    if (own) return [own]
    const parts = splitPath(p)
    if (parts.length === 0) return this.allEntries()
    const top = parts[0] as string
    if (!this.recipientFolder(top)) return []
    try {
      return (await disk.readdir(this.real(`/${top}`))).map((c) => `/${top}/${c}`)
    } catch {
      return []
    }
  }

  /** Reads the top level from disk and lists every entry. */
  async scan(): Promise<string[]> {
    this.kinds.clear()
    const items = await disk.readdirTyped(this.root)
    for (const i of items) this.kinds.set(i.name, i.isDirectory() ? 'dir' : i.isFile() ? 'file' : i.isSymbolicLink() ? 'symlink' : 'other')
    return this.allEntries()
  }

  private async allEntries(): Promise<string[]> {
    const out: string[] = []
    for (const name of this.kinds.keys()) {
      if (this.recipientFolder(name)) {
        try {
          for (const c of await disk.readdir(this.real(`/${name}`))) out.push(`/${name}/${c}`)
        } catch {
          // vanished meanwhile
        }
      } else out.push(`/${name}`)
    }
    return out
  }

  static within(p: string, base: string): boolean {
    return isWithin(p, base)
  }
}
