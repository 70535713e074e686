// The check of a disk cache block: what the cache stores beside a block when it writes it,
// and holds the bytes against every time it reads them back. It must catch what happens to
// a file between a write and a read (a crash that leaves a record's bytes zeroed or half
// written, a flipped bit, bytes of another record or another file where these should be)
// and cost little: a re-read from the cache checks every byte it serves, and CRC-32
// (node:zlib, ~3 GB/s on one core here, no carry-less multiply in Node's build) was about a
// sixth of a re-read's CPU.
//
// The sum: the block, zero-padded to 16 bytes, is taken as 32-bit little-endian words in
// four lanes (word i in lane i mod 4); each lane keeps, in 64-bit integers, the sum of its
// words S1 and the sum of its running sums S2 (Fletcher's checksum without a modulus).
// The check is all eight, 64 bytes; the block's length is checked beside it. For a block of
// up to 1 MiB a lane has at most 2^16 words, so S1 < 2^48 and S2 < 2^64: both are exact,
// nothing wraps (for larger blocks S2 wraps, and what follows still holds below 16 GiB).
// What follows for bytes that differ from those summed:
// - a change to one word of a lane (any bits of 4 bytes, one flipped bit) changes S1;
// - a change to two words of a lane that leaves S1 alone (+d at one, -d at the other)
//   changes S2 by d times their distance, below 2^62 and never 0;
// - bytes zeroed (a torn write), in any number of words: S1 only falls, as words are
//   unsigned, so it differs unless they were zero already;
// - other bytes in place of these (another block, a shifted offset) match only if all
//   eight sums do, a far smaller chance than the 2^-32 of CRC-32.
// Only a change made to cancel out (three or more words of one lane in a chosen relation)
// passes, as a chosen change passes CRC-32: the check is against accident, not intent.
// It runs in WebAssembly with 128-bit vectors at ~20 GB/s, on the bytes where they lie when
// they are in the module's memory (sumMemory), else copied in: a sixth, or a third, of
// CRC-32's CPU. Fetched blocks live in memory shared with the hashing threads (they read
// them there too); blocks loaded from disk in plain memory, which V8 copies out at memcpy's
// speed (it copies shared memory word by word).

/** The few WebAssembly names used here (the project's TypeScript libraries do not declare them). */
interface WasmMemory { buffer: ArrayBufferLike }
declare const WebAssembly: {
  Memory: new (descriptor: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory
  Module: new (bytes: Uint8Array) => object
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> }
}

/** Bytes of a block's check. */
export const BLOCK_SUM_BYTES = 64

/**
 * The module, assembled from:
 *   (import "m" "mem" (memory 1))
 *   (func (export "sum") (param $p i32) (param $n i32) (param $s i32)
 *     (local $s1a v128) (local $s2a v128) (local $s1b v128) (local $s2b v128) (local $v v128)
 *     $n := $p + $n   ;; the end
 *     load the four sums from bytes $s, $s + 16, $s + 32, $s + 48
 *     loop while $p < $n:
 *       $v := v128.load $p
 *       $s1a += i64x2.extend_low_i32x4_u $v;  $s2a += $s1a   ;; lanes 0 and 1
 *       $s1b += i64x2.extend_high_i32x4_u $v; $s2b += $s1b   ;; lanes 2 and 3
 *       $p += 16
 *     store the four sums back)
 * The sums live at $s, so that threads summing blocks of the same memory at once (this one
 * and the hashing threads: WORKER_SUM_SOURCE) each keep their own.
 */
const MODULE = Buffer.from(
  'AGFzbQEAAAABBwFgA39/fwACCgEBbQNtZW0CAAEDAgEABwcBA3N1bQAACpIBAY8BAQV7IAAgAWohASAC/QAEACEDIAL9AAQQIQQgAv0ABCAhBSAC/QAEMCEGAkADQCAAIAFPDQEgAP0ABAAhByADIAf9yQH9zgEiAyAE/c4BIQQgBSAH/coB/c4BIgUgBv3OASEGIABBEGohAAwACwsgAiAD/QsEACACIAT9CwQQIAIgBf0LBCAgAiAG/QsEMAs=',
  'base64',
)

