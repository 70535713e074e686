// What the benchmarks share: the local service in a process of its own (as a real service
// would be: its CPU is measured apart and it never shares an event loop with the code that
// measures), a client signed in as its main user, the transferfs command (from TypeScript
// or from the build) signed in and mounted in the background, its test controls, CPU
// seconds and peak RSS of a process, and the figures printed and written by results.ts.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { Agent, request } from 'undici'
import { TransferClient } from '../../src/api/client.js'
import type { ServiceAnnouncement, Transfer } from '../../src/api/types.js'
import { DEFAULT_SETTINGS } from '../../src/config/settings.js'
import { startBackgroundMount } from '../../src/fuse/background.js'
import { unmountWithHelper } from '../../src/fuse/mount-helper.js'
import { withoutProxyVariables } from '../tinyproxy.js'
import { type BenchRow, writeResults } from './results.js'

export const MB = 1e6
export const MiB = 1024 * 1024
export const GiB = 1024 * MiB
/** MiB the mount's peak RSS may reach in any workload: memoryCacheBytes (default) + 150 MiB. */
export const RSS_BOUND_MIB = DEFAULT_SETTINGS.memoryCacheBytes / MiB + 150
const fromTs = import.meta.url.endsWith('.ts')
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), fromTs ? '../..' : '../../..')
export const cliEntry = path.join(root, fromTs ? 'src/cli/main.ts' : 'dist/src/cli/main.js')
/** A script of scripts/bench, from TypeScript or from the build, as this one runs. */
export const benchScript = (name: string) => path.join(root, fromTs ? `scripts/bench/${name}.ts` : `dist/scripts/bench/${name}.js`)

export function sh(cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<{ ms: number; stdout: string }> {
  const t0 = performance.now()
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { env: env ?? process.env, maxBuffer: 256 * 1024 * 1024, timeout: 600_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')}: ${stderr || err.message}`))
      else resolve({ ms: performance.now() - t0, stdout })
    })
  })
}

/** User + system CPU seconds of a process so far. */
export async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** CPU seconds every core of the machine has been busy so far (all processes and the kernel, from /proc/stat). */
export async function machineBusySeconds(): Promise<number> {
  // user nice system idle iowait irq softirq steal: all but idle and iowait.
  const f = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  return [0, 1, 2, 5, 6, 7].reduce((sum, i) => sum + (f[i] ?? 0), 0) / 100
}

/** MiB: the process's peak resident set since it started or since resetPeakRss. */
export async function peakRssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024
}

/** Starts a new peak-RSS window (the kernel's clear_refs 5), so each workload gets its own peak. */
export async function resetPeakRss(pid: number): Promise<void> {
  await writeFile(`/proc/${pid}/clear_refs`, '5')
}

/** MB/s of `bytes` in `ms`. */
export const mbps = (bytes: number, ms: number) => bytes / MB / (ms / 1000)
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** The folder of `transfer` in the mount's inbox/ (listing it first). */
export async function transferFolder(mountDir: string, transfer: Transfer): Promise<string> {
  const inbox = path.join(mountDir, 'inbox')
  const name = (await sh('ls', [inbox])).stdout.split('\n').find((n) => n.endsWith(`(${transfer.id})`))
  if (!name) throw new Error(`transfer ${transfer.id} is not in ${inbox}`)
  return path.join(inbox, name)
}

/** The first file of `transfer` on the mount. */
export async function fileOnMount(mountDir: string, transfer: Transfer): Promise<string> {
  return path.join(await transferFolder(mountDir, transfer), transfer.files[0]!.filename!)
}

export type Rows = BenchRow[]

/** CPU seconds per GiB of `bytes` read. */
export const perGiB = (cpuS: number, bytes: number) => cpuS / (bytes / GiB)

/**
 * User + system CPU seconds of a bash script's children, from the output of the `times` it
 * ends with (its last two lines: the shell's own, then its children's); NaN without them.
 */
export function childrenCpuSeconds(stdout: string): number {
  const children = stdout.trim().split('\n').at(-1) ?? ''
  const [user, sys] = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]))
  return (user ?? NaN) + (sys ?? NaN)
}

/** Empties the kernel's page cache (dirty pages written first), so the next read is cold everywhere, the service's disk included. */
export async function dropCaches(): Promise<void> {
  await sh('sync', [])
  await writeFile('/proc/sys/vm/drop_caches', '3')
}

/**
 * The floor a verified read is held against: curl of the URL piped into md5sum, a fetch
 * that checks every byte. Its time and the CPU seconds of both processes (bash's `times`
 * gives its children's), best of `tries` by CPU.
 */
export async function verifiedFetchFloor(ca: string, url: string, tries = 2): Promise<{ ms: number; cpuS: number }> {
  let best = { ms: Infinity, cpuS: Infinity }
  for (let i = 0; i < tries; i++) {
    const script = '"$@" | md5sum >/dev/null; times'
    const r = await sh('bash', ['-c', script, 'bash', 'curl', '-sS', '--fail', '--cacert', ca, url])
    const cpuS = childrenCpuSeconds(r.stdout)
    if (cpuS < best.cpuS) best = { ms: r.ms, cpuS }
  }
  return best
}

