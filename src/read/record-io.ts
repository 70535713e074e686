// Moving the disk cache's records between memory and its segment files (the records'
// bytes: cache-records.ts). A record goes straight between a block's slot and the disk with
// O_DIRECT (block-slots.ts says what that saves); a block not in a slot is staged in one.
// Where the file system refuses O_DIRECT (EINVAL: ramfs, an encrypted home on eCryptfs, one
// asking more than a page's alignment), every record goes through the page cache from then on.
import { constants as FS } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { writeParts } from '../api/file-io.js'
import { blockSlots, RECORD_ALIGN, recordOf } from './block-slots.js'
import { blockSum, knownBlockSum } from './block-sum.js'
import { copyBytes } from './bytes.js'
import { headerIs, sealRecord } from './cache-records.js'
import type { Block } from './memory-cache.js'

/**
 * Segment files kept open, least recently used closed first: an open and a close for every
 * block loaded cost a re-read from the cache about a tenth of its CPU. 16 segments of 16 MiB
 * cover what a few sequential readers and their read-ahead use at once.
 */
const OPEN_SEGMENTS = 16
/** Room of a staging slot at least: a block of the default size. */
const STAGING_ROOM = 1024 * 1024
/** Staging slots kept free for the next block not in a slot. */
const STAGING_KEPT = 8

/** A segment file as this module needs it: where it is, and whether a load or write holds it. */
export interface SegmentFile {
  path: string
  pins: number
}

/** A block to write: its index, its bytes and how many. */
export interface BlockToWrite {
  block: number
  parts: Block
  length: number
}

export class RecordIO {
  /** Segment files are opened with O_DIRECT until the file system refuses it once. */
  private direct = true
  /** Open segments, least recently used first (OPEN_SEGMENTS). */
  private readonly files = new Map<SegmentFile, Promise<FileHandle>>()
  /** Slots to stage a block in that is not in one already (blockSlots): their block rooms. */
  private readonly staging: Buffer[] = []
  /** Writes made (for tests: blocks waiting together go in one). */
  writes = 0

  /** Opens a segment file for positional reads and writes, with O_DIRECT while the file system takes it. */
  async open(path: string): Promise<FileHandle> {
    if (this.direct) {
      try {
        return await open(path, FS.O_RDWR | FS.O_DIRECT)
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EINVAL') throw e
        this.direct = false
      }
    }
    return open(path, FS.O_RDWR)
  }

  /**
   * Writes the blocks' records one after another from `offset` of the segment, in one
   * write: each from the slot the block is in, else from a staging slot it is copied into.
   * The blocks' checks, to keep in the index.
   */
  async store(segment: SegmentFile, offset: number, blocks: readonly BlockToWrite[]): Promise<Buffer[]> {
    const staged: Buffer[] = []
    try {
      const records = blocks.map(({ parts, length }) => {
        const inSlot = parts.length === 1 ? recordOf(parts[0]!, length) : null
        if (inSlot) return inSlot
        const { slot, record } = this.stage(length)
        staged.push(slot)
        copyBytes(parts, record.subarray(RECORD_ALIGN))
        return record
      })
      const sums = blocks.map(({ block, parts, length }, i) => {
        const sum = knownBlockSum(parts) ?? blockSum(records[i]!.subarray(RECORD_ALIGN, RECORD_ALIGN + length))
        sealRecord(records[i]!, block, length, sum)
        return sum
      })
      await this.transfer(segment, (file) => writeParts(file, records, offset))
      this.writes++
      return sums
    } finally {
      for (const slot of staged) this.unstage(slot)
    }
  }

  /**
   * The bytes of the record of `block` (`length` bytes) at `offset`, read into `into` when
   * it is a slot, else into a staging slot and copied out (into `into` when it is given).
   * Undefined when the record is cut short or its header names another block; the caller
   * holds the bytes against their check.
   */
  async load(segment: SegmentFile, offset: number, block: number, length: number, into: Buffer | undefined): Promise<Buffer | undefined> {
    const inSlot = into ? recordOf(into, length) : null
    const staged = inSlot ? null : this.stage(length)
    const image = inSlot ?? staged!.record
    try {
      const { bytesRead } = await this.transfer(segment, (file) => file.read(image, 0, image.length, offset))
      if (bytesRead < RECORD_ALIGN + length || !headerIs(image, block, length)) return undefined
      const bytes = image.subarray(RECORD_ALIGN, RECORD_ALIGN + length)
      if (inSlot) return bytes
      const out = into && into.length >= length ? into : Buffer.allocUnsafe(length)
      bytes.copy(out)
      return out.subarray(0, length)
    } finally {
      if (staged) this.unstage(staged.slot)
    }
  }

  /** Closes the segment's files (each once what it has under way is done). */
  close(segment: SegmentFile): void {
    const file = this.files.get(segment)
    if (!file) return
    this.files.delete(segment)
    file.then((f) => f.close()).catch(() => {})
  }

  /** Closes the files of every segment no load or write holds. */
  closeIdle(): void {
    for (const segment of [...this.files.keys()]) if (segment.pins === 0) this.close(segment)
  }

  /**
   * Runs one read or write of a segment's records. A file system that took O_DIRECT at open
   * and refuses an aligned transfer all the same gets the page cache from then on: the open
   * files close and the transfer runs again.
   */
  private async transfer<T>(segment: SegmentFile, run: (file: FileHandle) => Promise<T>): Promise<T> {
    const direct = this.direct
    try {
      return await run(await this.fileOf(segment))
    } catch (e) {
      if (!direct || (e as NodeJS.ErrnoException).code !== 'EINVAL') throw e
      this.direct = false
      for (const s of [...this.files.keys()]) this.close(s)
      return run(await this.fileOf(segment))
    }
  }

  /** The segment's file, open for reading and writing (both positional, so transfers share it). */
  private fileOf(segment: SegmentFile): Promise<FileHandle> {
    let file = this.files.get(segment)
    if (file) this.files.delete(segment)
    else {
      file = this.open(segment.path)
      // One that fails to open is forgotten, so the next transfer tries again.
      file.catch(() => this.files.get(segment) === file && this.files.delete(segment))
    }
    this.files.set(segment, file)
    // Only a file no load or write holds is closed; pinned ones wait for a later turn.
    for (const old of this.files.keys()) {
      if (this.files.size <= OPEN_SEGMENTS) break
      if (old.pins === 0 && old !== segment) this.close(old)
    }
    return file
  }

  /** A staging slot for a block of `length` bytes (give it back with unstage) and the record it makes there. */
  private stage(length: number): { slot: Buffer; record: Buffer } {
    const at = this.staging.findIndex((room) => room.length >= length)
    const slot = at >= 0 ? this.staging.splice(at, 1)[0]! : blockSlots(1, Math.max(length, STAGING_ROOM), false)[0]!
    return { slot, record: recordOf(slot, length)! }
  }

  private unstage(slot: Buffer): void {
    if (this.staging.length < STAGING_KEPT) this.staging.push(slot)
  }
}
