// GetRangeHash off the event loop: MD5 is synchronous and runs at well under a core's
// memory bandwidth, so a range hashed on the service's main thread stalls every download
// it is serving for as long as the hash takes. A few worker threads read the range from
// the stored file and hash it there; the main thread only waits for the 32 hex digits.
// The worker is a self-contained script (no import of ours), so it runs the same from
// the TypeScript sources (tests) and from the build.
import { Worker } from 'node:worker_threads'
import { SETTINGS } from './settings.js'

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads')
const { createHash } = require('node:crypto')
const fs = require('node:fs')
const buffer = Buffer.allocUnsafe(${SETTINGS.hashReadBytes})
parentPort.on('message', ({ id, path, position, length }) => {
  let fd = -1
  try {
    fd = fs.openSync(path, 'r')
    const hash = createHash('md5')
    for (let at = position, left = length; left > 0;) {
      const n = fs.readSync(fd, buffer, 0, Math.min(left, buffer.length), at)
      if (n <= 0) throw new Error('the file ended at ' + at)
      hash.update(buffer.subarray(0, n))
      at += n
      left -= n
    }
    parentPort.postMessage({ id, hex: hash.digest('hex') })
  } catch (e) {
    parentPort.postMessage({ id, error: String(e && e.message || e) })
  } finally {
    if (fd >= 0) fs.closeSync(fd)
  }
})
`

interface Job {
  id: number
  path: string
  position: number
  length: number
  resolve: (hex: string) => void
  reject: (e: Error) => void
}

interface Slot {
  worker: Worker
  job: Job | null
}

export class HashPool {
  private readonly slots: Slot[] = []
  private readonly waiting: Job[] = []
  private nextId = 0
  private closed = false

  constructor(private readonly size: number = SETTINGS.hashWorkers) {}

  /** The lowercase hex MD5 of `length` bytes of the file at `path` from `position`. */
  md5(path: string, position: number, length: number): Promise<string> {
    if (this.closed) return Promise.reject(new Error('the hash pool is closed'))
    return new Promise<string>((resolve, reject) => {
      this.waiting.push({ id: ++this.nextId, path, position, length, resolve, reject })
      this.dispatch()
    })
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      const slot = this.slots.find((s) => s.job === null) ?? (this.slots.length < this.size ? this.spawn() : null)
      if (!slot) return
      const job = this.waiting.shift()!
      slot.job = job
      slot.worker.postMessage({ id: job.id, path: job.path, position: job.position, length: job.length })
    }
  }

  private spawn(): Slot {
    const worker = new Worker(WORKER_SOURCE, { eval: true })
    // An idle pool must not keep the process alive.
    worker.unref()
    const slot: Slot = { worker, job: null }
    worker.on('message', (m: { id: number; hex?: string; error?: string }) => {
      const job = slot.job
      slot.job = null
      if (job?.id === m.id) {
        if (m.hex !== undefined) job.resolve(m.hex)
        else job.reject(new Error(m.error ?? 'hash failed'))
      }
      this.dispatch()
    })
    worker.on('error', (e) => this.retire(slot, e))
    worker.on('exit', () => this.retire(slot, new Error('a hash worker exited')))
    this.slots.push(slot)
    return slot
  }

  /** A worker that died takes its job with it (the caller answers 500); the next job gets a new one. */
  private retire(slot: Slot, e: Error): void {
    const i = this.slots.indexOf(slot)
    if (i < 0) return
    this.slots.splice(i, 1)
    slot.job?.reject(e)
    slot.job = null
    if (!this.closed) this.dispatch()
  }

  async close(): Promise<void> {
    this.closed = true
    for (const job of this.waiting.splice(0)) job.reject(new Error('the service is closing'))
    await Promise.all(this.slots.splice(0).map((s) => {
      s.job?.reject(new Error('the service is closing'))
      return s.worker.terminate()
    }))
  }
}
