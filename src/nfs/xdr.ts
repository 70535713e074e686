// XDR (RFC 4506): the big-endian, 4-byte-aligned encoding every RPC message of the NFS
// server is written in. The reader throws XdrError on anything short or out of bounds, so a
// malformed call becomes GARBAGE_ARGS (rpc.ts) and never a crash or an oversized allocation.

export class XdrError extends Error {
  override readonly name = 'XdrError'
}

const pad = (n: number): number => (4 - (n & 3)) & 3

/** Reads XDR items in order from one buffer (an RPC record). */
export class XdrReader {
  private at = 0

  constructor(private readonly buf: Buffer) {}

  get remaining(): number {
    return this.buf.length - this.at
  }

  private need(n: number): number {
    if (n > this.buf.length - this.at) throw new XdrError(`XDR: ${n} bytes wanted, ${this.buf.length - this.at} left`)
    const at = this.at
    this.at += n
    return at
  }

  uint32(): number {
    return this.buf.readUInt32BE(this.need(4))
  }

  int32(): number {
    return this.buf.readInt32BE(this.need(4))
  }

  /** An unsigned hyper as a number: offsets and sizes of files stay far below 2^53. */
  uint64(): number {
    const v = this.buf.readBigUInt64BE(this.need(8))
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new XdrError('XDR: a 64-bit value past 2^53')
    return Number(v)
  }

  /** A 64-bit value kept exact (cookies, verifiers). */
  bigUint64(): bigint {
    return this.buf.readBigUInt64BE(this.need(8))
  }

  bool(): boolean {
    const v = this.uint32()
    if (v > 1) throw new XdrError(`XDR: ${v} is not a boolean`)
    return v === 1
  }

  /** Fixed-length opaque data: a view into the record, not a copy. */
  fixed(n: number): Buffer {
    const at = this.need(n + pad(n))
    return this.buf.subarray(at, at + n)
  }

  /** Variable-length opaque data of at most `max` bytes: a view into the record. */
  opaque(max: number): Buffer {
    const n = this.uint32()
    if (n > max) throw new XdrError(`XDR: ${n} bytes of opaque data, at most ${max} allowed`)
    return this.fixed(n)
  }

  /** A string of at most `max` bytes, as UTF-8. */
  string(max: number): string {
    return this.opaque(max).toString('utf8')
  }

  /** The rest of the record must be empty: a call with bytes left over is malformed. */
  end(): void {
    if (this.remaining !== 0) throw new XdrError(`XDR: ${this.remaining} bytes past the end of the arguments`)
  }
}

/** Writes XDR items into a growing buffer. */
export class XdrWriter {
  private buf: Buffer
  private at = 0

  /** `initial`: the size of the first buffer, or the buffer itself (one used again: reply-buffers.ts). */
  constructor(initial: number | Buffer = 512) {
    this.buf = typeof initial === 'number' ? Buffer.allocUnsafe(initial) : initial
  }

  get length(): number {
    return this.at
  }

  private room(n: number): number {
    if (this.at + n > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n))
      this.buf.copy(next, 0, 0, this.at)
      this.buf = next
    }
    const at = this.at
    this.at += n
    return at
  }

  uint32(v: number): this {
    const at = this.room(4) // before this.buf is read: room() may replace it
    this.buf.writeUInt32BE(v >>> 0, at)
    return this
  }

  int32(v: number): this {
    const at = this.room(4)
    this.buf.writeInt32BE(v | 0, at)
    return this
  }

  uint64(v: number | bigint): this {
    const at = this.room(8)
    this.buf.writeBigUInt64BE(BigInt(v), at)
    return this
  }

  bool(v: boolean): this {
    return this.uint32(v ? 1 : 0)
  }

  /** Fixed-length opaque data, padded to 4 bytes. */
  fixed(data: Uint8Array): this {
    const at = this.room(data.length + pad(data.length))
    this.buf.set(data, at)
    this.buf.fill(0, at + data.length, this.at)
    return this
  }

  opaque(data: Uint8Array): this {
    return this.uint32(data.length).fixed(data)
  }

  /** Opaque data given in parts (the read path's bytes), written as one item. */
  opaqueParts(parts: readonly Uint8Array[]): this {
    const n = parts.reduce((sum, p) => sum + p.length, 0)
    this.uint32(n)
    const at = this.room(n + pad(n))
    let to = at
    for (const p of parts) {
      this.buf.set(p, to)
      to += p.length
    }
    this.buf.fill(0, to, this.at)
    return this
  }

  string(s: string): this {
    return this.opaque(Buffer.from(s, 'utf8'))
  }

  /** Writes over a word written before (a length or a record mark known only at the end). */
  patchUint32(at: number, v: number): void {
    if (at + 4 > this.at) throw new RangeError('patchUint32 past what was written')
    this.buf.writeUInt32BE(v >>> 0, at)
  }

  /** The bytes written so far (a view: the writer is not used after). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.at)
  }
}

/** Bytes an opaque item of n bytes takes, its length word included. */
export const opaqueSize = (n: number): number => 4 + n + pad(n)
