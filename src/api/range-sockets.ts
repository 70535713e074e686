// Range bodies straight off TLS sockets into the caller's own buffers. Through undici each
// 16 KiB TLS record became a fresh buffer, went through its HTTP parser and a stream, and
// was left to the garbage collector: ~2.7 CPU-s per GiB before a byte was checked, where
// the same socket decrypting into one reused buffer (Node's `onread`) takes ~1, and less
// again when it decrypts straight into the sink's own memory (BodySink.room). A cold
// read streams its ranges here: a plain GET with a Range header, whose answer is a
// `206 Partial Content` with a Content-Length, on keep-alive connections of our own.
// Anything else (another status, a chunked or unsized body) is not parsed here: the
// caller asks again through the general transport (NotPlainAnswer), before a byte of the
// body has been handed on. Through a proxy the same happens inside its tunnel.
// The range hashes a cold read asks beside its ranges (one per 5 MiB piece) take the same
// way (getShort): any answer with a short, sized body. Through undici each cost ~0.5 ms of
// the main thread (its pool, parser, body stream and text decoding), ~0.13 CPU-s per GiB.
// This module is the pool: connections per origin, kept between requests, opened ahead and
// bounded; range-connection.ts opens one, range-exchange.ts carries a request and its
// answer on it (range-head.ts its HTTP text, range-body.ts its body, range-failures.ts its
// errors).
import type { BodySink } from './range-body.js'
import { openConnection, type ConnectOptions, type Conn } from './range-connection.js'
import { exchange, type ExchangeTimeouts } from './range-exchange.js'
import { isIdleClose } from './range-failures.js'
import { rangeJudge, shortJudge, type AnswerHead, type HeadJudge } from './range-head.js'

export type { BodySink } from './range-body.js'
export { NotPlainAnswer } from './range-head.js'

/** A whole short answer (getShort). */
export interface ShortAnswer {
  status: number
  /** Lowercase names, the first value of each. */
  headers: Record<string, string>
  body: Buffer
}

export interface RangeSocketOptions extends ConnectOptions, ExchangeTimeouts {
  /**
   * Connections per origin at most, in use or idle: a request past them waits for one to be
   * free. A cold read streams up to maxConcurrentFetches ranges and asks up to
   * maxConcurrentHashes hashes beside them; without a bound each burst of hash calls opened
   * connections of its own (15–28 for a cold GiB, where 8 do).
   */
  connections: number
}

export class RangeSockets {
  private readonly idle = new Map<string, Conn[]>()
  /** Requests under way per origin, each on a connection of its own. */
  private readonly busy = new Map<string, number>()
  /** Requests waiting for a connection per origin, first come first served. */
  private readonly waiting = new Map<string, Array<() => void>>()
  /** Origins a connection is being opened ahead for. */
  private readonly warming = new Map<string, Promise<void>>()
  private closed = false

  constructor(private readonly options: RangeSocketOptions) {}

  /**
   * GET `url` with `headers` (which ask bytes [start, end)), its body handed to `sink` as it
   * arrives. Resolves once all end - start bytes are handed on.
   */
  get(url: URL, headers: Record<string, string>, start: number, end: number, sink: BodySink, signal?: AbortSignal): Promise<void> {
    return this.request(url, headers, rangeJudge(start, end), sink, signal).then(() => undefined)
  }

  /**
   * GET `url` with `headers` for an answer of at most `limit` bytes, whatever its status:
   * the whole of it. NotPlainAnswer when its body is longer, unsized or chunked.
   */
  async getShort(url: URL, headers: Record<string, string>, limit: number, signal?: AbortSignal): Promise<ShortAnswer> {
    const parts: Buffer[] = []
    // Copied: the bytes are in the read buffer every socket reuses.
    const sink: BodySink = (bytes) => void parts.push(Buffer.from(bytes))
    const answer = await this.request(url, headers, shortJudge(limit), sink, signal)
    return { ...answer, body: Buffer.concat(parts) }
  }

