// A real HTTP proxy for the tests and the benchmarks: Debian's tinyproxy (package
// tinyproxy-bin, the program without the system service), started with a config file,
// port and log of its own, on 127.0.0.1 only, Basic authentication when asked for, and
// stopped by stop(). Its log (LogLevel Connect) holds one line per CONNECT, which is how
// a test sees which origins went through it.
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { connect, createServer } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { PROXY_VARIABLES } from '../src/api/proxy.js'

export interface ProxyOptions {
  /** Basic authentication: CONNECT without these answers 407. tinyproxy takes letters, digits and - . _ in both. */
  user?: string
  password?: string
  /** The only ports CONNECT may reach (tinyproxy answers 403 for the rest); every port when absent. */
  connectPorts?: number[]
}

export interface RunningProxy {
  port: number
  /** The proxy's process (for its CPU seconds). */
  pid: number
  /** Its URL, with `credentials` (user:password, as they go into a URL) when given. */
  url(credentials?: string): string
  /** The host:port of every CONNECT in its log so far, in order. */
  connects(): Promise<string[]>
  /** Its log's lines so far. */
  log(): Promise<string[]>
  /** What connects() and log() see starts after the lines so far. */
  clearLog(): Promise<void>
  stop(): Promise<void>
}

/**
 * `env` without the proxy variables: the local service runs on this machine, where the
 * proxy a developer's desktop is set up for cannot reach it. A test or benchmark that wants
 * a proxy sets one of its own.
 */
export function withoutProxyVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const names = new Set<string>([...PROXY_VARIABLES.https, ...PROXY_VARIABLES.http, ...PROXY_VARIABLES.noProxy])
  return Object.fromEntries(Object.entries(env).filter(([name]) => !names.has(name)))
}

/** A port nothing listens on now (the kernel's pick); the proxy is started on it at once. */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

export async function startProxy(options: ProxyOptions = {}): Promise<RunningProxy> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'transferfs-proxy-'))
  const logFile = path.join(dir, 'tinyproxy.log')
  const port = await freePort()
  const lines = [
    `Port ${port}`,
    'Listen 127.0.0.1',
    'Allow 127.0.0.1',
    'Timeout 600',
    'MaxClients 200',
    `LogFile "${logFile}"`,
    'LogLevel Connect',
    ...(options.user ? [`BasicAuth ${options.user} ${options.password ?? ''}`] : []),
    ...(options.connectPorts ?? []).map((p) => `ConnectPort ${p}`),
  ]
  const config = path.join(dir, 'tinyproxy.conf')
  await writeFile(config, `${lines.join('\n')}\n`)
  const child = spawn('tinyproxy', ['-d', '-c', config], { stdio: ['ignore', 'ignore', 'pipe'] })
  let said = ''
  child.stderr!.on('data', (b: Buffer) => (said += b.toString()))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve)
    child.once('error', (err) => reject(new Error(`tinyproxy could not be started (Debian: apt install tinyproxy-bin): ${err.message}`)))
  })
  await spawned
  for (let i = 0; !(await answers(port)); i++) {
    if (child.exitCode !== null || i > 100) {
      child.kill('SIGKILL')
      throw new Error(`tinyproxy did not start on port ${port}: ${said}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  const all = async () => (await readFile(logFile, 'utf8').catch(() => '')).split('\n').filter(Boolean)
  /** Lines before this many are left out: the log as clearLog() left it. */
  let from = 0
  const log = async () => (await all()).slice(from)
  return {
    port,
    pid: child.pid!,
    url: (credentials) => `http://${credentials ? `${credentials}@` : ''}127.0.0.1:${port}`,
    log,
    connects: async () => (await log()).flatMap((l) => /\bCONNECT (\S+) HTTP/.exec(l)?.[1] ?? []),
    clearLog: async () => {
      from = (await all()).length
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM')
        const gone = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5000))])
        if (!gone) child.kill('SIGKILL')
      }
      await rm(dir, { recursive: true, force: true })
    },
  }
}
