// What the NFS tests share: `transferfs serve-nfs` started as a user would (from TypeScript,
// with the account's environment), its first line read for the port, and stopped with SIGTERM
// within a deadline; libnfs's tools pointed at it; and a small RPC client of our own for what
// no client we did not write can do (malformed calls, one handle kept across a restart).
import { spawn, type ChildProcess } from 'node:child_process'
import net from 'node:net'
import { CLI } from '../mount/harness.js'
import { run, TS_REGISTER, type RunResult } from '../support/mount.js'
import { XdrReader, XdrWriter } from '../../src/nfs/xdr.js'

export interface NfsServe {
  port: number
  child: ChildProcess
  /** stderr so far (the server's log). */
  log(): string
  /** SIGTERM, then SIGKILL after 10 s; resolves with the exit code once it is gone. */
  stop(): Promise<number | null>
}

/** ms: how long serve-nfs may take to print its first line (it signs in and lists nothing before). */
const START_MS = 60_000

export async function serveNfs(args: string[] = []): Promise<NfsServe> {
  const child = spawn(process.execPath, ['--import', TS_REGISTER, CLI, 'serve-nfs', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve-nfs printed nothing within ${START_MS} ms: ${stderr}`)), START_MS)
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
      const line = stdout.split('\n')[0] as string
      if (stdout.includes('\n')) {
        clearTimeout(timer)
        try {
          resolve((JSON.parse(line) as { port: number }).port)
        } catch {
          reject(new Error(`serve-nfs's first line is not JSON: ${line}`))
        }
      }
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`serve-nfs ended (${code}) before serving: ${stderr}`))
    })
  })
  return {
    port,
    child,
    log: () => stderr,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      try {
        return await exited
      } finally {
        clearTimeout(timer)
      }
    },
  }
}

/** A libnfs URL of `path` (absolute in the export) on the server at `port`. */
export function nfsUrl(port: number, path: string): string {
  return `nfs://127.0.0.1${path}?version=3&nfsport=${port}&mountport=${port}`
}

/** One of libnfs's tools (nfs-ls, nfs-cat), bounded. */
export function libnfs(tool: 'nfs-ls' | 'nfs-cat', url: string, opts: { timeoutMs?: number; encoding?: 'latin1' } = {}): Promise<RunResult> {
  return run(tool, [url], { timeoutMs: opts.timeoutMs ?? 30_000, encoding: opts.encoding })
}

/** The names nfs-ls lists (its last column: names here hold no newline). */
export function listedNames(out: string): string[] {
  return out.split('\n').filter(Boolean).map((line) => line.replace(/^\S+\s+\d+\s+\d+\s+\d+\s+\d+\s/, ''))
}

export const NFS_PROGRAM = 100003
export const MOUNT_PROGRAM = 100005

/** An RPC client over one TCP connection: calls written with our encoder, replies read whole. */
export class RpcClient {
  private buffered = Buffer.alloc(0)
  private waiting: Array<() => void> = []
  private closed = false
  private xid = 1
  /** The AUTH_UNIX uid and gid the calls carry (root's unless set). */
  uid = 0

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, d])
      this.wake()
    })
    socket.on('close', () => {
      this.closed = true
      this.wake()
    })
    socket.on('error', () => {})
  }

  /**
   * Connects from a reserved source port (600-1023, as root; the server serves no other) unless
   * `unprivileged`, which takes any port the system gives.
   */
  static async connect(port: number, opts: { unprivileged?: boolean } = {}): Promise<RpcClient> {
    for (let attempt = 0; ; attempt++) {
      const localPort = opts.unprivileged ? undefined : 600 + Math.floor(Math.random() * 424)
      try {
        return await new Promise<RpcClient>((resolve, reject) => {
          const s = net.connect({ host: '127.0.0.1', port, localAddress: '127.0.0.1', localPort }, () => resolve(new RpcClient(s)))
          s.once('error', reject)
        })
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt > 20) throw err
      }
    }
  }

  private wake(): void {
    const w = this.waiting
    this.waiting = []
    for (const f of w) f()
  }

  /** Resolves true once the server has closed the connection, false after `ms`. */
  async closedWithin(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms
    while (!this.closed && Date.now() < deadline) await new Promise<void>((r) => { this.waiting.push(r); setTimeout(r, 100) })
    return this.closed
  }

  /** The next whole record (one fragment, as the server writes them); rejects after 10 s or at close. */
  async reply(): Promise<XdrReader> {
    const deadline = Date.now() + 10_000
    for (;;) {
      if (this.buffered.length >= 4) {
        const n = this.buffered.readUInt32BE(0) & 0x7fff_ffff
        if (this.buffered.length >= 4 + n) {
          const record = this.buffered.subarray(4, 4 + n)
          this.buffered = this.buffered.subarray(4 + n)
          return new XdrReader(Buffer.from(record))
        }
      }
      if (this.closed) throw new Error('connection closed before a reply')
      if (Date.now() > deadline) throw new Error('no reply within 10 s')
      await new Promise<void>((r) => { this.waiting.push(r); setTimeout(r, 100) })
    }
  }

  /** Writes raw bytes (malformed input). */
  send(bytes: Buffer): void {
    this.socket.write(bytes)
  }

  /** A call's record (mark included), AUTH_UNIX with `uid`. */
  callRecord(prog: number, vers: number, proc: number, args: (w: XdrWriter) => void = () => {}): Buffer {
    const cred = new XdrWriter().uint32(0).string('test').uint32(this.uid).uint32(this.uid).uint32(0).bytes()
    const w = new XdrWriter().uint32(0).uint32(this.xid++).uint32(0).uint32(2).uint32(prog).uint32(vers).uint32(proc)
      .uint32(1).opaque(cred).uint32(0).opaque(Buffer.alloc(0))
    args(w)
    const record = Buffer.from(w.bytes())
    record.writeUInt32BE((0x8000_0000 | (record.length - 4)) >>> 0, 0)
    return record
  }

  /**
   * Calls and returns the reply's results after its accepted header, having checked the xid,
   * MSG_ACCEPTED and the accept status (0 unless `acceptStat` says otherwise).
   */
  async call(prog: number, vers: number, proc: number, args?: (w: XdrWriter) => void, acceptStat = 0): Promise<XdrReader> {
    const record = this.callRecord(prog, vers, proc, args)
    const xid = record.readUInt32BE(4)
    this.send(record)
    const r = await this.reply()
    const got = [r.uint32(), r.uint32(), r.uint32()]
    if (got[0] !== xid || got[1] !== 1 || got[2] !== 0) throw new Error(`not an accepted reply to ${xid}: ${got.join(' ')}`)
    r.uint32()
    r.opaque(400) // verifier
    const stat = r.uint32()
    if (stat !== acceptStat) throw new Error(`accept status ${stat}, ${acceptStat} expected`)
    return r
  }

  close(): void {
    this.socket.destroy()
  }
}
