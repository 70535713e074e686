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
import type { OnReadOpts, Socket } from 'node:net'
import { connect, type ConnectionOptions, type SecureContext, type TLSSocket } from 'node:tls'
import { connectionError, NetworkError } from './errors.js'

/** What becomes of the body's bytes: copied out during the call (the buffer is reused after it); a promise pauses the socket until it settles. */
export interface BodySink {
  (bytes: Buffer): void | Promise<void>
  /**
   * Where the sink would copy the next bytes to, asked after each call: the socket then
   * decrypts them straight there, and the call gets a view of that memory (the sink sees
   * it is in place and copies nothing). Undefined: the shared read buffer, copied as ever.
   * Asked only while the sink takes bytes at once (no promise pending); the memory must
   * stay the sink's until its next call or the end of the answer.
   */
  room?(): Buffer | undefined
}

/** The answer was not one parsed here (a plain 206 with a length; a short, sized body): ask through the general transport instead. */
export class NotPlainAnswer extends Error {
  override readonly name = 'NotPlainAnswer'
}

/** A whole short answer (getShort). */
export interface ShortAnswer {
  status: number
  /** Lowercase names, the first value of each. */
  headers: Record<string, string>
  body: Buffer
}

/** What an exchange makes of an answer's head: the body's length to take, or why not here. */
type HeadJudge = (answer: { status: number; headers: Record<string, string> }) => number | NotPlainAnswer

export interface RangeSocketOptions {
  secureContext: SecureContext
  /** A proxy's tunnel to `url`'s origin, or null to connect directly (tunnel.ts). */
  tunnel(url: URL, signal?: AbortSignal): Promise<Socket | null>
  connectMs: number
  headersMs: number
  bodyIdleMs: number
  /**
   * Connections per origin at most, in use or idle: a request past them waits for one to be
   * free. A cold read streams up to maxConcurrentFetches ranges and asks up to
   * maxConcurrentHashes hashes beside them; without a bound each burst of hash calls opened
   * connections of its own (15–28 for a cold GiB, where 8 do).
   */
  connections: number
}

/** Decrypted bytes land here, for every socket, unless the sink names its room: each read is handed on (copied) before the next. */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024)
/** Headers longer than this are not a file server's range answer. */
const MAX_HEADER_BYTES = 16 * 1024

/** One request's way through an answer: headers, then body bytes to the sink. */
interface Exchange {
  /** Takes the bytes that arrived; false pauses the socket. */
  take(bytes: Buffer): boolean
  /** Where the socket decrypts the next bytes to: the sink's room, or undefined for READ_BUFFER. */
  room(): Buffer | undefined
  /** The socket ended or failed before the answer did. */
  broken(error: Error): void
}

