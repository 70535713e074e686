// The NFSv3 server: NFS and MOUNT on one TCP port of 127.0.0.1 (no portmapper: the client is
// given port= and mountport=), each connection's byte stream split into records, each record
// answered as a call. A record past the limit, or a connection that sends no RPC at all,
// ends that connection and nothing else; a malformed call is answered and the connection
// goes on. The filesystem core is the one the FUSE adapter would drive.
import net from 'node:net'
import path from 'node:path'
import { silentLogger, type Logger } from '../base/log.js'
import type { FileSystemCore } from '../vfs/core.js'
import { dispatch, type Deadlines } from './dispatch.js'
import { FileHandles, HANDLE_TABLE_FILE } from './handles.js'
import { Listings } from './listings.js'
import { MAX_IO_BYTES } from './nfs3-read.js'
import { OpenFiles } from './open-files.js'
import type { NfsContext } from './procedure.js'
import { markRecord, RecordError, RecordReader } from './records.js'
import { AcceptStat, authError, AuthStat, failedCall, readCall } from './rpc.js'
import { WriteFiles } from './write-files.js'

/** The only address served: the server is for this machine's own NFS client. */
export const NFS_HOST = '127.0.0.1'
/** A record holds at most one WRITE of wtmax and its header (credentials and handle are small). */
const MAX_RECORD_BYTES = MAX_IO_BYTES + 64 * 1024
/**
 * KiB an NFS client reads ahead of a sequential reader: Linux's client keeps 15 READs of rsize
 * in flight (its read_ahead_kb on an NFS mount); the read path counts reads that far ahead as
 * one sequential run.
 */
export const NFS_READ_AHEAD_KB = (15 * MAX_IO_BYTES) / 1024
/** Bytes of replies a connection may have waiting to be sent before it is read further. */
const MAX_UNSENT_BYTES = 16 * MAX_IO_BYTES
/** Source ports below this are reserved: only root binds them. */
const RESERVED_PORTS = 1024
/** Calls of one connection served at once; past it the connection is read no further until some are answered. */
const MAX_CALLS_IN_FLIGHT = 64

export interface NfsServerOptions {
  core: FileSystemCore
  /** Where the table of long paths' handles is kept (handles.ts); null keeps it in memory only. */
  dataDir: string | null
  /** 0: any free port. */
  port?: number
  deadlines: Deadlines
  log?: Logger
  /** The only uid (besides root's) whose calls are served (the account's owner); null: any. */
  ownerUid: number | null
  /**
   * Serve only connections from a reserved source port (below 1024): the system's NFS client
   * uses one (macOS's resvport), and an unprivileged process cannot.
   */
  reservedPortsOnly: boolean
}

export class NfsServer {
  private readonly sockets = new Set<net.Socket>()
  private closing: Promise<void> | null = null

  private constructor(
    private readonly server: net.Server,
    private readonly cx: NfsContext,
    private readonly deadlines: Deadlines,
    private readonly reservedPortsOnly: boolean,
  ) {}

  /** Listens on 127.0.0.1 at `port`; rejects when it cannot (EADDRINUSE). */
  static async start(opts: NfsServerOptions): Promise<NfsServer> {
    const log = opts.log ?? silentLogger
    const handles = await FileHandles.open(opts.dataDir === null ? null : path.join(opts.dataDir, HANDLE_TABLE_FILE))
    const cx: NfsContext = { core: opts.core, handles, reads: new OpenFiles(opts.core, log), writes: new WriteFiles(opts.core, log), listings: new Listings(), log, ownerUid: opts.ownerUid }
    const server = net.createServer({ noDelay: true })
    const nfs = new NfsServer(server, cx, opts.deadlines, opts.reservedPortsOnly)
    server.on('connection', (socket) => nfs.serve(socket))
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen({ host: NFS_HOST, port: opts.port ?? 0, exclusive: true }, () => {
        server.off('error', reject)
        resolve()
      })
    })
    server.on('error', (err) => log.warn(`NFS server: ${err.message}`))
    return nfs
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port
  }

  private serve(socket: net.Socket): void {
    const { log } = this.cx
    const peer = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`
    if (this.closing) {
      socket.destroy()
      return
    }
    this.sockets.add(socket)
    // Calls from an unprivileged port are each refused, so that the client says why rather than waits.
    const unprivileged = this.reservedPortsOnly && (socket.remotePort ?? 0) >= RESERVED_PORTS
    if (unprivileged) log.warn(`NFS connection from ${peer}: not from a reserved port (below ${RESERVED_PORTS}); its calls are refused`)
    const reader = new RecordReader(MAX_RECORD_BYTES)
    let inFlight = 0
    // The connection is read no further while too many of its calls run or too many of its
    // replies wait to be sent: a client that sends and never reads holds a bounded amount.
    const busy = (): boolean => inFlight >= MAX_CALLS_IN_FLIGHT || socket.writableLength > MAX_UNSENT_BYTES
    const maybeResume = (): void => {
      if (!busy() && socket.isPaused() && !socket.destroyed) socket.resume()
    }
    const answer = (reply: Buffer): void => {
      if (!socket.destroyed) socket.write(markRecord(reply))
    }
    socket.on('drain', maybeResume)
    socket.on('data', (chunk: Buffer) => {
      let records: Array<ReturnType<typeof readCall>>
      try {
        records = reader.push(chunk).map(readCall)
      } catch (err) {
        log.warn(`NFS connection from ${peer}: ${err instanceof RecordError ? err.message : `unreadable records (${String(err)})`}; closing it`)
        socket.destroy()
        return
      }
      for (const incoming of records) {
        if (incoming.kind === 'drop') {
          log.debug(`NFS connection from ${peer}: ${incoming.why}; record dropped`)
          continue
        }
        if (incoming.kind === 'refused') {
          answer(incoming.reply)
          continue
        }
        if (unprivileged) {
          answer(authError(incoming.call.xid, AuthStat.TOOWEAK))
          continue
        }
        inFlight++
        const { xid } = incoming.call
        void dispatch(incoming.call, this.cx, this.deadlines)
          .catch((err: unknown) => {
            // dispatch answers every failure itself; this is a last guard, not a path.
            log.error(`NFS call ${xid}: ${String(err)}`)
            return failedCall(xid, AcceptStat.SYSTEM_ERR)
          })
          .then(answer)
          .finally(() => {
            inFlight--
            maybeResume()
          })
      }
      if (busy()) socket.pause()
    })
    socket.on('error', (err) => log.debug(`NFS connection from ${peer}: ${err.message}`))
    socket.on('close', () => this.sockets.delete(socket))
  }

  /** Stops listening, ends every connection and lets go of the files held open. Idempotent; the core is the caller's to shut down. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      const closed = new Promise<void>((resolve) => this.server.close(() => resolve()))
      for (const s of this.sockets) s.destroy()
      await closed
      await this.cx.reads.closeAll()
      await this.cx.writes.closeAll()
      await this.cx.handles.flush()
    })())
  }
}
