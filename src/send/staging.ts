// The staging tree on disk: outbox paths map one to one onto a real folder in the data
// folder, so names, renames, unlinks of open files and the bytes themselves are the
// real file system's job and survive a crash as they are. What the real tree cannot
// hold for us (the mode, owner and group the user set) lives in AttrStore.
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { FsError, type FsErrorCode } from '../vfs/core.js'
import { writeFileDurably } from '../base/durable-file.js'
import { readStateFile, stateCount } from '../base/state-file.js'
import { isWithin, splitPath } from './names.js'
import type { CancelTimer, Clock } from '../base/clock.js'

const KNOWN_CODES = new Set<string>([
  'ENOENT', 'EACCES', 'EPERM', 'EIO', 'EROFS', 'EEXIST', 'ENOTDIR', 'EISDIR', 'ENOTEMPTY', 'EINVAL', 'ENOSPC',
  'ENODATA', 'EOPNOTSUPP', 'ENAMETOOLONG', 'EBADF', 'ENOSYS', 'ETIMEDOUT', 'EXDEV', 'EBUSY', 'EFBIG',
])

/** A real file system error as the FsError the adapter understands. */
export function toFsError(err: unknown): FsError {
  if (err instanceof FsError) return err
  const code = (err as NodeJS.ErrnoException | null)?.code
  if (code === 'EDQUOT') return new FsError('ENOSPC', 'disk quota exceeded')
  if (code === 'ELOOP') return new FsError('EPERM', 'symbolic links are not followed in the outbox')
  if (typeof code === 'string' && KNOWN_CODES.has(code)) return new FsError(code as FsErrorCode, (err as Error).message)
  return new FsError('EIO', err instanceof Error ? err.message : String(err))
}

export function realPathOf(root: string, outboxPath: string): string {
  let parts: string[]
  try {
    parts = splitPath(outboxPath)
  } catch {
    throw new FsError('EINVAL', 'bad path')
  }
  for (const p of parts) if (Buffer.byteLength(p) > 255) throw new FsError('ENAMETOOLONG')
  return path.join(root, ...parts)
}

/**
 * Refuses writes that would fill the disk (ENOSPC before data is lost, s3fs#2621). The
 * OS is asked at most every `checkMs`; bytes written in between are subtracted.
 */
export class DiskGuard {
  private free = 0
  private checkedAt = -Infinity
  private writtenSince = 0

  constructor(
    private readonly freeBytes: () => Promise<number>,
    private readonly clock: Clock,
    private readonly minFree: number,
    private readonly checkMs: number,
    /** The whole disk's size, to tell a reserve no disk of this size can keep. */
    private readonly totalBytes?: () => Promise<number>,
  ) {}

  async reserve(bytes: number): Promise<void> {
    const checkDue = this.clock.now() - this.checkedAt >= this.checkMs
    if (checkDue || this.free - this.writtenSince - bytes < this.minFree) {
      this.free = await this.freeBytes()
      this.checkedAt = this.clock.now()
      this.writtenSince = 0
    }
    if (this.free - this.writtenSince - bytes < this.minFree) throw new FsError('ENOSPC', await this.why())
    this.writtenSince += bytes
  }

  private async why(): Promise<string> {
    const total = await this.totalBytes?.().catch(() => null)
    if (total != null && this.minFree >= total) {
      return `the outbox keeps ${this.minFree} bytes free (minFreeBytes), more than the whole disk of the data folder holds (${total} bytes): ` +
        'lower it (--min-free-bytes, TRANSFERFS_MIN_FREE_BYTES) or move the data folder'
    }
    return `not enough free space in the staging folder (the outbox keeps ${this.minFree} bytes free: minFreeBytes)`
  }
}

export async function freeBytesOf(dir: string): Promise<number> {
  const s = await fsp.statfs(dir)
  return s.bavail * s.bsize
}

export async function diskBytesOf(dir: string): Promise<number> {
  const s = await fsp.statfs(dir)
  return s.blocks * s.bsize
}

export interface StoredAttr { mode?: number; uid?: number; gid?: number }

/** A saved attribute whose fields are whole numbers in range (a mode of 12 bits, 32-bit ids); null when it is not one. */
function storedAttr(v: unknown): StoredAttr | null {
  if (typeof v !== 'object' || v === null) return null
  const out: StoredAttr = {}
  for (const [key, max] of [['mode', 0o7777], ['uid', 0xffff_ffff], ['gid', 0xffff_ffff]] as const) {
    const n = (v as Record<string, unknown>)[key]
    if (n === undefined) continue
    const checked = stateCount(n, max)
    if (checked === null) return null
    out[key] = checked
  }
  return out
}

/**
 * Mode, owner and group as the user set them (chmod/chown are accepted, stored and
 * reported back, never applied to the staging files, which stay private to us). Saved
 * a little later than set: they are not the user's data, and after a crash at worst a
 * default mode is shown.
 */
export class AttrStore {
  private attrs = new Map<string, StoredAttr>()
  private timer: CancelTimer | null = null
  private saving: Promise<void> = Promise.resolve()
  private halted = false

  constructor(private readonly file: string, private readonly clock: Clock, private readonly delayMs: number) {}

  async load(): Promise<void> {
    try {
      const obj = await readStateFile(this.file)
      this.attrs = new Map(typeof obj === 'object' && obj !== null ? Object.entries(obj).flatMap(([p, a]) => {
        const attr = storedAttr(a)
        return attr ? [[p, attr] as const] : []
      }) : [])
    } catch {
      this.attrs = new Map()
    }
  }

  get(p: string): StoredAttr | undefined {
    return this.attrs.get(p)
  }

  set(p: string, patch: StoredAttr): void {
    this.attrs.set(p, { ...this.attrs.get(p), ...patch })
    this.changed()
  }

  /** Forgets p and everything under it. */
  drop(p: string): void {
    for (const k of [...this.attrs.keys()]) if (isWithin(k, p)) this.attrs.delete(k)
    this.changed()
  }

  move(from: string, to: string): void {
    this.drop(to)
    for (const [k, v] of [...this.attrs]) {
      if (isWithin(k, from)) {
        this.attrs.delete(k)
        this.attrs.set(to + k.slice(from.length), v)
      }
    }
    this.changed()
  }

  private changed(): void {
    if (this.timer || this.halted) return
    this.timer = this.clock.setTimer(this.delayMs, () => {
      this.timer = null
      void this.flush().catch(() => undefined)
    })
  }

  flush(): Promise<void> {
    this.timer?.()
    this.timer = null
    if (this.halted) return this.saving
    const snapshot = JSON.stringify(Object.fromEntries(this.attrs))
    this.saving = this.saving.catch(() => undefined).then(() => writeFileDurably(this.file, snapshot))
    return this.saving
  }

  async halt(): Promise<void> {
    this.halted = true
    this.timer?.()
    this.timer = null
    await this.saving.catch(() => undefined)
  }
}
