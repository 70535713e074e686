// The MD5 of a file, or of a range of it, worked out on worker threads that read the file
// themselves: MD5 is synchronous and runs at well under a core's memory bandwidth, so a
// file hashed on an event loop stalls everything that loop serves for as long as it
// takes (the local service's GetRangeHash, the outbox hashing what it is about to send).
// The calling thread only waits for the 32 hex digits.
import { WorkerPool } from './worker-pool.js'

/** `length` null: to the end of the file. */
type HashJob = { path: string; position: number; length: number | null }

// The file is opened O_NOATIME: hashing is not a reader's access, and the outbox shows the
// atime of the staged file as that of the user's (who may have set it with touch -a). Only
// the file's owner may ask for it (EPERM otherwise): then it is opened as usual.
const handler = (readBytes: number) => `
const { createHash } = require('node:crypto')
const fs = require('node:fs')
const buffer = Buffer.allocUnsafe(${readBytes})
const NOATIME = fs.constants.O_RDONLY | (fs.constants.O_NOATIME ?? 0)
function openQuietly(path) {
  try {
    return fs.openSync(path, NOATIME)
  } catch (err) {
    if (err.code !== 'EPERM') throw err
    return fs.openSync(path, 'r')
  }
}
function handle({ path, position, length }) {
  const fd = openQuietly(path)
  try {
    const hash = createHash('md5')
    for (let at = position, left = length === null ? Infinity : length; left > 0;) {
      const n = fs.readSync(fd, buffer, 0, Math.min(left, buffer.length), at)
      if (n <= 0) {
        if (length === null) break
        throw new Error('the file ended at ' + at)
      }
      hash.update(buffer.subarray(0, n))
      at += n
      left -= n
    }
    return hash.digest('hex')
  } finally {
    fs.closeSync(fd)
  }
}
`

/** Worker threads of the process's shared pool (the outbox's and the downloads' hashing). */
const SHARED_WORKERS = 2
let shared: FileHashPool | null = null

/** One pool for the whole process, made on first use; idle, it keeps nothing alive. */
function sharedFileHashPool(): FileHashPool {
  return (shared ??= new FileHashPool(SHARED_WORKERS))
}

/**
 * Lowercase hex MD5 of a file, or of `length` bytes of it from `position` (null: to its
 * end), read and hashed on the shared worker threads: the thread that serves FUSE or
 * drives a command's requests never spends time on it.
 */
export function md5OfFile(path: string, position = 0, length: number | null = null, signal?: AbortSignal): Promise<string> {
  return sharedFileHashPool().md5(path, position, length, signal)
}

export class FileHashPool {
  private readonly pool: WorkerPool<HashJob, string>

  /** Up to `size` workers, each reading `readBytes` at a time. */
  constructor(size: number, readBytes = 1024 * 1024) {
    this.pool = new WorkerPool(handler(readBytes), size)
  }

  /** Starts the workers now: one started by the first job adds tens of milliseconds to it. */
  warm(): this {
    this.pool.warm()
    return this
  }

  /**
   * The lowercase hex MD5 of `length` bytes of the file at `path` from `position` (null: to
   * its end); dropped unstarted when `signal` aborts.
   */
  md5(path: string, position = 0, length: number | null = null, signal?: AbortSignal): Promise<string> {
    return this.pool.run({ path, position, length }, signal)
  }

  close(): Promise<void> {
    return this.pool.close()
  }
}
