// The transport: one keep-alive undici Pool per origin (the API and each file server),
// TLS trusting Node's own roots, the system's store and the configured CA (trust.ts),
// directly or through the proxy the routes name (proxy.ts, tunnel.ts), a timeout on every
// request (connect, headers, body idle) and the caller's AbortSignal. Failures to reach
// the service become NetworkError; HTTP statuses are returned as they are, for the
// layers above to judge.
import type { Socket } from 'node:net'
import type { SecureContext } from 'node:tls'
import { buildConnector, Pool } from 'undici'
import type { Dispatcher } from 'undici'
import { Connectivity } from './connectivity.js'
import { connectionError, NetworkError } from './errors.js'
import type { ClientOptions } from './options.js'
import { DIRECT_ROUTES, proxyFor, type ProxyServer } from './proxy.js'
import { NotPlainAnswer, RangeSockets, type BodySink } from './range-sockets.js'
import { trustingContext } from './trust.js'
import { tunnelConnector, Tunnels } from './tunnel.js'

export type HttpMethod = 'GET' | 'POST'

export interface HttpRequest {
  url: URL
  method: HttpMethod
  headers?: Record<string, string>
  body?: Buffer | string
  signal?: AbortSignal
}

export interface HttpResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Dispatcher.ResponseData['body']
}

/** A URL fit for a message: no query string, because queries carry transfer keys and tokens. */
export function redactUrl(url: URL | string): string {
  const u = typeof url === 'string' ? new URL(url) : url
  return `${u.origin}${u.pathname}`
}

export type TransportOptions = Pick<ClientOptions, 'timeouts' | 'ca' | 'systemCa' | 'proxy' | 'connectionsPerOrigin' | 'offline'>

export class Transport {
  private readonly pools = new Map<string, Pool>()
  private closed = false
  /** Whether the service answers at all, learnt from every request made here. */
  readonly connectivity: Connectivity
  private readonly timeouts: TransportOptions['timeouts']

  constructor(private readonly options: TransportOptions) {
    this.timeouts = options.timeouts
    this.connectivity = new Connectivity(options.offline, async (origin) => {
      const res = await this.request({ url: new URL(`${origin}/`), method: 'GET' })
      res.body.destroy()
    })
  }

  private tlsContext: SecureContext | undefined
  private rangeSockets: RangeSockets | null = null
  private proxyTunnels: Tunnels | null = null

  /** The connections range bodies are streamed on (range-sockets.ts). */
  private ranges(): RangeSockets {
    if (this.closed) throw new NetworkError('the client is closed', 'CLIENT_CLOSED')
    return (this.rangeSockets ??= new RangeSockets({
      secureContext: this.secureContext(),
      tunnel: (url, signal) => this.tunnel(url, signal),
      connectMs: this.timeouts.connectMs,
      headersMs: this.timeouts.headersMs,
      bodyIdleMs: this.timeouts.bodyIdleMs,
      // Range streams and range hashes, each up to connectionsPerOrigin at once.
      connections: 2 * this.options.connectionsPerOrigin,
    }))
  }

  /**
   * One TLS context for every connection: given the roots, each new connection built a
   * context of its own (parsing the certificates again), a visible share of a cold read.
   */
  private secureContext(): SecureContext {
    this.tlsContext ??= trustingContext(this.options.systemCa ?? [], this.options.ca)
    return this.tlsContext
  }

  /** The proxy a connection to `url`'s origin goes through, or null: direct. */
  private proxyOf(url: URL): ProxyServer | null {
    return proxyFor(this.options.proxy ?? DIRECT_ROUTES, url)
  }

  private tunnels(): Tunnels {
    return (this.proxyTunnels ??= new Tunnels({ secureContext: this.secureContext(), connectMs: this.timeouts.connectMs }))
  }

  /** A tunnel to `url`'s origin when a proxy is on its way, else null (range sockets connect directly). */
  private async tunnel(url: URL, signal?: AbortSignal): Promise<Socket | null> {
    const proxy = this.proxyOf(url)
    if (!proxy) return null
    return this.tunnels().open(proxy, url.hostname.replace(/^\[|\]$/g, ''), Number(url.port || 443), signal)
  }

  private pool(origin: string): Pool {
    let pool = this.pools.get(origin)
    if (!pool) {
      if (this.closed) throw new NetworkError('the client is closed', 'CLIENT_CLOSED')
      const url = new URL(origin)
      const direct = buildConnector({ secureContext: this.secureContext(), timeout: this.timeouts.connectMs })
      const proxy = this.proxyOf(url)
      pool = new Pool(origin, {
        connections: this.options.connectionsPerOrigin,
        connect: proxy ? tunnelConnector(this.tunnels(), proxy, direct) : direct,
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyIdleMs,
      })
      this.pools.set(origin, pool)
    }
    return pool
  }

  /**
   * A read from `url`'s file server is likely soon: open a range connection now unless one is
   * open, so the first read's first byte waits for no handshake. Range streams and range hashes
   * both take those connections; the pool's own would sit idle through a whole read, one
   * handshake more than the reads need, and opens when a fallback or a thumbnail asks.
   * (A file server is https; a plain http one gets no connection ahead.)
   */
  preconnect(url: URL): void {
    if (!this.closed && url.protocol === 'https:') this.ranges().warm(url)
  }