/** Bytes copied into the module's memory at a time: small enough to stay in the CPU's cache. */
const CHUNK = 64 * 1024
/** A memory's first bytes hold the sums, then room for a last, partial vector. */
const STATE_BYTES = BLOCK_SUM_BYTES + 16
/** Where a sum memory's bytes start (sumMemory): one system page in, past the state. */
const SUM_MEMORY_START = 4096
const PAGE = 64 * 1024
/** The module's import section, and the same importing a shared memory: (memory 1 65536 shared). */
const PLAIN_IMPORT = Buffer.from('020a01016d036d656d020001', 'hex')
const SHARED_IMPORT = Buffer.from('020d01016d036d656d020301808004', 'hex')
const at = MODULE.indexOf(PLAIN_IMPORT)
const SHARED_MODULE = Buffer.concat([MODULE.subarray(0, at), SHARED_IMPORT, MODULE.subarray(at + PLAIN_IMPORT.length)])
const compiled = {
  plain: new WebAssembly.Module(MODULE),
  shared: new WebAssembly.Module(SHARED_MODULE),
}

/** One instance of the module with its memory: the sums at its start, then `bytes` more. */
class Summer {
  readonly view: Buffer
  readonly state: Buffer
  readonly memory: WasmMemory
  private readonly sumAt: (at: number, length: number, state: number) => void

  constructor(bytes: number, shared: boolean) {
    const pages = Math.ceil((SUM_MEMORY_START + bytes) / PAGE)
    const memory = new WebAssembly.Memory(shared ? { initial: pages, maximum: pages, shared } : { initial: pages })
    this.memory = memory
    this.sumAt = new WebAssembly.Instance(shared ? compiled.shared : compiled.plain, { m: { mem: memory } }).exports.sum as (at: number, length: number, state: number) => void
    this.view = Buffer.from(memory.buffer)
    this.state = this.view.subarray(0, BLOCK_SUM_BYTES)
  }

  /** Adds `length` bytes at `at` of this memory, whole vectors, to the sums. */
  sum(at: number, length: number): void {
    this.sumAt(at, length, 0)
  }

  /** Adds the last `n` (< 16) bytes of `bytes`, zero-padded to a vector. */
  sumTail(bytes: Buffer, n: number): void {
    this.view.fill(0, BLOCK_SUM_BYTES, STATE_BYTES)
    bytes.copy(this.view, BLOCK_SUM_BYTES, bytes.length - n)
    this.sumAt(BLOCK_SUM_BYTES, 16, 0)
  }
}

/** For bytes anywhere: copied in, a chunk at a time. */
let copyingSummer: Summer | null = null
/** Made at first use, not when this module loads: see sumMemoryError. */
const copyingOne = (): Summer => (copyingSummer ??= new Summer(CHUNK, false))
/** Memories of sumMemory: bytes in one are summed where they lie. */
const arenas = new WeakMap<ArrayBufferLike, Summer>()

/**
 * Why WebAssembly memory cannot be had here, or null. V8 reserves ~10 GiB of address space
 * per memory (guard regions), so under an address-space limit (`ulimit -v`, RLIMIT_AS)
 * every one fails, and with it the block check and the block slots: the read path says so
 * at start instead of failing its reads.
 */
export function sumMemoryError(): Error | null {
  try {
    copyingOne()
    return null
  } catch (e) {
    return new Error(`the read path cannot reserve WebAssembly memory for its block buffers (${(e as Error).message}); is an address-space limit set (ulimit -v)? transferfs needs it unlimited`)
  }
}

/**
 * `bytes` bytes whose check runs on them where they are, with no copy, in memory shared
 * with other threads or not. They start a system page into the module's memory, which
 * itself starts on a page, so they are page-aligned, as O_DIRECT asks of the memory it
 * moves. Their pages are taken from the system as they are first written.
 */
export function sumMemory(bytes: number, shared: boolean): Buffer {
  const summer = new Summer(bytes, shared)
  arenas.set(summer.view.buffer, summer)
  return summer.view.subarray(SUM_MEMORY_START, SUM_MEMORY_START + bytes)
}

