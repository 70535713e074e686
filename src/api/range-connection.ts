// Opening one TLS connection for range answers (range-sockets.ts), directly or in a
// proxy's tunnel, whose decrypted bytes go straight to the exchange under way on it: into
// the sink's own memory when it names some, else into one read buffer every connection
// reuses, never into a fresh buffer per TLS record.
import type { OnReadOpts, Socket } from 'node:net'
import { connect, type ConnectionOptions, type SecureContext, type TLSSocket } from 'node:tls'
import { connectionError } from './errors.js'
import { closedConnection, connectTimeout } from './range-failures.js'

/** One request's way through an answer: headers, then body bytes to the sink. */
export interface Exchange {
  /** Takes the bytes that arrived; false pauses the socket. */
  take(bytes: Buffer): boolean
  /** Where the socket decrypts the next bytes to: the sink's room, or undefined for READ_BUFFER. */
  room(): Buffer | undefined
  /** The socket ended or failed before the answer did. */
  broken(error: Error): void
}

export interface Conn {
  socket: TLSSocket
  exchange: Exchange | null
  /** Has carried an answer: a failure before any byte of the next one may be a server's idle close. */
  reused: boolean
}

export interface ConnectOptions {
  secureContext: SecureContext
  /** A proxy's tunnel to `url`'s origin, or null to connect directly (tunnel.ts). */
  tunnel(url: URL, signal?: AbortSignal): Promise<Socket | null>
  connectMs: number
}

/** Decrypted bytes land here, for every socket, unless the sink names its room: each read is handed on (copied) before the next. */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024)

/** A new TLS connection to `url`'s origin, once its handshake is done; `closed` when its socket closes, at any time after. */
export async function openConnection(url: URL, options: ConnectOptions, closed: (conn: Conn) => void, signal?: AbortSignal): Promise<Conn> {
  const tunnel = await options.tunnel(url, signal)
  return new Promise<Conn>((resolve, reject) => {
    const conn: Conn = { socket: null as unknown as TLSSocket, exchange: null, reused: false }
    const tlsOptions = connectionOptions(url, options.secureContext, conn)
    const socket = connect(tunnel ? { ...tlsOptions, socket: tunnel } : tlsOptions)
    if (tunnel) readInto(socket, tlsOptions.onread)
    conn.socket = socket
    const timer = setTimeout(() => fail(connectTimeout(url.origin, options.connectMs)), options.connectMs)
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
      conn.exchange?.broken(closedConnection(url.origin))
      closed(conn)
    })
  })
}

/** The TLS options of a connection to `url`'s origin whose reads go to `conn`'s exchange. */
function connectionOptions(url: URL, secureContext: SecureContext, conn: Conn): ConnectionOptions & { onread: OnReadOpts } {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  // `onread` is Node's for TLS sockets too (tls.connect), though its types leave it out.
  return {
    host,
    port: Number(url.port || 443),
    // SNI only for names, never for an address.
    servername: /^[\d.]+$|:/.test(host) ? undefined : host,
    secureContext,
    ALPNProtocols: ['http/1.1'],
    onread: {
      // Asked again after every callback (and once now, before any exchange): the
      // memory the next decrypted bytes go to. An exchange that is over never names
      // the sink's memory again, so what a socket still decrypts after it lands here.
      buffer: () => conn.exchange?.room() ?? READ_BUFFER,
      callback: (n: number, buf: Uint8Array) => conn.exchange?.take(n === buf.length && Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, n)) ?? true,
    },
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