  /** One GET and its answer's head; its body to `sink`. A kept connection the server closed meanwhile is replaced once. */
  private async request(url: URL, headers: Record<string, string>, judge: HeadJudge, sink: BodySink, signal?: AbortSignal): Promise<AnswerHead> {
    signal?.throwIfAborted()
    const origin = url.origin
    await this.turn(origin, signal)
    try {
      for (;;) {
        // One being opened ahead is waited for rather than opened twice.
        if (!this.idle.get(origin)?.length) await this.warming.get(origin)
        const conn = this.takeIdle(origin) ?? (await this.open(url, signal))
        const wasReused = conn.reused
        let answered = false
        const release = (keepAlive: boolean) => {
          if (keepAlive) return this.keep(origin, conn)
          conn.socket.destroy()
          // A server that closes every connection: the next range's is opened now, so its
          // handshake (round trips on a slow link) is not in the way of its first byte.
          this.warm(url)
        }
        try {
          return await exchange(conn, { url, headers, judge, sink, signal, answering: () => (answered = true), release }, this.options)
        } catch (e) {
          // A kept connection the server closed meanwhile fails before any answer: once more on a new one.
          if (isIdleClose(e, { reused: wasReused, answered, aborted: signal?.aborted ?? false })) continue
          throw e
        }
      }
    } finally {
      this.done(origin)
    }
  }

  /** Resolves once a request to `origin` may have a connection (fewer than `connections` busy); rejects on abort. */
  private turn(origin: string, signal?: AbortSignal): Promise<void> {
    const busy = this.busy.get(origin) ?? 0
    if (busy < this.options.connections) {
      this.busy.set(origin, busy + 1)
      return Promise.resolve()
    }
    return new Promise<void>((resolve, reject) => {
      const queue = this.waiting.get(origin) ?? []
      this.waiting.set(origin, queue)
      const onAbort = () => {
        const i = queue.indexOf(go)
        if (i >= 0) queue.splice(i, 1)
        reject(signal!.reason as Error)
      }
      // Called by done(), which hands over its place in `busy`.
      const go = () => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      queue.push(go)
    })
  }

  /** A request to `origin` is over: its place goes to the first waiting, if any. */
  private done(origin: string): void {
    const next = this.waiting.get(origin)?.shift()
    if (next) return next()
    const busy = (this.busy.get(origin) ?? 1) - 1
    if (busy > 0) this.busy.set(origin, busy)
    else this.busy.delete(origin)
  }

  /** A request to `url`'s origin is likely soon: open a connection unless one is idle. */
  warm(url: URL): void {
    const { origin } = url
    if (this.closed || this.warming.has(origin) || (this.idle.get(origin)?.length ?? 0) > 0 || (this.busy.get(origin) ?? 0) >= this.options.connections) return
    const opening = this.open(url).then((conn) => this.keep(origin, conn), () => undefined).finally(() => this.warming.delete(origin))
    this.warming.set(origin, opening)
  }

  close(): void {
    this.closed = true
    for (const conns of this.idle.values()) for (const c of conns) c.socket.destroy()
    this.idle.clear()
  }

  private takeIdle(origin: string): Conn | undefined {
    const conns = this.idle.get(origin)
    while (conns && conns.length > 0) {
      const conn = conns.pop()!
      if (!conn.socket.destroyed && conn.socket.readyState === 'open') {
        conn.socket.ref()
        return conn
      }
    }
    return undefined
  }

  private keep(origin: string, conn: Conn): void {
    const conns = this.idle.get(origin) ?? []
    if (this.closed || conns.length >= this.options.connections || conn.socket.destroyed) {
      conn.socket.destroy()
      return
    }
    conn.exchange = null
    // Idle until used: it must not keep the process alive.
    conn.socket.unref()
    conns.push(conn)
    this.idle.set(origin, conns)
  }

  private open(url: URL, signal?: AbortSignal): Promise<Conn> {
    return openConnection(url, this.options, (conn) => this.forget(url.origin, conn), signal)
  }

  private forget(origin: string, conn: Conn): void {
    const conns = this.idle.get(origin)
    const i = conns?.indexOf(conn) ?? -1
    if (i >= 0) conns!.splice(i, 1)
  }
}
