// An in-memory Transfer Service behind the send core's Sender port: it records every
// call, keeps chunks by index like the real file server, refuses Complete while a file
// lacks chunks, fails on demand, and can "kill" the process using it at a chosen call.
import { createHash } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import { NetworkError, ServiceError } from '../../src/api/errors.js'
import type { InitializeRequest, ServiceStatus, Transfer } from '../../src/api/types.js'
import type { InitializeAnswer, Sender, UploadFileRequest } from '../../src/send/ports.js'

export type Op = 'initialize' | 'chunk' | 'complete' | 'details' | 'forward'

export interface FakeTransfer {
  id: string
  key: string
  req: InitializeRequest
  files: Map<string, { size: number; chunkSize: number; chunks: Map<number, Buffer> }>
  completed: boolean
  /** Recipients added by forward (contact group names), in call order. */
  forwardedTo: string[]
  /** name → bytes, fixed at Complete. */
  sent: Map<string, Buffer> | null
}

export interface Call { op: Op; transferid?: string; subject?: string; file?: string; chunk?: number; to?: string[] }

export function md5(b: Buffer | string): string {
  return createHash('md5').update(b).digest('hex')
}

export function refusal(status: ServiceStatus, http = 400): ServiceError {
  return new ServiceError(`${status}`, http, status, null, `refused: ${status}`)
}

export class FakeService {
  readonly transfers = new Map<string, FakeTransfer>()
  readonly calls: Call[] = []
  private seq = 0
  private faults: Array<{ op: Op; error: () => Error; remaining: number }> = []
  /** Called before each operation is served; a test may kill the caller here. */
  beforeCall: ((call: Call, sender: FakeSender) => void) | null = null
  /** Called after an operation took effect, before its answer reaches the caller. */
  afterCall: ((call: Call, sender: FakeSender) => void) | null = null

  failNext(op: Op, error: () => Error, times = 1): void {
    this.faults.push({ op, error, remaining: times })
  }

  clearFaults(): void {
    this.faults = []
  }

  private fault(op: Op): void {
    const f = this.faults.find((x) => x.op === op && x.remaining > 0)
    if (!f) return
    f.remaining--
    this.faults = this.faults.filter((x) => x.remaining > 0)
    throw f.error()
  }

  sender(): FakeSender {
    return new FakeSender(this)
  }

  /** @internal */ serve<T>(s: FakeSender, call: Call, effect: () => T): T {
    this.beforeCall?.(call, s)
    if (s.dead) throw new DeadProcess()
    this.calls.push(call)
    this.fault(call.op)
    const out = effect()
    this.afterCall?.(call, s)
    if (s.dead) throw new DeadProcess()
    return out
  }

  newTransfer(req: InitializeRequest): FakeTransfer {
    const id = `t${++this.seq}`
    const t: FakeTransfer = { id, key: `k${id}`, req, files: new Map(), completed: false, forwardedTo: [], sent: null }
    this.transfers.set(id, t)
    return t
  }

  completed(): FakeTransfer[] {
    return [...this.transfers.values()].filter((t) => t.completed)
  }

  /** Completed transfers of a subject, as name → md5 maps. */
  sentAs(subject: string): Array<Record<string, string>> {
    return this.completed().filter((t) => t.req.subject === subject).map((t) => digest(t))
  }

  initializeCount(subject: string): number {
    return this.calls.filter((c) => c.op === 'initialize' && c.subject === subject).length
  }
}

export function digest(t: FakeTransfer): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [n, b] of t.sent ?? []) out[n] = md5(b)
  return out
}

/** Thrown to a process the test killed: it never sees an answer (the promise never settles). */
export class DeadProcess extends Error {}

const never = <T>(): Promise<T> => new Promise<T>(() => undefined)

export class FakeSender implements Sender {
  dead = false
  constructor(private readonly svc: FakeService) {}

