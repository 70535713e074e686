// The check of a disk cache block: what the cache stores beside a block when it writes it,
// and holds the bytes against every time it reads them back. It must catch what happens to
// a file between a write and a read (a crash that leaves a record's bytes zeroed or half
// written, a flipped bit, bytes of another record or another file where these should be)
// and cost little: a re-read from the cache checks every byte it serves, and CRC-32
// (node:zlib, ~3 GB/s on one core here, no carry-less multiply in Node's build) was a fifth
// of a re-read's CPU.
//
// The sum: the block, zero-padded to 16 bytes, is taken as 32-bit little-endian words in
// four lanes (word i in lane i mod 4); each lane keeps, in 64-bit integers, the sum of its
// words S1 and the sum of its running sums S2 (Fletcher's checksum without a modulus).
// The check is all eight, 64 bytes; the block's length is checked beside it. For a block of
// up to 1 MiB a lane has at most 2^16 words, so S1 < 2^48 and S2 < 2^64: both are exact,
// nothing wraps. What follows for bytes that differ from those summed:
// - a change to one word of a lane (any bits of 4 bytes, one flipped bit) changes S1;
// - a change to two words of a lane that leaves S1 alone (+d at one, -d at the other)
//   changes S2 by d times their distance, never 0;
// - bytes zeroed (a torn write), in any number of words: S1 only falls, as words are
//   unsigned, so it differs unless they were zero already;
// - other bytes in place of these (another block, a shifted offset) match only if all
//   eight sums do, a far smaller chance than the 2^-32 of CRC-32.
// Only a change made to cancel out (three or more words of one lane in a chosen relation)
// passes, as a chosen change passes CRC-32: the check is against accident, not intent.
// It runs in WebAssembly with 128-bit vectors at ~15 GB/s; with the copy into the module's
// memory that is about a third of CRC-32's CPU.

/** The few WebAssembly names used here (the project's TypeScript libraries do not declare them). */
declare const WebAssembly: {
  Memory: new (descriptor: { initial: number }) => { buffer: ArrayBuffer }
  Module: new (bytes: Uint8Array) => object
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> }
}

/** Bytes of a block's check. */
export const BLOCK_SUM_BYTES = 64

/**
 * The module, assembled from:
 *   (import "m" "mem" (memory 1))
 *   (func (export "sum") (param $p i32) (param $n i32)
 *     (local $s1a v128) (local $s2a v128) (local $s1b v128) (local $s2b v128) (local $v v128)
 *     $n := $p + $n   ;; the end
 *     load the four sums from bytes 0, 16, 32, 48
 *     loop while $p < $n:
 *       $v := v128.load $p
 *       $s1a += i64x2.extend_low_i32x4_u $v;  $s2a += $s1a   ;; lanes 0 and 1
 *       $s1b += i64x2.extend_high_i32x4_u $v; $s2b += $s1b   ;; lanes 2 and 3
 *       $p += 16
 *     store the four sums back)
 */
const MODULE = Buffer.from(
  'AGFzbQEAAAABBgFgAn9/AAIKAQFtA21lbQIAAQMCAQAHBwEDc3VtAAAKkgEBjwEBBXsgACABaiEBQQD9AAQAIQJBAP0ABBAhA0EA/QAEICEEQQD9AAQwIQUCQANAIAAgAU8NASAA/QAEACEGIAIgBv3JAf3OASICIAP9zgEhAyAEIAb9ygH9zgEiBCAF/c4BIQUgAEEQaiEADAALC0EAIAL9CwQAQQAgA/0LBBBBACAE/QsEIEEAIAX9CwQwCw==',
  'base64',
)

/** Bytes copied into the module's memory at a time: small enough to stay in the CPU's cache. */
const CHUNK = 64 * 1024
/** The sums live in the memory's first bytes; the chunk being summed follows them. */
const AT = BLOCK_SUM_BYTES

const memory = new WebAssembly.Memory({ initial: 2 })
const sumInto = new WebAssembly.Instance(new WebAssembly.Module(MODULE), { m: { mem: memory } }).exports.sum as (at: number, length: number) => void
const view = Buffer.from(memory.buffer)
const state = view.subarray(0, BLOCK_SUM_BYTES)

/** Sums the parts' bytes in order, as one run of bytes, into `state`. */
function run(parts: Buffer | readonly Buffer[]): void {
  state.fill(0)
  let filled = 0
  for (const part of Buffer.isBuffer(parts) ? [parts] : parts) {
    for (let at = 0; at < part.length;) {
      const n = Math.min(CHUNK - filled, part.length - at)
      part.copy(view, AT + filled, at, at + n)
      filled += n
      at += n
      if (filled === CHUNK) {
        sumInto(AT, CHUNK)
        filled = 0
      }
    }
  }
  if (filled === 0) return
  const padded = Math.ceil(filled / 16) * 16
  view.fill(0, AT + filled, AT + padded)
  sumInto(AT, padded)
}

/** The check of the bytes (parts taken as one run of bytes), a new 64-byte buffer. */
export function blockSum(parts: Buffer | readonly Buffer[]): Buffer {
  run(parts)
  return Buffer.from(state)
}

/** Whether the bytes' check is `sum`. */
export function blockSumIs(bytes: Buffer, sum: Buffer): boolean {
  run(bytes)
  return state.equals(sum)
}
