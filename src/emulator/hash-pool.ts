// GetRangeHash off the event loop: MD5 is synchronous and runs at well under a core's
// memory bandwidth, so a range hashed on the service's main thread stalls every download
// it is serving for as long as the hash takes. Worker threads read the range from the
// stored file and hash it there; the main thread only waits for the 32 hex digits.
import { WorkerPool } from '../base/worker-pool.js'
import { SETTINGS } from './settings.js'

const HANDLER = `
const { createHash } = require('node:crypto')
const fs = require('node:fs')
const buffer = Buffer.allocUnsafe(${SETTINGS.hashReadBytes})
function handle({ path, position, length }) {
  const fd = fs.openSync(path, 'r')
  try {
    const hash = createHash('md5')
    for (let at = position, left = length; left > 0;) {
      const n = fs.readSync(fd, buffer, 0, Math.min(left, buffer.length), at)
      if (n <= 0) throw new Error('the file ended at ' + at)
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

export class HashPool {
  private readonly pool: WorkerPool<{ path: string; position: number; length: number }, string>

  constructor(size: number = SETTINGS.hashWorkers) {
    this.pool = new WorkerPool(HANDLER, size)
    // Started with the service, as a running service has them: a worker started by the
    // first GetRangeHash adds tens of milliseconds to that request alone.
    this.pool.warm()
  }

  /** The lowercase hex MD5 of `length` bytes of the file at `path` from `position`. */
  md5(path: string, position: number, length: number): Promise<string> {
    return this.pool.run({ path, position, length })
  }

  close(): Promise<void> {
    return this.pool.close()
  }
}
