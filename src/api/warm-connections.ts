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

  constructor(
    private readonly connect: buildConnector.connector,
    private readonly origin: URL,
  ) {}

  /** Opens a connection unless one is ready or being opened. */
  open(): void {
    if (this.usable() || this.opening) return
    const u = this.origin
    const target = { hostname: u.hostname, host: u.host, protocol: u.protocol, port: u.port || (u.protocol === 'https:' ? '443' : '80') }
    this.opening = new Promise<void>((resolve) => {
      this.connect(target, (err, socket) => {
        this.opening = null
        if (!err && socket) {
          // Idle until used: it must neither keep the process alive nor crash it on a reset.
          socket.on('error', () => undefined).unref()
          this.ready = socket
        }
        resolve()
      })
    })
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
    this.ready?.destroy()
    this.ready = null
  }

  private usable(): boolean {
    return this.ready !== null && !this.ready.destroyed
  }

  private take(): Socket | null {
    const socket = this.usable() ? this.ready : null
    this.ready = null
    return socket?.ref() ?? null
  }
}
