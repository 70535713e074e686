// ONC RPC record marking over TCP (RFC 5531, section 11): each record is one or more
// fragments, each behind a 4-byte mark whose top bit says "last fragment" and whose other 31
// bits give its length. A record longer than the server takes ends the connection before any
// of it is buffered, so a length of 4 GiB costs nothing.

export class RecordError extends Error {
  override readonly name = 'RecordError'
}

const LAST_FRAGMENT = 0x8000_0000
const LENGTH_MASK = 0x7fff_ffff

/** Splits a byte stream into whole records, as they complete. */
export class RecordReader {
  /** Bytes received and not yet taken, in arrival order. */
  private chunks: Buffer[] = []
  private buffered = 0
  /** The fragments of the record being read. */
  private fragments: Buffer[] = []
  private recordBytes = 0
  /** The current fragment's length and whether it ends its record, once its mark is read. */
  private fragment: { length: number; last: boolean } | null = null

  constructor(private readonly maxRecordBytes: number) {}

  /** The records `data` completes (often none, sometimes several); throws RecordError for a record past the limit. */
  push(data: Buffer): Buffer[] {
    if (data.length > 0) {
      this.chunks.push(data)
      this.buffered += data.length
    }
    const records: Buffer[] = []
    for (;;) {
      if (!this.fragment) {
        if (this.buffered < 4) break
        const mark = this.take(4).readUInt32BE(0)
        const length = mark & LENGTH_MASK
        if (this.recordBytes + length > this.maxRecordBytes) {
          throw new RecordError(`a record of more than ${this.maxRecordBytes} bytes (a fragment of ${length} after ${this.recordBytes})`)
        }
        this.fragment = { length, last: (mark & LAST_FRAGMENT) !== 0 }
      }
      if (this.buffered < this.fragment.length) break
      if (this.fragment.length > 0) this.fragments.push(this.take(this.fragment.length))
      this.recordBytes += this.fragment.length
      const last = this.fragment.last
      this.fragment = null
      if (last) {
        records.push(this.fragments.length === 1 ? (this.fragments[0] as Buffer) : Buffer.concat(this.fragments, this.recordBytes))
        this.fragments = []
        this.recordBytes = 0
      }
    }
    return records
  }

  /** True while part of a record is held (a connection that ends now ends mid-record). */
  get midRecord(): boolean {
    return this.buffered > 0 || this.fragment !== null || this.recordBytes > 0
  }

  /** The next n buffered bytes (n <= buffered), copied only when they span chunks. */
  private take(n: number): Buffer {
    const first = this.chunks[0] as Buffer
    if (first.length >= n) {
      const out = first.subarray(0, n)
      if (first.length === n) this.chunks.shift()
      else this.chunks[0] = first.subarray(n)
      this.buffered -= n
      return out
    }
    const out = Buffer.allocUnsafe(n)
    let filled = 0
    while (filled < n) {
      const c = this.chunks[0] as Buffer
      const part = Math.min(c.length, n - filled)
      c.copy(out, filled, 0, part)
      filled += part
      if (part === c.length) this.chunks.shift()
      else this.chunks[0] = c.subarray(part)
    }
    this.buffered -= n
    return out
  }
}

/** One record as a single last fragment: the mark written into the first 4 bytes, which the caller left free. */
export function markRecord(withRoom: Buffer): Buffer {
  if (withRoom.length - 4 > LENGTH_MASK) throw new RangeError('record too long for one fragment')
  withRoom.writeUInt32BE((LAST_FRAGMENT | (withRoom.length - 4)) >>> 0, 0)
  return withRoom
}