/** Sums the parts' bytes in order, as one run of bytes; the summer whose state holds the sums. */
function run(parts: Buffer | readonly Buffer[]): Summer {
  const one = Buffer.isBuffer(parts) ? parts : parts.length === 1 ? parts[0]! : null
  const arena = one && arenas.get(one.buffer)
  if (one && arena) {
    arena.state.fill(0)
    const whole = one.length & ~15
    if (whole > 0) arena.sum(one.byteOffset, whole)
    if (whole < one.length) arena.sumTail(one, one.length - whole)
    return arena
  }
  const copying = copyingOne()
  const { view, state } = copying
  state.fill(0)
  let filled = 0
  for (const part of Buffer.isBuffer(parts) ? [parts] : parts) {
    for (let at = 0; at < part.length;) {
      const n = Math.min(CHUNK - filled, part.length - at)
      part.copy(view, STATE_BYTES + filled, at, at + n)
      filled += n
      at += n
      if (filled === CHUNK) {
        copying.sum(STATE_BYTES, CHUNK)
        filled = 0
      }
    }
  }
  if (filled > 0) {
    const padded = Math.ceil(filled / 16) * 16
    view.fill(0, STATE_BYTES + filled, STATE_BYTES + padded)
    copying.sum(STATE_BYTES, padded)
  }
  return copying
}

/** The check of the bytes (parts taken as one run of bytes), a new 64-byte buffer. */
export function blockSum(parts: Buffer | readonly Buffer[]): Buffer {
  return Buffer.from(run(parts).state)
}

/** Whether the bytes' check is `sum`. */
export function blockSumIs(bytes: Buffer, sum: Buffer): boolean {
  return run(bytes).state.equals(sum)
}

/** The shared memory `bytes` lie in, when it is a sum memory (sumMemory): what a hashing thread sums them in. */
export function sharedSumMemoryOf(bytes: Buffer): WasmMemory | undefined {
  const memory = arenas.get(bytes.buffer)?.memory
  return memory && memory.buffer instanceof SharedArrayBuffer ? memory : undefined
}

/**
 * Checks worked out elsewhere (a hashing thread sums each block of a piece right after its
 * MD5, while the bytes are still in that core's cache) for the blocks they belong to: the
 * disk cache takes a block's check from here instead of reading it all again to sum it,
 * which cost ~0.19 CPU-s per GiB on a cold read (the bytes long out of any cache by then).
 * Kept by the block (its list of parts, which is never changed), so it goes with it.
 */
const knownSums = new WeakMap<readonly Buffer[], Buffer>()

/** `sum` is the check of `block`'s bytes, worked out already. */
export function noteBlockSum(block: readonly Buffer[], sum: Buffer): void {
  knownSums.set(block, sum)
}

/** The check of `block` worked out already (noteBlockSum), if it was. */
export function knownBlockSum(block: readonly Buffer[]): Buffer | undefined {
  return knownSums.get(block)
}

/**
 * Where hashing threads keep their sums in a shared sum memory: in its first page, past this
 * thread's state (bytes 0-79), `count` places of `stride` bytes from `at`, each taken by a
 * thread for one block with a compare-and-swap on its 32-bit word from `claimsAt`.
 */
const WORKER_STATES = { claimsAt: 1024, at: 2048, stride: 128, count: 16 }

/**
 * Script for a hashing thread (piece-hash.ts): defines `blockSummer(memory)`, which sums a
 * block of a shared sum memory by pieces as they are hashed (`add(at, n)`, whole vectors
 * only, then `finish(at, n)` with the last n < 16 bytes) into the same check as blockSum;
 * null when every state place is taken (the disk cache sums the block itself then).
 */
export const WORKER_SUM_SOURCE = `
const SUM_MODULE = new WebAssembly.Module(Buffer.from('${SHARED_MODULE.toString('base64')}', 'base64'))
const SUM_STATES = ${JSON.stringify(WORKER_STATES)}
function blockSummer(memory) {
  const claims = new Int32Array(memory.buffer, SUM_STATES.claimsAt, SUM_STATES.count)
  let i = 0
  while (i < SUM_STATES.count && Atomics.compareExchange(claims, i, 0, 1) !== 0) i++
  if (i === SUM_STATES.count) return null
  const state = SUM_STATES.at + i * SUM_STATES.stride
  const bytes = new Uint8Array(memory.buffer)
  bytes.fill(0, state, state + ${STATE_BYTES})
  const sum = new WebAssembly.Instance(SUM_MODULE, { m: { mem: memory } }).exports.sum
  return {
    add(at, n) { sum(at, n, state) },
    finish(at, n) {
      if (n > 0) {
        bytes.fill(0, state + ${BLOCK_SUM_BYTES}, state + ${STATE_BYTES})
        bytes.copyWithin(state + ${BLOCK_SUM_BYTES}, at, at + n)
        sum(state + ${BLOCK_SUM_BYTES}, 16, state)
      }
      return bytes.slice(state, state + ${BLOCK_SUM_BYTES})
    },
    release() { Atomics.store(claims, i, 0) },
  }
}
`
