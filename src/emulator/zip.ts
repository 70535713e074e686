// The whole-transfer ZIP archive, laid out before a byte is sent.
//
// Entries are stored (method 0) with their CRC and sizes in the local headers, so the archive's size
// and every byte's place in it follow from the entries alone: a download can start anywhere (HTTP
// Range) and the file contents are streamed from disk by the caller. ZIP64 records are written only
// where a size, an offset or the entry count does not fit the classic fields.
import { Readable } from 'node:stream'
import { crc32 as zlibCrc32 } from 'node:zlib'

export interface ZipEntry {
  /** Path inside the archive, `/`-separated, stored as UTF-8 (flag bit 11). */
  name: string
  /** Content length in bytes. */
  size: number
  /** CRC-32 of the content (unsigned). */
  crc32: number
  mtime: Date
}

/** A piece of the archive: header bytes, or the byte range [start, end) of entry `index`'s content. */
export type ZipSegment =
  | { kind: 'bytes'; data: Buffer }
  | { kind: 'file'; index: number; start: number; end: number }

export interface ZipLayout {
  /** Total archive length in bytes. */
  readonly size: number
  /** The pieces covering exactly [start, end) of the archive, in order, none of them empty. */
  segments(start?: number, end?: number): Iterable<ZipSegment>
  /** Where entry `index`'s local header starts (for tests and diagnostics). */
  localHeaderOffset(index: number): number
}

/** CRC-32 as ZIP wants it; pass the previous value to continue over several buffers. */
export function crc32(data: Uint8Array | string, previous = 0): number {
  return zlibCrc32(data, previous) >>> 0
}

/**
 * Entry names an unzip can extract without leaving its folder: no leading `/`, no `.` or `..`
 * components, a backslash read as a separator, and a ` (2)`-style suffix where two names end up equal.
 * The transfer's own names may hold any of those; zipLayout itself stores names as given.
 */
export function safeZipNames(names: readonly string[]): string[] {
  const taken = new Set<string>()
  return names.map((name) => {
    const parts = name.split(/[/\\]/).filter((p) => p !== '' && p !== '.' && p !== '..')
    const base = parts.length > 0 ? parts.join('/') : '_'
    let candidate = base
    for (let n = 2; taken.has(candidate); n++) {
      const dot = base.lastIndexOf('.')
      const cut = dot > base.lastIndexOf('/') + 1 ? dot : base.length
      candidate = `${base.slice(0, cut)} (${n})${base.slice(cut)}`
    }
    taken.add(candidate)
    return candidate
  })
}

// Values at or above these do not fit the classic fields and move to ZIP64 records.
const MAX_U32 = 0xffffffff
const MAX_U16 = 0xffff

const SIG_LOCAL = 0x04034b50
const SIG_CENTRAL = 0x02014b50
const SIG_ZIP64_END = 0x06064b50
const SIG_ZIP64_LOCATOR = 0x07064b50
const SIG_END = 0x06054b50

const FLAG_UTF8 = 0x0800
const VERSION_DEFAULT = 20 // 2.0: stored entries, folders in names
const VERSION_ZIP64 = 45 // 4.5: ZIP64 extensions
const MADE_BY_UNIX = 3 << 8 // upper byte 3: external attributes hold a Unix mode
const UNIX_FILE_MODE = 0o100644

const EXTRA_ZIP64 = 0x0001
const EXTRA_UNIX_TIME = 0x5455 // "UT": exact mtime in UTC, which the DOS fields cannot hold

const LOCAL_FIXED = 30
const CENTRAL_FIXED = 46
const ZIP64_END_SIZE = 56
const ZIP64_LOCATOR_SIZE = 20
const END_SIZE = 22

type Part =
  | { offset: number; length: number; kind: 'bytes'; data: Buffer }
  | { offset: number; length: number; kind: 'file'; index: number }

export function zipLayout(entries: readonly ZipEntry[]): ZipLayout {
  const parts: Part[] = []
  const localOffsets: number[] = []
  const centralRecords: Buffer[] = []
  let offset = 0

  entries.forEach((entry, index) => {
    checkEntry(entry, index)
    const name = Buffer.from(entry.name, 'utf8')
    const local = localHeader(entry, name)
    localOffsets.push(offset)
    parts.push({ offset, length: local.length, kind: 'bytes', data: local })
    centralRecords.push(centralHeader(entry, name, offset))
    offset += local.length
    if (entry.size > 0) parts.push({ offset, length: entry.size, kind: 'file', index })
    offset += entry.size
  })

  const centralOffset = offset
  const central = Buffer.concat(centralRecords)
  const tail = endRecords(entries.length, centralOffset, central.length)
  const trailer = Buffer.concat([central, tail])
  parts.push({ offset, length: trailer.length, kind: 'bytes', data: trailer })
  const size = offset + trailer.length
  if (!Number.isSafeInteger(size)) throw new RangeError('zip archive too large')

  return {
    size,
    localHeaderOffset(index: number): number {
      const at = localOffsets[index]
      if (at === undefined) throw new RangeError(`no zip entry ${index}`)
      return at
    },
    *segments(start = 0, end = size): Iterable<ZipSegment> {
      if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end > size || start > end) {
        throw new RangeError(`bad zip range [${start}, ${end}) of ${size}`)
      }
      for (let i = firstPartAt(parts, start); i < parts.length && start < end; i++) {
        const part = parts[i]!
        const from = start - part.offset
        const to = Math.min(end, part.offset + part.length) - part.offset
        if (part.kind === 'bytes') yield { kind: 'bytes', data: part.data.subarray(from, to) }
        else yield { kind: 'file', index: part.index, start: from, end: to }
        start = part.offset + to
      }
    },
  }
}

