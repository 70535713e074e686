// The MD5 of a piece, worked out off the main thread. MD5 is synchronous and was the
// largest single cost of the mount's main thread on a cold read, while that thread also
// has to feed FUSE and the sockets. A piece's bytes are already in shared memory (its
// blocks' pooled buffers: block-buffers.ts), so a worker thread hashes them where they
// are once the piece is complete.
import { availableParallelism } from 'node:os'
import { WorkerPool } from '../base/worker-pool.js'

/** Worker threads hashing pieces (one keeps up with a link of ~700 MB/s). */
const WORKERS = Math.min(2, availableParallelism())

/** One block of a piece: the shared memory it is in, and how many of its bytes are the piece's. */
export interface PiecePart {
  memory: Buffer
  length: number
}

type HashJob = { parts: Array<{ sab: SharedArrayBuffer; offset: number; length: number }> }

const HANDLER = `
const { createHash } = require('node:crypto')
function handle({ parts }) {
  const md5 = createHash('md5')
  for (const { sab, offset, length } of parts) md5.update(new Uint8Array(sab, offset, length))
  return md5.digest('hex')
}
`

let workers: WorkerPool<HashJob, string> | null = null

/** The process's hashing threads, made on first use. */
function pool(): WorkerPool<HashJob, string> {
  return (workers ??= new WorkerPool<HashJob, string>(HANDLER, WORKERS))
}

/** Starts the hashing threads now: a mount's first read (a file manager's first peek) would otherwise wait for them. */
export function warmPieceHashers(): void {
  pool().warm()
}

/** The lowercase hex MD5 of the parts' bytes in order. */
export function pieceMd5(parts: readonly PiecePart[]): Promise<string> {
  return pool().run({
    parts: parts.map((p) => ({ sab: p.memory.buffer as SharedArrayBuffer, offset: p.memory.byteOffset, length: p.length })),
  })
}