export interface Counters {
  routes: Record<string, number>
  bytesServed: number
  bytesHashed: number
  /** TLS connections the file server accepted. */
  fileConnections: number
  inFlight: number
}

export interface BenchService extends ServiceAnnouncement {
  pid: number
  /** A test control of docs/local-service.md (`/_emulator` + p). */
  control<T = unknown>(method: 'GET' | 'POST' | 'DELETE', p: string, body?: unknown): Promise<T>
  counters(): Promise<Counters>
  /** Transfers seeded into the main user's inbox, their details (download URLs) included. */
  seed(count: number, shape: { files?: number; fileSize?: number; subjectPrefix?: string }): Promise<Transfer[]>
}

export interface BenchWorld {
  home: string
  mountDir: string
  service: BenchService
  /** The environment of the transferfs commands: the service and folders of their own. */
  env: NodeJS.ProcessEnv
  /** Signed in as the service's main user. */
  client: TransferClient
  /** Requests of the benchmark's own that trust the service's certificate. */
  dispatcher: Agent
  rows: Rows
  /** Signs the command in (once) and mounts in the background; the daemon's pid. */
  mount(): Promise<number>
  /** Stops the mount's daemon and waits until the folder is free. */
  unmount(): Promise<void>
  /** A curl command line's first words that trust the service (curl is the raw stream every figure is held against). */
  curl: string[]
}

async function startServiceProcess(home: string, demo: boolean): Promise<{ child: ChildProcess; service: BenchService }> {
  const child = spawn(process.execPath, [...process.execArgv, cliEntry, 'serve', '--controls', ...(demo ? ['--demo'] : []), '--data-dir', path.join(home, 'service')], {
    // Its request log would drown the figures.
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  const first = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! })
    lines.once('line', (l) => resolve(l))
    child.once('exit', (code) => reject(new Error(`transferfs serve ended (exit ${code}) before announcing itself`)))
  })
  const announcement = JSON.parse(first) as ServiceAnnouncement
  const agent = new Agent({ connect: { ca: await readFile(announcement.ca, 'utf8') } })
  const origin = new URL(announcement.baseUrl).origin
  const control = async <T>(method: 'GET' | 'POST' | 'DELETE', p: string, body?: unknown): Promise<T> => {
    const res = await request(`${origin}/_emulator${p}`, {
      method, dispatcher: agent, body: body === undefined ? undefined : JSON.stringify(body),
      headers: { 'x-api-key': announcement.apiKey, 'content-type': 'application/json' },
    })
    const text = await res.body.text()
    if (res.statusCode !== 200) throw new Error(`control ${method} ${p}: ${res.statusCode} ${text}`)
    return JSON.parse(text) as T
  }
  const service: BenchService = {
    ...announcement,
    pid: child.pid!,
    control,
    counters: () => control<Counters>('GET', '/counters'),
    seed: async () => [],
  }
  child.once('exit', () => { void agent.close() })
  return { child, service }
}

/**
 * Runs `measure` in a fresh world (service started, client signed in) and prints its rows,
 * then ends everything (mount, service, files) whether it succeeded or not.
 */
export async function withBenchWorld(
  name: string,
  options: { demo?: boolean; env?: NodeJS.ProcessEnv },
  measure: (w: BenchWorld) => Promise<void>,
): Promise<void> {
  const home = await mkdtemp(path.join(os.tmpdir(), `transferfs-bench-${name}-`))
  const mountDir = path.join(home, 'mnt')
  const { child, service } = await startServiceProcess(home, options.demo ?? false)
  const env: NodeJS.ProcessEnv = {
    ...withoutProxyVariables(process.env),
    TRANSFERFS_API_URL: service.baseUrl, TRANSFERFS_API_KEY: service.apiKey, TRANSFERFS_CA: service.ca,
    TRANSFERFS_CONFIG_DIR: path.join(home, 'config'), TRANSFERFS_CACHE_DIR: path.join(home, 'cache'), TRANSFERFS_DATA_DIR: path.join(home, 'data'),
    ...options.env,
  }
  const client = new TransferClient({ apiUrl: service.baseUrl, apiKey: service.apiKey, ca: await readFile(service.ca, 'utf8') })
  service.seed = async (count, shape) => {
    const { transferids } = await service.control<{ transferids: string[] }>('POST', '/inbox/seed', { to: service.user.email, count, ...shape })
    return Promise.all(transferids.map((id) => client.transfers.details(id, { filesLimit: -1 })))
  }
  let pid = 0
  let signedIn = false
  const dispatcher = new Agent({ connect: { ca: await readFile(service.ca, 'utf8') } })
  const w: BenchWorld = {
    home, mountDir, service, env, client, dispatcher, rows: [],
    curl: ['curl', '-sS', '--fail', '--cacert', service.ca, '-o', '/dev/null'],
    async mount() {
      if (!signedIn) {
        const login = execFile(process.execPath, [...process.execArgv, cliEntry, 'login', '--email', service.user.email, '--password-stdin'], { env })
        login.stdin!.end(service.user.password)
        await new Promise<void>((resolve, reject) => login.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`login: exit ${code}`)))))
        signedIn = true
      }
      // BENCH_CPU_PROF=<folder>: each mount writes a V8 CPU profile there when it stops (Node refuses --cpu-prof in NODE_OPTIONS).
      const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : []
      // BENCH_NODE_ARGS: more options for the mount's node (V8 flags such as --trace-gc), split at spaces.
      const extra = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []
      pid = (await startBackgroundMount({ args: [cliEntry, 'mount', mountDir, '--foreground'], execArgv: [...process.execArgv, ...prof, ...extra], env, logFile: path.join(home, 'mount.log') })).pid
      return pid
    },
    async unmount() {
      if (!pid) return
      const gone = pid
      pid = 0
      try { process.kill(gone, 'SIGTERM') } catch {}
      for (let i = 0; i < 100; i++) {
        try { process.kill(gone, 0) } catch { break }
        await new Promise((r) => setTimeout(r, 100))
      }
      await unmountWithHelper(mountDir)
    },
  }
  try {
    await client.auth.login(service.user.email, service.user.password)
    await measure(w)
  } finally {
    await w.unmount()
    await client.close()
    await dispatcher.close()
    child.kill('SIGTERM')
    await new Promise((r) => child.once('exit', r))
    await rm(home, { recursive: true, force: true })
  }
  await writeResults(root, name, w.rows)
}