/**
 * The bytes of [start, end) of the archive as a stream. `openEntry` gives the byte range [start, end)
 * of entry `index`'s content (e.g. `fs.createReadStream(path, { start, end: end - 1 })`).
 */
export function zipStream(
  layout: ZipLayout,
  openEntry: (index: number, start: number, end: number) => AsyncIterable<Uint8Array> | NodeJS.ReadableStream,
  start = 0,
  end = layout.size,
): Readable {
  async function* bytes(): AsyncGenerator<Buffer> {
    for (const segment of layout.segments(start, end)) {
      if (segment.kind === 'bytes') {
        yield segment.data
        continue
      }
      let remaining = segment.end - segment.start
      for await (const chunk of openEntry(segment.index, segment.start, segment.end) as AsyncIterable<Uint8Array>) {
        const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)
        if (buf.length > remaining) throw new Error(`zip entry ${segment.index} is longer than its declared size`)
        remaining -= buf.length
        if (buf.length > 0) yield buf
      }
      if (remaining !== 0) throw new Error(`zip entry ${segment.index} is shorter than its declared size`)
    }
  }
  return Readable.from(bytes(), { objectMode: false })
}

function checkEntry(entry: ZipEntry, index: number): void {
  if (!Number.isSafeInteger(entry.size) || entry.size < 0) throw new RangeError(`zip entry ${index}: bad size`)
  if (!Number.isInteger(entry.crc32) || entry.crc32 < 0 || entry.crc32 > MAX_U32) {
    throw new RangeError(`zip entry ${index}: bad crc32`)
  }
  const nameBytes = Buffer.byteLength(entry.name, 'utf8')
  if (nameBytes === 0 || nameBytes > MAX_U16) throw new RangeError(`zip entry ${index}: bad name length`)
  if (Number.isNaN(entry.mtime.getTime())) throw new RangeError(`zip entry ${index}: bad mtime`)
}

function localHeader(entry: ZipEntry, name: Buffer): Buffer {
  // In a local header the ZIP64 extra, when present, must hold both sizes.
  const zip64 = entry.size >= MAX_U32
  const extras = [unixTimeExtra(entry.mtime)]
  if (zip64) extras.unshift(zip64Extra([entry.size, entry.size]))
  const extra = Buffer.concat(extras)
  const buf = Buffer.alloc(LOCAL_FIXED + name.length + extra.length)
  const { time, date } = dosDateTime(entry.mtime)
  buf.writeUInt32LE(SIG_LOCAL, 0)
  buf.writeUInt16LE(zip64 ? VERSION_ZIP64 : VERSION_DEFAULT, 4)
  buf.writeUInt16LE(FLAG_UTF8, 6)
  buf.writeUInt16LE(0, 8) // stored
  buf.writeUInt16LE(time, 10)
  buf.writeUInt16LE(date, 12)
  buf.writeUInt32LE(entry.crc32, 14)
  buf.writeUInt32LE(zip64 ? MAX_U32 : entry.size, 18)
  buf.writeUInt32LE(zip64 ? MAX_U32 : entry.size, 22)
  buf.writeUInt16LE(name.length, 26)
  buf.writeUInt16LE(extra.length, 28)
  name.copy(buf, LOCAL_FIXED)
  extra.copy(buf, LOCAL_FIXED + name.length)
  return buf
}

function centralHeader(entry: ZipEntry, name: Buffer, localOffset: number): Buffer {
  // In the central directory the ZIP64 extra holds only the fields that overflowed, in this order.
  const bigSize = entry.size >= MAX_U32
  const bigOffset = localOffset >= MAX_U32
  const wide = bigSize ? [entry.size, entry.size] : []
  if (bigOffset) wide.push(localOffset)
  const zip64 = wide.length > 0
  const extras = [unixTimeExtra(entry.mtime)]
  if (zip64) extras.unshift(zip64Extra(wide))
  const extra = Buffer.concat(extras)
  const version = zip64 ? VERSION_ZIP64 : VERSION_DEFAULT
  const buf = Buffer.alloc(CENTRAL_FIXED + name.length + extra.length)
  const { time, date } = dosDateTime(entry.mtime)
  buf.writeUInt32LE(SIG_CENTRAL, 0)
  buf.writeUInt16LE(MADE_BY_UNIX | version, 4)
  buf.writeUInt16LE(version, 6)
  buf.writeUInt16LE(FLAG_UTF8, 8)
  buf.writeUInt16LE(0, 10) // stored
  buf.writeUInt16LE(time, 12)
  buf.writeUInt16LE(date, 14)
  buf.writeUInt32LE(entry.crc32, 16)
  buf.writeUInt32LE(bigSize ? MAX_U32 : entry.size, 20)
  buf.writeUInt32LE(bigSize ? MAX_U32 : entry.size, 24)
  buf.writeUInt16LE(name.length, 28)
  buf.writeUInt16LE(extra.length, 30)
  buf.writeUInt16LE(0, 32) // comment length
  buf.writeUInt16LE(0, 34) // disk number
  buf.writeUInt16LE(0, 36) // internal attributes
  buf.writeUInt32LE((UNIX_FILE_MODE << 16) >>> 0, 38)
  buf.writeUInt32LE(bigOffset ? MAX_U32 : localOffset, 42)
  name.copy(buf, CENTRAL_FIXED)
  extra.copy(buf, CENTRAL_FIXED + name.length)
  return buf
}

