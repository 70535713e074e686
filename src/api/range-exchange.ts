// One GET and its answer on a range connection (range-sockets.ts): the request written,
// the answer's head read and judged, its body streamed to the sink (range-body.ts), each
// under its timeout and the caller's abort, and the end settled once: a failure destroys
// the connection, a complete answer hands it back to the pool.
import { BodyStream, type BodyOwner, type BodySink } from './range-body.js'
import type { Conn, Exchange } from './range-connection.js'
import { bodyTimeout, brokenConnection, headersTimeout, overLength } from './range-failures.js'
import { keepsConnection, MAX_HEADER_BYTES, NotPlainAnswer, parseHead, requestText, type AnswerHead, type HeadJudge, type ParsedHead } from './range-head.js'

export interface ExchangeRequest {
  url: URL
  headers: Record<string, string>
  judge: HeadJudge
  sink: BodySink
  signal?: AbortSignal
  /** The answer's head has come: a failure from now on is not a kept connection's idle close. */
  answering(): void
  /** The answer is complete: the connection may carry the next request (`keepAlive`) or is to be closed. */
  release(keepAlive: boolean): void
}

export interface ExchangeTimeouts {
  headersMs: number
  bodyIdleMs: number
}

/** One request and its answer on `conn`: the answer's head, once its body is all handed on. */
export function exchange(conn: Conn, request: ExchangeRequest, timeouts: ExchangeTimeouts): Promise<AnswerHead> {
  return new Promise((resolve, reject) => new RangeExchange(conn, request, timeouts, resolve, reject).start())
}

class RangeExchange implements Exchange, BodyOwner {
  /** The head's bytes so far; null once it has come. */
  private head: Buffer | null = Buffer.alloc(0)
  private answer: AnswerHead | null = null
  /** The body on its way to the sink, once the head said how long it is. */
  private body: BodyStream | null = null
  private keepAlive = true
  over = false
  private headersTimer: ReturnType<typeof setTimeout> | undefined
  private readonly origin: string

  constructor(
    private readonly conn: Conn,
    private readonly request: ExchangeRequest,
    private readonly timeouts: ExchangeTimeouts,
    private readonly resolve: (answer: AnswerHead) => void,
    private readonly reject: (error: Error) => void,
  ) {
    this.origin = request.url.origin
  }

  /** Watches the time and the abort, takes the socket's bytes from now on, and writes the request. */
  start(): void {
    this.watch()
    this.conn.exchange = this
    const { url, headers } = this.request
    this.conn.socket.write(requestText(url, headers), 'latin1')
  }

  private watch(): void {
    const { headersMs, bodyIdleMs } = this.timeouts
    const { socket } = this.conn
    this.headersTimer = setTimeout(() => this.finish(headersTimeout(this.origin, headersMs)), headersMs)
    this.request.signal?.addEventListener('abort', this.onAbort, { once: true })
    socket.setTimeout(bodyIdleMs)
    socket.on('timeout', this.onIdle)
  }

  private unwatch(): void {
    const { socket } = this.conn
    clearTimeout(this.headersTimer)
    socket.setTimeout(0)
    socket.off('timeout', this.onIdle)
    this.request.signal?.removeEventListener('abort', this.onAbort)
  }

  private readonly onIdle = (): void => this.finish(bodyTimeout(this.origin, this.timeouts.bodyIdleMs))
  private readonly onAbort = (): void => this.finish(this.request.signal!.reason as Error)

  room(): Buffer | undefined {
    if (this.body === null || this.over) return undefined
    return this.body.room()
  }

  take(bytes: Buffer): boolean {
    if (this.over) return true
    if (this.head === null) return this.body!.take(bytes)
    return this.takeHead(this.head, bytes)
  }

  broken(e: Error): void {
    this.finish(brokenConnection(this.origin, e))
  }

  resume(): void {
    this.conn.socket.resume()
  }

  /** Gathers the head's bytes until its blank line; then the answer begins with what came after it. */
  private takeHead(before: Buffer, bytes: Buffer): boolean {
    const head = Buffer.concat([before, bytes])
    const at = head.indexOf('\r\n\r\n')
    if (at < 0) {
      this.head = head
      if (head.length > MAX_HEADER_BYTES) this.finish(new NotPlainAnswer('headers too long'))
      return true
    }
    this.head = null
    clearTimeout(this.headersTimer)
    this.request.answering()
    return this.begin(parseHead(head.subarray(0, at).toString('latin1')), head.subarray(at + 4))
  }

  /** The head is judged: the answer ends here (not one of ours, or no body), or its body starts with `rest`. */
  private begin(parsed: ParsedHead, rest: Buffer): boolean {
    const length = this.request.judge(parsed)
    if (length instanceof NotPlainAnswer) {
      this.finish(length)
      return false
    }
    this.answer = { status: parsed.status, headers: parsed.headers }
    this.keepAlive = keepsConnection(parsed)
    if (length === 0) {
      this.finish(rest.length > 0 ? overLength(this.origin) : null)
      return true
    }
    this.body = new BodyStream(this.request.sink, length, this.origin, this)
    return rest.length > 0 ? this.body.take(rest) : true
  }

  /** Ends the exchange, once: with `error` the connection is destroyed, complete it is released to the pool. */
  finish(error: Error | null): void {
    if (this.over) return
    this.over = true
    this.unwatch()
    this.conn.exchange = null
    if (error) {
      this.conn.socket.destroy()
      this.reject(error)
      return
    }
    this.conn.reused = true
    this.request.release(this.keepAlive)
    this.resolve(this.answer!)
  }
}
