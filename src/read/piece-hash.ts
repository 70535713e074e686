// The MD5 of a piece as its bytes stream in, worked out off the main thread where it can
// be. MD5 is synchronous and was the largest single cost of the mount's main thread on a
// cold read (one update per network buffer, ~1.5 CPU-s per GiB), while that thread also
// has to feed FUSE and the sockets. Each piece's bytes are copied, as they arrive, into a
// staging buffer of shared memory (reused, so no fresh pages to fault in), and a worker
// thread hashes it once the piece is complete. The network buffers themselves stay what
// the caches keep. When every staging buffer is taken, the piece is hashed on the main
// thread, as the bytes arrive: never a wait for a buffer.
import { createHash, type Hash } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { WorkerPool } from '../base/worker-pool.js'

/** Pieces hashed off the main thread at once; more are hashed on it. */
export const STAGING_BUFFERS = 8
/** Worker threads hashing pieces (one keeps up with a link of ~700 MB/s). */
const WORKERS = Math.min(2, availableParallelism())

export interface PieceHash {
  update(data: Buffer): void
  /** The lowercase hex MD5 of everything given to update. Call once. */
  digest(): Promise<string>
  /** The piece was abandoned: give back what it holds. */
  dispose(): void
}

const HANDLER = `
const { createHash } = require('node:crypto')
function handle({ sab, length }) {
  return createHash('md5').update(new Uint8Array(sab, 0, length)).digest('hex')
}
`

class MainThreadHash implements PieceHash {
  private readonly hash: Hash = createHash('md5')
  update(data: Buffer): void {
    this.hash.update(data)
  }
  digest(): Promise<string> {
    return Promise.resolve(this.hash.digest('hex'))
  }
  dispose(): void {}
}

class StagedHash implements PieceHash {
  private filled = 0
  private given = false

  constructor(
    private readonly staging: Buffer,
    private readonly hashers: PieceHashers,
  ) {}

  update(data: Buffer): void {
    this.filled += data.copy(this.staging, this.filled)
  }

  digest(): Promise<string> {
    this.given = true
    return this.hashers.pool
      .run({ sab: this.staging.buffer as SharedArrayBuffer, length: this.filled })
      .finally(() => this.hashers.giveBack(this.staging))
  }

  dispose(): void {
    if (this.given) return
    this.given = true
    this.hashers.giveBack(this.staging)
  }
}

type HashJob = { sab: SharedArrayBuffer; length: number }
let workers: WorkerPool<HashJob, string> | null = null

export class PieceHashers {
  /** One pool of worker threads for the whole process, made on first use. */
  get pool(): WorkerPool<HashJob, string> {
    return (workers ??= new WorkerPool<HashJob, string>(HANDLER, WORKERS))
  }

  private readonly free: Buffer[] = []
  private made = 0

  constructor(private readonly pieceSize: number) {
    // A mount's first read (a file manager's first peek) would otherwise wait for the workers to start.
    this.pool.warm()
  }

  /** A hash for a piece of `length` bytes (at most pieceSize). */
  open(length: number): PieceHash {
    if (length > this.pieceSize) return new MainThreadHash()
    let staging = this.free.pop()
    if (!staging && this.made < STAGING_BUFFERS) {
      staging = Buffer.from(new SharedArrayBuffer(this.pieceSize))
      this.made++
    }
    return staging ? new StagedHash(staging, this) : new MainThreadHash()
  }

  giveBack(staging: Buffer): void {
    this.free.push(staging)
  }
}

const shared = new Map<number, PieceHashers>()

/** The process's piece hashers for pieces of `pieceSize` bytes, however many read paths there are. */
export function pieceHashers(pieceSize: number): PieceHashers {
  let h = shared.get(pieceSize)
  if (!h) shared.set(pieceSize, (h = new PieceHashers(pieceSize)))
  return h
}