interface Conn {
  socket: TLSSocket
  exchange: Exchange | null
  /** Has carried an answer: a failure before any byte of the next one may be a server's idle close. */
  reused: boolean
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
    const judge: HeadJudge = (answer) => {
      const range = answer.headers['content-range']
      const plain = answer.status === 206 &&
        answer.headers['content-length'] === String(end - start) &&
        answer.headers['transfer-encoding'] === undefined &&
        (range === undefined || new RegExp(`^bytes ${start}-${end - 1}/`).test(range))
      return plain ? end - start : new NotPlainAnswer(`answer ${answer.status}`)
    }
    return this.request(url, headers, judge, sink, signal).then(() => undefined)
  }

  /**
   * GET `url` with `headers` for an answer of at most `limit` bytes, whatever its status:
   * the whole of it. NotPlainAnswer when its body is longer, unsized or chunked.
   */
  async getShort(url: URL, headers: Record<string, string>, limit: number, signal?: AbortSignal): Promise<ShortAnswer> {
    const parts: Buffer[] = []
    // Copied: the bytes are in the read buffer every socket reuses.
    const sink: BodySink = (bytes) => void parts.push(Buffer.from(bytes))
    const judge: HeadJudge = (answer) => {
      const length = Number(answer.headers['content-length'] ?? NaN)
      if (answer.headers['transfer-encoding'] !== undefined || !Number.isSafeInteger(length) || length < 0) return new NotPlainAnswer(`answer ${answer.status} of no length`)
      return length <= limit ? length : new NotPlainAnswer(`answer ${answer.status} of ${length} bytes`)
    }
    const answer = await this.request(url, headers, judge, sink, signal)
    return { ...answer, body: Buffer.concat(parts) }
  }

  /** One GET and its answer's head; its body to `sink`. A kept connection the server closed meanwhile is replaced once. */
  private async request(url: URL, headers: Record<string, string>, judge: HeadJudge, sink: BodySink, signal?: AbortSignal): Promise<{ status: number; headers: Record<string, string> }> {
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
        try {
          return await this.exchange(conn, url, headers, judge, sink, signal, () => (answered = true))
        } catch (e) {
          // A kept connection the server closed meanwhile fails before any answer: once more on a new one.
          if (wasReused && !answered && e instanceof NetworkError && !signal?.aborted) continue
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

  private async open(url: URL, signal?: AbortSignal): Promise<Conn> {
    const { options } = this
    const tunnel = await options.tunnel(url, signal)
    return new Promise<Conn>((resolve, reject) => {
      const conn: Conn = { socket: null as unknown as TLSSocket, exchange: null, reused: false }
      const host = url.hostname.replace(/^\[|\]$/g, '')
      // `onread` is Node's for TLS sockets too (tls.connect), though its types leave it out.
      const tlsOptions: ConnectionOptions & { onread: OnReadOpts } = {
        host,
        port: Number(url.port || 443),
        // SNI only for names, never for an address.
        servername: /^[\d.]+$|:/.test(host) ? undefined : host,
        secureContext: options.secureContext,
        ALPNProtocols: ['http/1.1'],
        onread: {
          // Asked again after every callback (and once now, before any exchange): the
          // memory the next decrypted bytes go to. An exchange that is over never names
          // the sink's memory again, so what a socket still decrypts after it lands here.
          buffer: () => conn.exchange?.room() ?? READ_BUFFER,
          callback: (n: number, buf: Uint8Array) => conn.exchange?.take(n === buf.length && Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, n)) ?? true,
        },
      }
      const socket = connect(tunnel ? { ...tlsOptions, socket: tunnel } : tlsOptions)
      if (tunnel) readInto(socket, tlsOptions.onread)
      conn.socket = socket
      const timer = setTimeout(() => fail(new NetworkError(`cannot reach ${url.origin}: no connection within ${options.connectMs} ms`, 'UND_ERR_CONNECT_TIMEOUT')), options.connectMs)
      const onAbort = () => fail(signal!.reason as Error)
      signal?.addEventListener('abort', onAbort, { once: true })
      const settle = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
      }
      const fail = (e: Error) => {
        settle()
        socket.destroy()
        reject(e)
      }
      socket.once('secureConnect', () => {
        settle()
        resolve(conn)
      })
      socket.on('error', (e: Error & { code?: string }) => {
        if (conn.exchange) conn.exchange.broken(e)
        else fail(connectionError(url.origin, url.host, e))
      })
      socket.on('close', () => {
        conn.exchange?.broken(new NetworkError(`${url.origin} closed the connection`, 'ECONNRESET'))
        this.forget(url.origin, conn)
      })
    })
  }

  private forget(origin: string, conn: Conn): void {
    const conns = this.idle.get(origin)
    const i = conns?.indexOf(conn) ?? -1
    if (i >= 0) conns!.splice(i, 1)
  }

  /** One request and its answer on `conn`; the connection is kept for the next one when the answer allows. */
  private exchange(
    conn: Conn, url: URL, headers: Record<string, string>, judge: HeadJudge,
    sink: BodySink, signal: AbortSignal | undefined, answering: () => void,
  ): Promise<{ status: number; headers: Record<string, string> }> {
    const { socket } = conn
    const { options } = this
    return new Promise((resolve, reject) => {
      let head: Buffer | null = Buffer.alloc(0)
      let answer: { status: number; headers: Record<string, string> } | null = null
      // The body's bytes still to come, once the head said how many.
      let left = 0
      let keepAlive = true
      let over = false
      const finish = (error: Error | null) => {
        if (over) return
        over = true
        clearTimeout(headersTimer)
        socket.setTimeout(0)
        socket.off('timeout', onIdle)
        signal?.removeEventListener('abort', onAbort)
        conn.exchange = null
        if (error) {
          socket.destroy()
          reject(error)
          return
        }
        conn.reused = true
        if (keepAlive) this.keep(url.origin, conn)
        else {
          socket.destroy()
          // A server that closes every connection: the next range's is opened now, so its
          // handshake (round trips on a slow link) is not in the way of its first byte.
          this.warm(url)
        }
        resolve(answer!)
      }
      const headersTimer = setTimeout(() => finish(new NetworkError(`${url.origin} sent no answer within ${options.headersMs} ms`, 'UND_ERR_HEADERS_TIMEOUT')), options.headersMs)
      const onIdle = () => finish(new NetworkError(`${url.origin} sent nothing for ${options.bodyIdleMs} ms`, 'UND_ERR_BODY_TIMEOUT'))
      const onAbort = () => finish(signal!.reason as Error)
      signal?.addEventListener('abort', onAbort, { once: true })
      socket.setTimeout(options.bodyIdleMs)
      socket.on('timeout', onIdle)
      // While the sink's promise is pending, bytes the socket had already decrypted still
      // come (a pause stops the next read, not the records of this one): they are copied
      // aside, since the read buffer is used again, and handed on in order afterwards.
      let held: Promise<void> | null = null
      const queued: Buffer[] = []
      const hand = (bytes: Buffer): boolean => {
        if (bytes.length > left) {
          finish(new NetworkError(`${url.origin} sent more than its answer's length`, 'EPROTO'))
          return false
        }
        left -= bytes.length
        let paused: void | Promise<void>
        try {
          paused = sink(bytes)
        } catch (e) {
          finish(e as Error)
          return false
        }
        if (left === 0) {
          // The answer is complete; the sink's promise (if any) is waited for before it is over.
          if (paused) paused.then(() => finish(null), (e: unknown) => finish(e as Error))
          else finish(null)
          return true
        }
        if (!paused) return true
        held = paused
        paused.then(() => {
          held = null
          while (queued.length > 0 && held === null && !over) hand(queued.shift()!)
          if (held === null && !over) socket.resume()
        }, (e: unknown) => finish(e as Error))
        return false
      }
      const body = (bytes: Buffer): boolean => {
        if (held === null) return hand(bytes)
        queued.push(Buffer.from(bytes))
        return false
      }
      conn.exchange = {
        room: () => {
          if (head !== null || held !== null || over || left === 0) return undefined
          const room = sink.room?.()
          // Never more than the answer has left: bytes past it are refused, not written to the sink's memory.
          return room && room.length > left ? room.subarray(0, left) : room
        },
        take: (bytes) => {
          if (over) return true
          if (head === null) return body(bytes)
          head = Buffer.concat([head, bytes])
          const at = head.indexOf('\r\n\r\n')
          if (at < 0) {
            if (head.length > MAX_HEADER_BYTES) finish(new NotPlainAnswer('headers too long'))
            return true
          }
          const parsed = parseHead(head.subarray(0, at).toString('latin1'))
          const rest = head.subarray(at + 4)
          head = null
          clearTimeout(headersTimer)
          answering()
          const length = judge(parsed)
          if (length instanceof NotPlainAnswer) {
            finish(length)
            return false
          }
          answer = { status: parsed.status, headers: parsed.headers }
          left = length
          // HTTP/1.1 keeps a connection unless told otherwise; HTTP/1.0 only when told to.
          const connection = parsed.headers.connection ?? ''
          keepAlive = parsed.version === '1.0' ? /\bkeep-alive\b/i.test(connection) : !/\bclose\b/i.test(connection)
          if (left === 0) {
            finish(rest.length > 0 ? new NetworkError(`${url.origin} sent more than its answer's length`, 'EPROTO') : null)
            return true
          }
          return rest.length > 0 ? body(rest) : true
        },
        broken: (e) => finish(e instanceof NetworkError ? e : new NetworkError(`${url.origin}: ${e.message}`, (e as { code?: string }).code ?? null, { cause: e })),
      }
      const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`]
      for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`)
      socket.write(`${lines.join('\r\n')}\r\n\r\n`, 'latin1')
    })
  }
}

