// A few worker threads running one synchronous function, for CPU work (hashing) that
// would otherwise hold up an event loop serving I/O. The function is given as source text
// of a self-contained script (plain JavaScript, CommonJS `require` only, no import of
// ours), so it runs the same from the TypeScript sources and from the build. Jobs queue
// and go to the first idle worker; a worker that dies fails its job and is replaced.
import { Worker } from 'node:worker_threads'

interface Job<Req, Res> {
  id: number
  req: Req
  resolve: (r: Res) => void
  reject: (e: Error) => void
}

interface Slot<Req, Res> {
  worker: Worker
  job: Job<Req, Res> | null
}

export class WorkerPool<Req, Res> {
  private readonly slots: Array<Slot<Req, Res>> = []
  private readonly waiting: Array<Job<Req, Res>> = []
  private readonly source: string
  private nextId = 0
  private closed = false

  /**
   * `handler` is the source of a script that defines `function handle(req)` returning the
   * result (structured-clonable); what it throws fails that job. Up to `size` workers.
   */
  constructor(handler: string, private readonly size: number) {
    this.source = `const { parentPort } = require('node:worker_threads')
${handler}
parentPort.on('message', (m) => {
  let reply
  try { reply = { id: m.id, result: handle(m.req) } } catch (e) { reply = { id: m.id, error: String((e && e.message) || e) } }
  parentPort.postMessage(reply)
})`
  }

  /** Starts every worker now: a worker takes tens of ms to start, which the first job should not wait for. */
  warm(): void {
    while (!this.closed && this.slots.length < this.size) this.spawn()
  }

  /** Runs a job; one still queued when `signal` aborts is dropped (a running one finishes). */
  run(req: Req, signal?: AbortSignal): Promise<Res> {
    if (this.closed) return Promise.reject(new Error('the worker pool is closed'))
    if (signal?.aborted) return Promise.reject(signal.reason)
    return new Promise<Res>((resolve, reject) => {
      const job: Job<Req, Res> = { id: ++this.nextId, req, resolve, reject }
      const drop = () => {
        const i = this.waiting.indexOf(job)
        if (i >= 0) {
          this.waiting.splice(i, 1)
          reject(signal!.reason)
        }
      }
      signal?.addEventListener('abort', drop, { once: true })
      const settle = () => signal?.removeEventListener('abort', drop)
      job.resolve = (r) => { settle(); resolve(r) }
      job.reject = (e) => { settle(); reject(e) }
      this.waiting.push(job)
      this.dispatch()
    })
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      const slot = this.slots.find((s) => s.job === null) ?? (this.slots.length < this.size ? this.spawn() : null)
      if (!slot) return
      const job = this.waiting.shift()!
      slot.job = job
      // A job under way keeps the process alive until it is answered; an idle worker does not.
      slot.worker.ref()
      slot.worker.postMessage({ id: job.id, req: job.req })
    }
  }

  private spawn(): Slot<Req, Res> {
    const worker = new Worker(this.source, { eval: true })
    const slot: Slot<Req, Res> = { worker, job: null }
    worker.on('message', (m: { id: number; result?: Res; error?: string }) => {
      const job = slot.job
      slot.job = null
      worker.unref()
      if (job?.id === m.id) {
        if (m.error === undefined) job.resolve(m.result as Res)
        else job.reject(new Error(m.error))
      }
      this.dispatch()
    })
    worker.on('error', (e) => this.retire(slot, e))
    worker.on('exit', () => this.retire(slot, new Error('a worker thread exited')))
    // An idle worker must not keep the process alive. After the listeners: adding a
    // 'message' listener refs the worker again.
    worker.unref()
    this.slots.push(slot)
    return slot
  }

  private retire(slot: Slot<Req, Res>, e: Error): void {
    const i = this.slots.indexOf(slot)
    if (i < 0) return
    this.slots.splice(i, 1)
    slot.job?.reject(e)
    slot.job = null
    if (!this.closed) this.dispatch()
  }

  async close(): Promise<void> {
    this.closed = true
    for (const job of this.waiting.splice(0)) job.reject(new Error('the worker pool is closed'))
    await Promise.all(this.slots.splice(0).map((s) => {
      s.job?.reject(new Error('the worker pool is closed'))
      return s.worker.terminate()
    }))
  }
}
