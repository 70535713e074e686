// The MD5 of a piece, worked out off the main thread. MD5 is synchronous and was the
// largest single cost of the mount's main thread on a cold read, while that thread also
// has to feed FUSE and the sockets. A piece's bytes are already in shared memory (its
// blocks' pooled buffers: block-buffers.ts), so a worker thread hashes them where they
// are once the piece is complete. It sums each block for the disk cache's check as it goes
// (block-sum.ts: noteBlockSum), a stretch at a time right after hashing it, while the
// stretch is still in the core's cache.
import { availableParallelism } from 'node:os'
import { WorkerPool } from '../base/worker-pool.js'
import { sharedSumMemoryOf, WORKER_SUM_SOURCE } from './block-sum.js'

/** Worker threads hashing pieces (one keeps up with a link of ~700 MB/s). */
const WORKERS = Math.min(2, availableParallelism())

/** One block of a piece: the shared memory it is in, and how many of its bytes are the piece's. */
export interface PiecePart {
  memory: Buffer
  length: number
}

/** A piece's MD5, and the check of each of its blocks (block-sum.ts), null where not worked out. */
export interface PieceHash {
  md5: string
  sums: Array<Buffer | null>
}

/** Bytes hashed, then summed, at a time: well within a core's own cache. */
const STRETCH = 64 * 1024

type HashJob = { parts: Array<{ sab: SharedArrayBuffer; offset: number; length: number; memory?: object }>; stretch: number }
type HashReply = { md5: string; sums: Array<Uint8Array | null> }

const HANDLER = `
const { createHash } = require('node:crypto')
${WORKER_SUM_SOURCE}
function handle({ parts, stretch }) {
  const md5 = createHash('md5')
  const sums = []
  for (const { sab, offset, length, memory } of parts) {
    const summer = memory ? blockSummer(memory) : null
    try {
      for (let at = 0; at < length; at += stretch) {
        const n = Math.min(stretch, length - at)
        md5.update(new Uint8Array(sab, offset + at, n))
        // Whole vectors (a stretch is a multiple of 16 bytes); the last few bytes at the end.
        if (summer) summer.add(offset + at, n & ~15)
      }
      sums.push(summer ? summer.finish(offset + (length & ~15), length & 15) : null)
    } finally {
      if (summer) summer.release()
    }
  }
  return { md5: md5.digest('hex'), sums }
}
`

let workers: WorkerPool<HashJob, HashReply> | null = null

/** The process's hashing threads, made on first use. */
function pool(): WorkerPool<HashJob, HashReply> {
  return (workers ??= new WorkerPool<HashJob, HashReply>(HANDLER, WORKERS))
}

/** Starts the hashing threads now: a mount's first read (a file manager's first peek) would otherwise wait for them. */
export function warmPieceHashers(): void {
  pool().warm()
}

/**
 * The lowercase hex MD5 of the parts' bytes in order, and each part's check (the first
 * `length` bytes of its memory, as the disk cache stores a block) where its memory is a
 * shared sum memory.
 */
export async function pieceHash(parts: readonly PiecePart[]): Promise<PieceHash> {
  const { md5, sums } = await pool().run({
    parts: parts.map((p) => ({ sab: p.memory.buffer as SharedArrayBuffer, offset: p.memory.byteOffset, length: p.length, memory: sharedSumMemoryOf(p.memory) })),
    stretch: STRETCH,
  })
  return { md5, sums: sums.map((s) => (s ? Buffer.from(s.buffer, s.byteOffset, s.byteLength) : null)) }
}
