// Pinned files (kept offline), as the disk cache sees them: which files' segments eviction
// must leave alone, the room set aside for each (its whole size in records, fetched or
// not), and how much each file has in the cache. The list is saved in the cache folder
// (kept-v1.json: LIST_NAME), replaced whole and synced, so that a remount, a kill or a reboot reads
// it back before the cache's first eviction. What the user pinned lives elsewhere and is
// resolved to files again at each mount; this list only has to keep their bytes safe
// until then.
//
// The budget: the pinned files set aside their whole size, and every other cached block
// shares what is left (diskCacheBytes less that). Ordinary reads can then never fill the
// room a pin was promised, and a pin never needs to evict to fit, only to drop unpinned
// bytes past the smaller share.
import { readdir, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { isTempOfDurableWrite, writeFileDurably } from '../base/durable-file.js'
import { formatBytes } from '../base/format-bytes.js'
import { parseStateText, setAside } from '../base/state-file.js'
import { recordBytes } from './cache-records.js'

/**
 * The list's file name, from before the feature's code said "pin": it stays, because a cache
 * folder written by an earlier version must be read after an upgrade (a new name would drop
 * every pinned file's room until its pins were resolved again, and leave the old file behind).
 */
const LIST_NAME = 'kept-v1.json'

/** Bytes a file of `size` bytes takes in the disk cache once every block is there: one record per block. */
export function reservedBytes(size: number, blockSize: number): number {
  const whole = Math.floor(size / blockSize)
  const rest = size - whole * blockSize
  return whole * recordBytes(blockSize) + (rest > 0 ? recordBytes(rest) : 0)
}

/** What the disk cache holds now, for judging whether more files can be pinned. */
export interface CacheRoom {
  /** diskCacheBytes. */
  budgetBytes: number
  /** Set aside for the files pinned already. */
  pinnedBytes: number
  /** Of those, in the cache's files now. */
  pinnedStoredBytes: number
  /** Bytes of the other files' segments (which eviction may remove). */
  otherBytes: number
  /** Bytes the cache may still take from its disk (free space less the mount's margin); null when not known. */
  freeBytes: number | null
}

/** Files about to be pinned: the room they need in all, and what of it is in the cache already. */
export interface Adding {
  reservedBytes: number
  storedBytes: number
}

/** Null when the files fit; otherwise how many more bytes they need, and a sentence saying so. */
export function roomShortfall(room: CacheRoom, adding: Adding): { needed: number; message: string } | null {
  const overBudget = room.pinnedBytes + adding.reservedBytes - room.budgetBytes
  if (overBudget > 0) {
    return {
      needed: overBudget,
      message: `needs ${formatBytes(overBudget)} more room in the cache (diskCacheBytes ${formatBytes(room.budgetBytes)}, ${formatBytes(room.pinnedBytes)} kept)`,
    }
  }
  if (room.freeBytes === null) return null
  // What is still to be written: the rest of the files pinned already (promised before) and of
  // the new ones. What may take it: free space, and the other files' bytes eviction can remove.
  const toWrite = Math.max(0, room.pinnedBytes - room.pinnedStoredBytes) + Math.max(0, adding.reservedBytes - adding.storedBytes)
  const evictable = Math.max(0, room.otherBytes - adding.storedBytes)
  const overDisk = toWrite - (Math.max(0, room.freeBytes) + evictable)
  if (overDisk <= 0) return null
  return {
    needed: overDisk,
    message: `needs ${formatBytes(overDisk)} more room on the disk (${formatBytes(Math.max(0, room.freeBytes))} free for the cache, ${formatBytes(evictable)} of other cached files can go)`,
  }
}

export interface PinnedEntry {
  /** The file's id in the disk cache (a hash of its cache key). */
  id: string
  /** Bytes set aside for it (reservedBytes). */
  reserved: number
}

export class PinnedFiles {
  /** Pinned files by id: bytes set aside for each. */
  private readonly pinned = new Map<string, number>()
  private pinnedTotal = 0
  /** Bytes of segment files per file, and of pinned files' segments in all. */
  private readonly stored = new Map<string, number>()
  private pinnedStored = 0
  /** Bytes of verified blocks (the records' lengths) per file. */
  private readonly verified = new Map<string, number>()
  /** Saves of the list, one after another, each writing the list as it is when its turn comes. */
  private saving: Promise<void> = Promise.resolve()

  private constructor(private readonly path: string) {}

  /**
   * The list saved in `dir`. A list that cannot be parsed (a damaged disk: it is only ever
   * replaced whole) is set aside as kept-v1.json.damaged and the cache starts with none
   * pinned; the pins' files are pinned again when the pins are next resolved.
   */
  static async load(dir: string): Promise<PinnedFiles> {
    const files = new PinnedFiles(join(dir, LIST_NAME))
    let text: string | null = null
    try {
      text = await readFile(files.path, 'utf8')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
    }
    if (text !== null) {
      const entries = parseList(text)
      if (entries) for (const e of entries) files.add(e)
      else await setAside(files.path).catch(() => {})
    }
    // Left by a save a kill interrupted: never read, so removed.
    const names = await readdir(dir).catch(() => [] as string[])
    await Promise.all(names.filter((n) => n.startsWith(`${LIST_NAME}.tmp-`) && isTempOfDurableWrite(n)).map((n) => rm(join(dir, n), { force: true })))
    return files
  }

  /** The pinned files' ids. */
  ids(): string[] {
    return [...this.pinned.keys()]
  }

  has(id: string): boolean {
    return this.pinned.has(id)
  }

  get size(): number {
    return this.pinned.size
  }

  /** Bytes set aside for pinned files. */
  get reservedBytes(): number {
    return this.pinnedTotal
  }

  /** Bytes of pinned files' segments. */
  get pinnedStoredBytes(): number {
    return this.pinnedStored
  }

  /**
   * Bytes other files' blocks may still take in a cache of `budget` bytes holding `stored`:
   * the budget less what is set aside for pinned files (or what they hold, when more, with
   * `pinnedIncoming` more coming) less what the other files hold.
   */
  otherRoom(budget: number, stored: number, pinnedIncoming = 0): number {
    return budget - Math.max(this.pinnedTotal, this.pinnedStored + pinnedIncoming) - (stored - this.pinnedStored)
  }

  storedBytes(id: string): number {
    return this.stored.get(id) ?? 0
  }

  verifiedBytes(id: string): number {
    return this.verified.get(id) ?? 0
  }

  /** The file's segments grew (or shrank, `n` < 0) by `n` bytes. */
  addStored(id: string, n: number): void {
    bump(this.stored, id, n)
    if (this.pinned.has(id)) this.pinnedStored += n
  }

  /** The file's verified blocks grew (or shrank) by `n` bytes. */
  addVerified(id: string, n: number): void {
    bump(this.verified, id, n)
  }

  /** Pins the files, saved before it resolves; when the save fails they are not pinned and it rejects. */
  async pin(entries: readonly PinnedEntry[]): Promise<void> {
    const added = entries.filter((e) => !this.pinned.has(e.id))
    for (const e of added) this.add(e)
    try {
      await this.save()
    } catch (e) {
      for (const a of added) this.remove(a.id)
      throw e
    }
  }

  /** Unpins the files, saved before it resolves; when the save fails they stay pinned and it rejects. */
  async unpin(ids: readonly string[]): Promise<void> {
    const removed: PinnedEntry[] = []
    for (const id of ids) {
      const reserved = this.pinned.get(id)
      if (reserved === undefined) continue
      this.remove(id)
      removed.push({ id, reserved })
    }
    if (removed.length === 0) return
    try {
      await this.save()
    } catch (e) {
      for (const r of removed) this.add(r)
      throw e
    }
  }

  private add(e: PinnedEntry): void {
    if (this.pinned.has(e.id)) return
    this.pinned.set(e.id, e.reserved)
    this.pinnedTotal += e.reserved
    this.pinnedStored += this.storedBytes(e.id)
  }

  private remove(id: string): void {
    const reserved = this.pinned.get(id)
    if (reserved === undefined) return
    this.pinned.delete(id)
    this.pinnedTotal -= reserved
    this.pinnedStored -= this.storedBytes(id)
  }

  private save(): Promise<void> {
    const next = this.saving.catch(() => {}).then(() => {
      const files = Object.fromEntries(this.pinned)
      return writeFileDurably(this.path, `${JSON.stringify({ version: 1, files })}\n`)
    })
    this.saving = next
    return next
  }
}

function bump(map: Map<string, number>, id: string, n: number): void {
  const v = (map.get(id) ?? 0) + n
  if (v === 0) map.delete(id)
  else map.set(id, v)
}

/** The entries of a saved list, or null when it is not one. */
function parseList(text: string): PinnedEntry[] | null {
  try {
    const parsed = parseStateText(text, LIST_NAME)
    if (typeof parsed !== 'object' || parsed === null) return null
    const { version, files } = parsed as { version?: unknown; files?: unknown }
    if (version !== 1 || typeof files !== 'object' || files === null) return null
    const out: PinnedEntry[] = []
    for (const [id, reserved] of Object.entries(files)) {
      if (!/^[0-9a-f]{40}$/.test(id) || typeof reserved !== 'number' || !Number.isSafeInteger(reserved) || reserved < 0) return null
      out.push({ id, reserved })
    }
    return out
  } catch {
    return null
  }
}
