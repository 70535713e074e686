// A RangeSource over in-memory files for unit tests of the read path: it streams in
// small buffers like a socket, answers range hashes from the true bytes, and can
// corrupt, fail or stall on demand while counting what it sends.
import { NetworkError, OfflineError } from '../../src/api/errors.js'
import { createHash, randomBytes } from 'node:crypto'
import type { BodySink } from '../../src/api/range-sockets.js'
import type { RangeSource, Reachability, RemoteFile } from '../../src/read/source.js'
import type { ReadOptions } from '../../src/read/options.js'

export interface RangeCall {
  file: string
  start: number
  end: number
  aborted: boolean
  /** Every byte of the range was sent. */
  completed?: boolean
}

export class MemorySource implements RangeSource {
  readonly files = new Map<string, Buffer>()
  readonly ranges: RangeCall[] = []
  hashCalls = 0
  bytesSent = 0
  /** Bytes per yielded buffer. */
  bufferSize = 64 * 1024
  /** Return true to flip a byte of the buffer sent for this range. */
  corrupt: (call: RangeCall, attempt: number) => boolean = () => false
  /** Everything fails (the service cannot be reached). */
  offline = false
  /** What the read path is told about reachability (flipped by tests, apart from `offline`). */
  readonly reachable = new ReachabilitySwitch()
  get reachability(): Reachability {
    return this.reachable
  }
  /** After this many bytes of a range, stop sending and never finish (until aborted). */
  stallAfter: number | null = null
  /** Which ranges stallAfter applies to (all by default). */
  stalls: (call: RangeCall) => boolean = () => true
  private attempts = new Map<string, number>()

  /** `md5`: false for a file without one, a string to skip hashing a large shared buffer again. */
  add(name: string, data: Buffer, opts: { md5?: boolean | string; key?: string } = {}): RemoteFile {
    this.files.set(name, data)
    return {
      transferId: 't1',
      fileName: name,
      size: data.length,
      md5: opts.md5 === false ? null : typeof opts.md5 === 'string' ? opts.md5 : createHash('md5').update(data).digest('hex'),
      downloadUrl: `https://files.example/${name}`,
      cacheKey: opts.key ?? `t1/${name}/${data.length}`,
    }
  }

  addRandom(name: string, size: number, opts: { md5?: boolean; key?: string } = {}): RemoteFile {
    return this.add(name, randomBytes(size), opts)
  }

  private data(file: RemoteFile): Buffer {
    const d = this.files.get(file.fileName)
    if (!d) throw new Error(`no file ${file.fileName}`)
    return d
  }

  async streamRange(file: RemoteFile, start: number, end: number, sink: BodySink, signal?: AbortSignal): Promise<void> {
    const call: RangeCall = { file: file.fileName, start, end, aborted: false }
    this.ranges.push(call)
    signal?.addEventListener('abort', () => (call.aborted = true), { once: true })
    if (this.offline) throw new NetworkError('refused', 'ECONNREFUSED')
    const key = `${file.fileName}:${start}:${end}`
    const attempt = (this.attempts.get(key) ?? 0) + 1
    this.attempts.set(key, attempt)
    const data = this.data(file)
    const corrupt = this.corrupt(call, attempt)
    let sent = 0
    for (let at = start; at < end; at += this.bufferSize) {
      if (this.stallAfter !== null && sent >= this.stallAfter && this.stalls(call)) {
        await new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }))
      }
      signal?.throwIfAborted()
      await new Promise((r) => setImmediate(r))
      const piece = Buffer.from(data.subarray(at, Math.min(end, at + this.bufferSize)))
      if (corrupt && at === start) piece[0] = piece[0]! ^ 0xff
      sent += piece.length
      this.bytesSent += piece.length
      // Set before the last bytes are handed on: what the reader does then is its own business.
      if (at + piece.length >= end) call.completed = true
      // Handed on as a stream would: the bytes are valid only during the call.
      const paused = sink(piece)
      piece.fill(0xee)
      if (paused) await paused
    }
  }

  async rangeHash(file: RemoteFile, position: number, length: number): Promise<string> {
    this.hashCalls++
    if (this.offline) throw new NetworkError('refused', 'ECONNREFUSED')
    await new Promise((r) => setImmediate(r))
    return createHash('md5').update(this.data(file).subarray(position, position + length)).digest('hex')
  }

  rangesOf(name: string): RangeCall[] {
    return this.ranges.filter((r) => r.file === name)
  }
}

/**
 * A source holding one large file, 'big', of `size` bytes, each 4 KiB of it starting with its own
 * offset (a byte from the wrong place shows where it came from), streamed in 256 KiB buffers.
 */
export function numberedFile(size: number): { source: MemorySource; data: Buffer; file: RemoteFile } {
  const source = new MemorySource()
  source.bufferSize = 256 * 1024
  const data = Buffer.alloc(size)
  for (let i = 0; i < data.length; i += 4096) data.writeUInt32LE(i, i)
  return { source, data, file: source.add('big', data) }
}

/** Small grids so tests move few bytes; fast retries and timeouts. */
export const SMALL_GRID: Partial<ReadOptions> = {
  blockSize: 4 * 1024,
  pieceSize: 16 * 1024,
  chunkSize: 64 * 1024,
  headSize: 4 * 1024,
  prefetchBytes: 128 * 1024,
  sequentialSlack: 16 * 1024,
  retryBaseDelayMs: 1,
  retryMaxDelayMs: 20,
  deadlineMs: 400,
  stallTimeoutMs: 200,
  hashTimeoutMs: 1000,
}


/** A switch standing for the client's connectivity: tests flip it to say "offline" and back. */
export class ReachabilitySwitch implements Reachability {
  online = true
  private readonly listeners = new Set<(state: { online: boolean }) => void>()

  set(online: boolean): void {
    this.online = online
    for (const fn of this.listeners) fn({ online })
  }

  onChange(fn: (state: { online: boolean }) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  offlineError(): Error {
    return new OfflineError('offline (test)', 'OFFLINE')
  }
}