/**
 * `onread` for a TLS socket made on a socket it was handed (a proxy's tunnel): Node gives
 * `onread` only to a TLS socket that opens its own connection, and one made on a tunnel
 * would decrypt into buffers of its own, each copied and left to the collector, which is
 * what this module exists to avoid. The fields `onread` sets are set here as net.Socket
 * sets them, before any byte arrives (reads start on a later tick). A Node without them
 * hands the bytes on from 'data' events instead: copied, but every byte is there.
 */
function readInto(socket: TLSSocket, onread: OnReadOpts): void {
  const fields = Object.getOwnPropertySymbols(socket)
  const field = (name: string) => fields.find((f) => f.description === name)
  const [buffer, callback, generator] = [field('kBuffer'), field('kBufferCb'), field('kBufferGen')]
  const handle = (socket as unknown as { _handle?: { useUserBuffer?(memory: Uint8Array): void } })._handle
  const next = onread.buffer
  if (buffer && callback && generator && typeof next === 'function' && typeof handle?.useUserBuffer === 'function') {
    const own = socket as unknown as Record<symbol, unknown>
    const first = next()
    own[generator] = next
    own[callback] = onread.callback
    own[buffer] = first
    handle.useUserBuffer(first)
    return
  }
  socket.on('data', (bytes: Buffer) => {
    if (onread.callback(bytes.length, bytes) === false) socket.pause()
  })
}

/** Status and headers (names lower-cased; a repeated one keeps its first value) of an HTTP/1.1 answer's head. */
export function parseHead(text: string): { version: string; status: number; headers: Record<string, string> } {
  const lines = text.split('\r\n')
  const first = /^HTTP\/(1\.[01]) (\d{3})/.exec(lines[0] ?? '')
  const version = first?.[1] ?? ''
  const status = Number(first?.[2] ?? 0)
  const headers: Record<string, string> = {}
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':')
    if (colon <= 0) continue
    const name = line.slice(0, colon).trim().toLowerCase()
    headers[name] ??= line.slice(colon + 1).trim()
  }
  return { version, status, headers }
}
