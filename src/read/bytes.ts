// File bytes as the read path hands them on: one buffer, or consecutive parts, views into
// the buffers the blocks live in (pooled ones: block-buffers.ts, disk-stream.ts), never a
// fresh copy per read: copying every byte into freshly allocated 1 MiB buffers cost a
// quarter of the mount's CPU on a cold sequential read, mostly in page faults. The one copy
// a read makes is into the kernel's buffer.

export type Bytes = Buffer | readonly Buffer[]

/** True for a Buffer or an array of Buffers (what a core's read may answer). */
export function isBytes(v: unknown): v is Bytes {
  return Buffer.isBuffer(v) || (Array.isArray(v) && v.every((b) => Buffer.isBuffer(b)))
}

export function bytesLength(bytes: Bytes): number {
  if (Buffer.isBuffer(bytes)) return bytes.length
  let n = 0
  for (const b of bytes) n += b.length
  return n
}

/** Bytes [from, to) of consecutive parts as views into them (no copy). */
export function sliceParts(parts: readonly Buffer[], from: number, to: number): Buffer[] {
  const out: Buffer[] = []
  let at = 0
  for (const p of parts) {
    const end = at + p.length
    if (end > from && at < to) out.push(p.subarray(Math.max(0, from - at), Math.min(p.length, to - at)))
    at = end
    if (at >= to) break
  }
  return out
}

/**
 * Copies as much of `from` as fits into `target` at `at`; the number of bytes copied. Through
 * Buffer#fill, whose C++ side is one memcpy: Buffer#copy has V8 copy memory shared with other
 * threads (the block slots) word by word, at about half the speed.
 */
export function copyInto(from: Buffer, target: Buffer, at: number): number {
  const n = Math.min(from.length, target.length - at)
  if (n > 0) target.fill(from, at, at + n)
  return Math.max(0, n)
}

/** Copies the bytes into `target` from its start; the number of bytes copied. */
export function copyBytes(bytes: Bytes, target: Buffer): number {
  if (Buffer.isBuffer(bytes)) return copyInto(bytes, target, 0)
  let at = 0
  for (const b of bytes) at += copyInto(b, target, at)
  return at
}

/** Bytes lent out of buffers their owner wants back once they are copied: what giveBack returns. */
const lent = new WeakMap<object, () => void>()

/**
 * Marks `parts` as lent: whoever copies them out (the FUSE adapter, into the kernel's buffer)
 * calls giveBack after the copy. A caller that never does only leaves the buffers to the GC.
 */
export function lend(parts: Buffer[], back: () => void): Buffer[] {
  lent.set(parts, back)
  return parts
}

/** The bytes were copied (or will never be): their buffers may be used again. */
export function giveBack(bytes: Bytes): void {
  const back = lent.get(bytes)
  if (!back) return
  lent.delete(bytes)
  back()
}

/** One buffer of the bytes (a copy when there are several parts): for callers that need one. */
export function toBuffer(bytes: Bytes): Buffer {
  if (Buffer.isBuffer(bytes)) return bytes
  return bytes.length === 1 ? bytes[0]! : Buffer.concat(bytes as Buffer[])
}