export type TreeEntry = ['d', string] | ['f', string, number]

/** Every folder and file below `dir` (relative paths, file sizes), as the null filesystem takes them. */
export async function treeOf(dir: string): Promise<TreeEntry[]> {
  const { stdout } = await sh('find', [dir, '-mindepth', '1', '-printf', '%y\\t%s\\t%P\\n'])
  return stdout.split('\n').filter(Boolean).flatMap((line): TreeEntry[] => {
    const [type, size, rel] = line.split('\t') as [string, string, string]
    return type === 'd' ? [['d', rel]] : type === 'f' ? [['f', rel, Number(size)]] : []
  })
}

/** How a null filesystem is mounted beyond its tree; unset, as null-fs.ts does by default. */
export interface NullFsOptions {
  /** The kernel readahead to give its mount (root only); unset or 0 keeps the kernel's 128 KiB. */
  readAheadKb?: number
  /** Its process's environment (TRANSFERFS_FUSE_LIBRARY picks its FUSE library); default this process's. */
  env?: NodeJS.ProcessEnv
}

/** Mounts the null filesystem (null-fs.ts) with `entries` at home/null, runs `use`, unmounts it. */
export async function withNullFs<T>(home: string, entries: TreeEntry[], use: (dir: string, pid: number) => Promise<T>, options: NullFsOptions = {}): Promise<T> {
  const dir = path.join(home, 'null')
  const specFile = path.join(home, 'null-spec.json')
  await writeFile(specFile, JSON.stringify({ entries, ...(options.readAheadKb ? { readAheadKb: options.readAheadKb } : {}) }))
  const child = spawn(process.execPath, [...process.execArgv, benchScript('null-fs'), dir, specFile], { stdio: ['ignore', 'pipe', 'inherit'], env: options.env ?? process.env })
  try {
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', () => resolve())
      child.once('exit', (code) => reject(new Error(`null-fs ended (exit ${code}) before it was mounted`)))
    })
    return await use(dir, child.pid!)
  } finally {
    const exited = new Promise<boolean>((r) => {
      if (child.exitCode !== null || child.signalCode !== null) return r(true)
      child.once('exit', () => r(true))
      setTimeout(() => r(false), 5000).unref()
    })
    child.kill('SIGTERM')
    if (!(await exited)) child.kill('SIGKILL')
    await unmountWithHelper(dir)
  }
}

/** A transferfs command of this build (as the mount runs it) in `env`, a world's: its time and output; rejects on a failure. */
export function transferfs(env: NodeJS.ProcessEnv, args: string[]): Promise<{ ms: number; stdout: string }> {
  return sh(process.execPath, [...process.execArgv, cliEntry, ...args], env)
}

/** Whether `ready` came true within `timeoutMs`, asked every `everyMs`. */
export async function waitUntil(ready: () => Promise<boolean>, timeoutMs: number, everyMs: number): Promise<boolean> {
  const until = performance.now() + timeoutMs
  for (;;) {
    if (await ready()) return true
    if (performance.now() >= until) return false
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

/**
 * Counters from zero, once no request has been under way for 2 s: a mount's own calls after
 * it starts or after a listing (its arrival checks, the pages it is still reading) are then
 * over, and what follows is the workload's alone. What was counted until then.
 */
export async function quietCounters(service: BenchService): Promise<Counters> {
  let counted: Counters
  for (let idle = 0; idle < 10;) {
    await new Promise((r) => setTimeout(r, 200))
    counted = await service.counters()
    idle = counted.inFlight > 0 ? 0 : idle + 1
  }
  await service.control('POST', '/counters/reset')
  return counted!
}
