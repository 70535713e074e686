// Connections through an HTTP proxy: a CONNECT tunnel to the origin, asked through undici's
// own CONNECT support (the one its ProxyAgent is built on), with TLS to the origin made on
// the tunnel by whoever asked for it: undici's connector for the pools and warm
// connections (tunnelConnector), range-sockets.ts for the connections that carry file
// bytes. ProxyAgent itself would own the pools and their connector, leaving the warm
// connections and the range sockets out, and reports a refused tunnel only as text. Every
// failure names the proxy, never its credentials, and none of it waits longer than the
// connection's deadline.
import type { Socket } from 'node:net'
import type { SecureContext } from 'node:tls'
import { Pool, type buildConnector, type Dispatcher } from 'undici'
import { ProxyError } from './errors.js'
import type { ProxyServer } from './proxy.js'

export interface TunnelOptions {
  /** TLS to an https:// proxy trusts what connections to the service trust. */
  secureContext: SecureContext
  /** ms: to reach the proxy, and again for its answer to CONNECT. */
  connectMs: number
}

export class Tunnels {
  /** One pool per proxy: each CONNECT takes a connection of its own, which becomes the tunnel. */
  private readonly pools = new Map<string, Pool>()
  private closed = false

  constructor(private readonly options: TunnelOptions) {}

  /**
   * A tunnel through `proxy` to hostname:port: a socket that carries the origin's bytes as
   * they are. ProxyError when it cannot be had; the caller's abort as it is.
   */
  async open(proxy: ProxyServer, hostname: string, port: number, signal?: AbortSignal): Promise<Socket> {
    const target = `${hostname.includes(':') && !hostname.startsWith('[') ? `[${hostname}]` : hostname}:${port}`
    let answer: Dispatcher.ConnectData
    try {
      answer = await this.pool(proxy).connect({
        path: target,
        headers: { host: target, ...(proxy.authorization ? { 'proxy-authorization': proxy.authorization } : {}) },
        signal,
      })
    } catch (err) {
      if (signal?.aborted) throw signal.reason
      throw unreachable(proxy, err, this.options.connectMs)
    }
    const { statusCode } = answer
    const socket = answer.socket as Socket
    if (statusCode >= 200 && statusCode < 300) {
      // The TLS socket made on it reports its failures; the tunnel itself must not crash the process.
      socket.on('error', () => undefined)
      return socket
    }
    socket.on('error', () => undefined).destroy()
    throw refused(proxy, target, statusCode)
  }

  close(): void {
    this.closed = true
    const pools = [...this.pools.values()]
    this.pools.clear()
    for (const pool of pools) void pool.destroy().catch(() => undefined)
  }

  private pool(proxy: ProxyServer): Pool {
    let pool = this.pools.get(proxy.origin)
    if (!pool) {
      if (this.closed) throw new ProxyError('the client is closed', 'CLIENT_CLOSED', proxy.label)
      const { connectMs, secureContext } = this.options
      pool = new Pool(proxy.origin, { connect: { timeout: connectMs, secureContext }, headersTimeout: connectMs })
      this.pools.set(proxy.origin, pool)
    }
    return pool
  }
}

/**
 * undici's connector for an origin reached through `proxy`: the tunnel, then TLS to the
 * origin on it with `tls` (the connector a direct connection would use, so both trust
 * the same roots and keep the same deadline).
 */
export function tunnelConnector(tunnels: Tunnels, proxy: ProxyServer, tls: buildConnector.connector): buildConnector.connector {
  return (options, callback) => {
    const port = Number(options.port || (options.protocol === 'https:' ? 443 : 80))
    tunnels.open(proxy, options.hostname, port).then(
      (socket) => (options.protocol === 'https:' ? tls({ ...options, httpSocket: socket }, callback) : callback(null, socket)),
      (err: Error) => callback(err, null),
    )
  }
}

function unreachable(proxy: ProxyServer, err: unknown, connectMs: number): ProxyError {
  const e = err as { code?: string; message?: string } | null
  const code = e?.code ?? null
  const why = code === 'UND_ERR_HEADERS_TIMEOUT' ? `no answer to CONNECT within ${connectMs} ms` : (e?.message ?? String(err))
  return new ProxyError(`cannot reach the proxy ${proxy.label}: ${why}${code ? ` (${code})` : ''}`, code, proxy.label, null, { cause: err })
}

function refused(proxy: ProxyServer, target: string, status: number): ProxyError {
  // Some proxies (tinyproxy) answer credentials they refuse with 401 rather than 407.
  if (status === 407 || status === 401) {
    const message = proxy.authorization
      ? `the proxy ${proxy.label} wants credentials: it refused the user name and password of its URL (HTTP ${status})`
      : `the proxy ${proxy.label} wants credentials (HTTP ${status}): give them in its URL, http://user:password@host:port`
    return new ProxyError(message, null, proxy.label, status)
  }
  if (status >= 500) return new ProxyError(`the proxy ${proxy.label} could not reach ${target} (HTTP ${status})`, null, proxy.label, status)
  return new ProxyError(`the proxy ${proxy.label} refused the tunnel to ${target} (HTTP ${status})`, null, proxy.label, status)
}
