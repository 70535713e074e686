// A connection to an origin opened ahead of its first request. The first read of a file
// otherwise pays for a TCP and TLS handshake to the file server before its first byte:
// CPU on this machine, two round trips on a real link. Opened when a read is likely
// (a listing), it is handed to the first request that needs a new connection; one that
// is still being opened is waited for rather than opened twice.
import type { Socket } from 'node:net'
import type { buildConnector } from 'undici'

export class WarmConnection {
  private ready: Socket | null = null
  private opening: Promise<void> | null = null
  private closed = false

  constructor(
    private readonly connect: buildConnector.connector,
    private readonly origin: URL,
  ) {}

  /** Opens a connection unless one is ready or being opened. */
  open(): void {
    if (this.closed || this.usable() || this.opening) return
    const u = this.origin
    const target = { hostname: u.hostname, host: u.host, protocol: u.protocol, port: u.port || (u.protocol === 'https:' ? '443' : '80') }
    let ended = false
    const opening = new Promise<void>((resolve) => {
      const done = (socket: Socket | null): void => {
        ended = true
        this.opening = null
        if (socket && this.closed) socket.destroy()
        else if (socket) {
          // Idle until used: it must neither keep the process alive nor crash it on a reset.
          socket.on('error', () => undefined).unref()
          this.ready = socket
        }
        resolve()
      }
      try {
        this.connect(target, (err, socket) => done(err ? null : socket))
      } catch {
        // Opening ahead is a nicety: the first request opens its own connection.
        done(null)
      }
    })
    // Kept only while under way: a connector that failed at once has ended it already, and a
    // kept promise that has ended would stop every later attempt.
    if (!ended) this.opening = opening
  }

  /** The connector the pool uses: the warm connection if there is one, else a new one. */
  readonly connector: buildConnector.connector = (options, callback) => {
    const hand = (): void => {
      const socket = this.take()
      // Answered on a later tick, as a new connection is: undici's pool hangs the request
      // when the connector calls back before it has returned.
      if (socket) process.nextTick(callback, null, socket)
      else this.connect(options, callback)
    }
    if (this.opening) void this.opening.then(hand)
    else hand()
  }

  close(): void {
    this.closed = true
    this.ready?.destroy()
    this.ready = null
  }

  /** Open both ways: a connection the server has begun to close would fail its first request. */
  private usable(): boolean {
    return this.ready !== null && !this.ready.destroyed && this.ready.readable && this.ready.writable
  }

  private take(): Socket | null {
    const socket = this.usable() ? this.ready : null
    this.ready = null
    return socket?.ref() ?? null
  }
}