  kill(): void {
    this.dead = true
  }

  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    if (this.dead) return never()
    try {
      return await fn()
    } catch (err) {
      if (err instanceof DeadProcess || this.dead) return never()
      throw err
    }
  }

  initialize(req: InitializeRequest, _signal: AbortSignal): Promise<InitializeAnswer> {
    return this.guard(async () => {
      await Promise.resolve()
      const t = this.svc.serve(this, { op: 'initialize', subject: req.subject }, () => this.svc.newTransfer(structuredClone(req)))
      return { transferid: t.id, transferkey: t.key, transferurl: 'https://files.invalid/savefile.ashx' }
    })
  }

  uploadFile(r: UploadFileRequest): Promise<void> {
    return this.guard(async () => {
      const t = this.svc.transfers.get(r.transferid)
      if (!t || t.key !== r.transferkey) throw new ServiceError('AccessDenied', 401, 'AccessDenied')
      const n = Math.max(1, Math.ceil(r.size / r.chunkSize))
      const h = await fsp.open(r.filePath, 'r')
      try {
        for (let i = 0; i < n; i++) {
          if (r.confirmed.has(i)) continue
          if (r.signal.aborted) throw new DOMException('aborted', 'AbortError')
          const len = Math.max(0, Math.min(r.chunkSize, r.size - i * r.chunkSize))
          const buf = Buffer.alloc(len)
          const { bytesRead } = await h.read(buf, 0, len, i * r.chunkSize)
          if (bytesRead !== len) throw new NetworkError('short read of the staged file')
          if (this.dead) return never()
          this.svc.serve(this, { op: 'chunk', transferid: t.id, file: r.fileName, chunk: i }, () => {
            let f = t.files.get(r.fileName)
            if (!f || f.chunkSize !== r.chunkSize || f.size !== r.size) {
              f = { size: r.size, chunkSize: r.chunkSize, chunks: new Map() }
              t.files.set(r.fileName, f)
            }
            f.chunks.set(i, buf)
          })
          r.onChunkConfirmed(i)
        }
      } finally {
        await h.close()
      }
    })
  }

  complete(transferid: string, transferkey: string): Promise<Transfer> {
    return this.guard(async () => {
      await Promise.resolve()
      const t = this.svc.transfers.get(transferid)
      if (!t || t.key !== transferkey) throw new ServiceError('AccessDenied', 401, 'AccessDenied')
      this.svc.serve(this, { op: 'complete', transferid, subject: t.req.subject }, () => {
        if (t.completed) return
        const sent = new Map<string, Buffer>()
        for (const [name, f] of t.files) {
          const n = Math.max(1, Math.ceil(f.size / f.chunkSize))
          const parts: Buffer[] = []
          for (let i = 0; i < n; i++) {
            const c = f.chunks.get(i)
            if (!c) throw new ServiceError('UploadNotComplete', 409, 'UploadNotComplete')
            parts.push(c)
          }
          sent.set(name, Buffer.concat(parts))
        }
        t.sent = sent
        t.completed = true
      })
      return { id: t.id, url: `https://transfer.invalid/d/${t.id}`, status: 'STATUS_COMPLETE', subject: t.req.subject } as unknown as Transfer
    })
  }

  transferStatus(transferid: string, _password: string | null, _signal: AbortSignal): Promise<Pick<Transfer, 'status' | 'url'>> {
    return this.guard(async () => {
      await Promise.resolve()
      const t = this.svc.transfers.get(transferid)
      if (!t) throw new ServiceError('NotFound', 404, 'NotFound')
      return this.svc.serve(this, { op: 'details', transferid, subject: t.req.subject }, () =>
        ({ status: t.completed ? 'STATUS_COMPLETE' : 'STATUS_STARTED', url: `https://transfer.invalid/d/${t.id}` }))
    })
  }

  forward(transferid: string, to: string[]): Promise<void> {
    return this.guard(async () => {
      await Promise.resolve()
      const t = this.svc.transfers.get(transferid)
      if (!t) throw new ServiceError('NotFound', 404, 'NotFound')
      this.svc.serve(this, { op: 'forward', transferid, subject: t.req.subject, to: [...to] }, () => {
        if (!t.completed) throw new ServiceError('InvalidTransferState', 409, 'InvalidTransferState')
        t.forwardedTo.push(...to)
      })
    })
  }
}