  /**
   * GET of bytes [start, end) of `url` (`headers` ask for them), the body handed to `sink` as
   * it arrives, on connections of their own (range-sockets.ts). NotPlainAnswer when the
   * answer is anything but those bytes, before any of it is handed on: the caller asks
   * through request() then, which reports every other answer as it should.
   */
  async streamRange(url: URL, headers: Record<string, string>, start: number, end: number, sink: BodySink, signal?: AbortSignal): Promise<void> {
    if (url.protocol !== 'https:') throw new NotPlainAnswer('not https')
    // What the sink itself throws is the caller's, passed on as it is.
    let sinkFailed = false
    const watched: BodySink = (bytes) => {
      const failed = (e: unknown): never => {
        sinkFailed = true
        throw e
      }
      try {
        return sink(bytes)?.catch(failed)
      } catch (e) {
        return failed(e)
      }
    }
    // Bound once: the room is asked after every TLS record, and needs no wrapper.
    if (sink.room) watched.room = sink.room.bind(sink)
    try {
      await this.ranges().get(url, headers, start, end, watched, signal)
      this.connectivity.answered()
    } catch (err) {
      if (sinkFailed) throw err
      throw this.rangeFailure(err, url, signal)
    }
  }

  /** Send one request; the caller must consume or destroy the body. */
  async request(req: HttpRequest): Promise<HttpResponse> {
    const { url } = req
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new NetworkError(`unsupported address ${redactUrl(url)}`, 'BAD_URL')
    }
    try {
      const res = await this.pool(url.origin).request({
        path: `${url.pathname}${url.search}`,
        method: req.method,
        headers: req.headers,
        body: req.body,
        signal: req.signal,
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyIdleMs,
      })
      // undici's body emits 'error' (RequestAbortedError) when a caller destroys it before
      // its end, which is how unwanted bodies are dropped here: without a listener that
      // would crash the process. Readers still see errors through iteration and text().
      res.body.on('error', () => {})
      this.connectivity.answered()
      return { status: res.statusCode, headers: res.headers, body: res.body }
    } catch (err) {
      const known = toNetworkError(err, req)
      this.connectivity.failed(url.origin, known)
      throw known
    }
  }

  /**
   * A GET whose whole answer is at most `limit` bytes (a range hash), as text: on the range
   * connections (range-sockets.ts: getShort), a cold read asking one beside each 5 MiB it
   * streams; through request() where that answer is not one they parse (it is asked again).
   */
  async requestShortText(req: HttpRequest & { method: 'GET' }, limit: number): Promise<{ status: number; headers: HttpResponse['headers']; text: string }> {
    if (req.url.protocol === 'https:') {
      try {
        const answer = await this.ranges().getShort(req.url, req.headers ?? {}, limit, req.signal)
        this.connectivity.answered()
        return { status: answer.status, headers: answer.headers, text: answer.body.toString('utf8') }
      } catch (err) {
        const failure = this.rangeFailure(err, req.url, req.signal)
        if (!(failure instanceof NotPlainAnswer)) throw failure
      }
    }
    return this.requestText(req)
  }

  /**
   * What a failed request on the range connections comes to: NotPlainAnswer as it is (the
   * server answered, just not in a way parsed there), anything else as a network error,
   * each counted for the connectivity watch.
   */
  private rangeFailure(err: unknown, url: URL, signal?: AbortSignal): unknown {
    if (err instanceof NotPlainAnswer) {
      this.connectivity.answered()
      return err
    }
    const known = toNetworkError(err, { url, signal })
    if (known instanceof NetworkError) this.connectivity.failed(url.origin, known)
    return known
  }

  /** Send one request and read the whole body as text. */
  async requestText(req: HttpRequest): Promise<{ status: number; headers: HttpResponse['headers']; text: string }> {
    const res = await this.request(req)
    try {
      const text = await res.body.text()
      return { status: res.status, headers: res.headers, text }
    } catch (err) {
      throw toNetworkError(err, req)
    }
  }

  async close(): Promise<void> {
    this.closed = true
    this.connectivity.close()
    this.rangeSockets?.close()
    this.proxyTunnels?.close()
    const pools = [...this.pools.values()]
    this.pools.clear()
    await Promise.all(pools.map((pool) => pool.close().catch(() => pool.destroy())))
  }
}

/** Turn what undici or the socket threw into a NetworkError; an abort by the caller stays an abort. */
export function toNetworkError(err: unknown, req: { url: URL; signal?: AbortSignal }): unknown {
  if (req.signal?.aborted) return req.signal.reason ?? err
  if (err instanceof NetworkError) return err
  return connectionError(redactUrl(req.url), req.url.host, err)
}

/** First value of a header. */
export function headerValue(headers: HttpResponse['headers'], name: string): string | undefined {
  const v = headers[name]
  return Array.isArray(v) ? v[0] : v
}