function endRecords(count: number, centralOffset: number, centralSize: number): Buffer {
  const zip64 = count >= MAX_U16 || centralOffset >= MAX_U32 || centralSize >= MAX_U32
  const end = Buffer.alloc(END_SIZE)
  end.writeUInt32LE(SIG_END, 0)
  end.writeUInt16LE(0, 4) // this disk
  end.writeUInt16LE(0, 6) // disk holding the central directory
  end.writeUInt16LE(Math.min(count, MAX_U16), 8)
  end.writeUInt16LE(Math.min(count, MAX_U16), 10)
  end.writeUInt32LE(Math.min(centralSize, MAX_U32), 12)
  end.writeUInt32LE(Math.min(centralOffset, MAX_U32), 16)
  end.writeUInt16LE(0, 20) // comment length
  if (!zip64) return end

  const zip64End = Buffer.alloc(ZIP64_END_SIZE)
  zip64End.writeUInt32LE(SIG_ZIP64_END, 0)
  writeU64(zip64End, ZIP64_END_SIZE - 12, 4) // size of the rest of this record
  zip64End.writeUInt16LE(MADE_BY_UNIX | VERSION_ZIP64, 12)
  zip64End.writeUInt16LE(VERSION_ZIP64, 14)
  zip64End.writeUInt32LE(0, 16)
  zip64End.writeUInt32LE(0, 20)
  writeU64(zip64End, count, 24)
  writeU64(zip64End, count, 32)
  writeU64(zip64End, centralSize, 40)
  writeU64(zip64End, centralOffset, 48)

  const locator = Buffer.alloc(ZIP64_LOCATOR_SIZE)
  locator.writeUInt32LE(SIG_ZIP64_LOCATOR, 0)
  locator.writeUInt32LE(0, 4) // disk holding the ZIP64 end record
  writeU64(locator, centralOffset + centralSize, 8)
  locator.writeUInt32LE(1, 16) // total disks
  return Buffer.concat([zip64End, locator, end])
}

function zip64Extra(values: number[]): Buffer {
  const buf = Buffer.alloc(4 + 8 * values.length)
  buf.writeUInt16LE(EXTRA_ZIP64, 0)
  buf.writeUInt16LE(8 * values.length, 2)
  values.forEach((value, i) => writeU64(buf, value, 4 + 8 * i))
  return buf
}

function unixTimeExtra(mtime: Date): Buffer {
  const seconds = Math.floor(mtime.getTime() / 1000)
  if (seconds < 0 || seconds > MAX_U32) return Buffer.alloc(0)
  const buf = Buffer.alloc(9)
  buf.writeUInt16LE(EXTRA_UNIX_TIME, 0)
  buf.writeUInt16LE(5, 2)
  buf.writeUInt8(1, 4) // flags: modification time present
  buf.writeUInt32LE(seconds, 5)
  return buf
}

/** MS-DOS date and time, in UTC so an archive is the same bytes in every time zone (the UT extra field
 *  carries the exact mtime for unzip); clamped to the years DOS can hold. */
export function dosDateTime(mtime: Date): { time: number; date: number } {
  const year = mtime.getUTCFullYear()
  if (year < 1980) return { time: 0, date: (1 << 5) | 1 } // 1980-01-01 00:00
  if (year > 2107) return { time: (23 << 11) | (59 << 5) | 29, date: (127 << 9) | (12 << 5) | 31 }
  const time = (mtime.getUTCHours() << 11) | (mtime.getUTCMinutes() << 5) | (mtime.getUTCSeconds() >> 1)
  const date = ((year - 1980) << 9) | ((mtime.getUTCMonth() + 1) << 5) | mtime.getUTCDate()
  return { time, date }
}

function writeU64(buf: Buffer, value: number, at: number): void {
  buf.writeBigUInt64LE(BigInt(value), at)
}

function firstPartAt(parts: readonly Part[], position: number): number {
  let lo = 0
  let hi = parts.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (parts[mid]!.offset <= position) lo = mid
    else hi = mid - 1
  }
  return lo
}
