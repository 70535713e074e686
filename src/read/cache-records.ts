// The disk cache's records as bytes, and the segment files that hold them as found at
// start (the cache's index is rebuilt from them: disk-cache.ts). A record is a header page, then the block's bytes
// zero-padded to a page (block-slots.ts says why pages). The header holds the block's
// index and length (u32 each, big-endian) and the block's check (block-sum.ts), then
// zeros. Index and length are held against the index again at every load, so a record
// read from the wrong place is caught even before its check.
import { readdir, rm, stat, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { aligned, blockSlots, RECORD_ALIGN, recordOf } from './block-slots.js'
import { BLOCK_SUM_BYTES } from './block-sum.js'

/** Bytes of the header that are not padding. */
const HEADER_USED = 8 + BLOCK_SUM_BYTES

/** Bytes a record of a block of `length` bytes takes in its segment. */
export function recordBytes(length: number): number {
  return RECORD_ALIGN + aligned(length)
}

/** Writes the header into the record's first page, and zeros after the block's bytes to the record's end. */
export function sealRecord(record: Buffer, block: number, length: number, sum: Buffer): void {
  record.fill(0, 0, RECORD_ALIGN)
  record.writeUInt32BE(block >>> 0, 0)
  record.writeUInt32BE(length, 4)
  sum.copy(record, 8)
  record.fill(0, RECORD_ALIGN + length)
}

/** Whether the record's header names this block and length. */
export function headerIs(record: Buffer, block: number, length: number): boolean {
  return record.length >= RECORD_ALIGN && record.readUInt32BE(0) === block >>> 0 && record.readUInt32BE(4) === length
}

/** A record found in a segment: where it starts, and what its header says. */
export interface StoredRecord {
  block: number
  offset: number
  length: number
  sum: Buffer
}

/**
 * Header pages free for the next segment read: each slot's memory is a WebAssembly memory of
 * its own, too dear to make again for every segment of a cache being opened.
 */
const headerPages: Buffer[] = []

/**
 * The records of a segment of `size` bytes, open as `file`, in file order, up to the first
 * that is cut short. Their header pages are read whole, into a page of a slot, so that a
 * file open with O_DIRECT can read them: read through the page cache, each header would
 * bring the kernel's read-ahead of the block bytes behind it into memory for nothing.
 */
export async function readRecords(file: FileHandle, size: number): Promise<StoredRecord[]> {
  const out: StoredRecord[] = []
  const header = headerPages.pop() ?? recordOf(blockSlots(1, RECORD_ALIGN, false)[0]!, 0)!
  try {
    for (let at = 0; at + RECORD_ALIGN <= size;) {
      const { bytesRead } = await file.read(header, 0, RECORD_ALIGN, at)
      if (bytesRead < HEADER_USED) break
      const length = header.readUInt32BE(4)
      const next = at + recordBytes(length)
      if (next > size) break
      out.push({ block: header.readUInt32BE(0), offset: at, length, sum: Buffer.from(header.subarray(8, HEADER_USED)) })
      at = next
    }
  } finally {
    headerPages.push(header)
  }
  return out
}

const SEGMENT_NAME = /^(\d+)\.seg$/

/** A segment file found in the cache's folder: its key (<file>/<number>), where it is, and what it holds. */
export interface FoundSegment {
  key: string
  fileId: string
  path: string
  size: number
  mtimeMs: number
  records: StoredRecord[]
}

/**
 * Every segment file below `root` (<file>/<number>.seg), with its records, each file read
 * through `open`. What is not a segment there (a stray name, a file where a folder should
 * be, leftovers of a crash) is removed on the way.
 */
export async function findSegments(root: string, open: (path: string) => Promise<FileHandle>): Promise<FoundSegment[]> {
  const found: FoundSegment[] = []
  for (const fileId of await readdir(root)) {
    const folder = join(root, fileId)
    let names: string[]
    try {
      names = await readdir(folder)
    } catch {
      await rm(folder, { force: true })
      continue
    }
    await Promise.all(names.map(async (name) => {
      const path = join(folder, name)
      const m = SEGMENT_NAME.exec(name)
      if (!m) return void (await rm(path, { force: true, recursive: true }))
      const st = await stat(path).catch(() => null)
      if (!st?.isFile()) return
      const records = await open(path)
        .then(async (file) => {
          try {
            return await readRecords(file, st.size)
          } finally {
            await file.close()
          }
        })
        .catch(() => [])
      found.push({ key: `${fileId}/${m[1]}`, fileId, path, size: st.size, mtimeMs: st.mtimeMs, records })
    }))
  }
  return found
}
