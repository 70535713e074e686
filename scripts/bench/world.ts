// What the benchmarks share: the local service in a temporary home, a client signed in
// as its main user, the transferfs command (from TypeScript or from the build) signed in
// and mounted in the background, the daemon's peak RSS, and the figures printed as a table.
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { TransferClient } from '../../src/api/client.js'
import { startService, type ServiceOptions } from '../../src/emulator/index.js'
import { startBackgroundMount } from '../../src/fuse/background.js'

export const MB = 1e6
const fromTs = import.meta.url.endsWith('.ts')
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), fromTs ? '../..' : '../../..')
const cliEntry = path.join(root, fromTs ? 'src/cli/main.ts' : 'dist/src/cli/main.js')

export function sh(cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<{ ms: number; stdout: string }> {
  const t0 = performance.now()
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { env: env ?? process.env, maxBuffer: 64 * 1024 * 1024, timeout: 600_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')}: ${stderr || err.message}`))
      else resolve({ ms: performance.now() - t0, stdout })
    })
  })
}

export type Rows = Array<[string, string]>

export interface BenchWorld {
  home: string
  mountDir: string
  service: Awaited<ReturnType<typeof startService>>
  caPem: string
  /** The environment of the transferfs commands: the service and folders of their own. */
  env: NodeJS.ProcessEnv
  /** Signed in as the service's main user. */
  client: TransferClient
  rows: Rows
}

/**
 * Runs `measure` in a fresh world (service started, client signed in) and prints its rows,
 * then ends everything (mount, service, files) whether it succeeded or not.
 */
export async function withBenchWorld(
  name: string,
  options: { service: Omit<ServiceOptions, 'dataDir' | 'controls'>; env?: NodeJS.ProcessEnv },
  measure: (w: BenchWorld, mount: () => Promise<number>) => Promise<void>,
): Promise<void> {
  const home = await mkdtemp(path.join(os.tmpdir(), `transferfs-bench-${name}-`))
  const mountDir = path.join(home, 'mnt')
  const service = await startService({ ...options.service, controls: true, dataDir: path.join(home, 'service') })
  const caPem = await readFile(service.ca, 'utf8')
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TRANSFERFS_API_URL: service.baseUrl, TRANSFERFS_API_KEY: service.apiKey, TRANSFERFS_CA: service.ca,
    TRANSFERFS_CONFIG_DIR: path.join(home, 'config'), TRANSFERFS_CACHE_DIR: path.join(home, 'cache'), TRANSFERFS_DATA_DIR: path.join(home, 'data'),
    ...options.env,
  }
  const client = new TransferClient({ apiUrl: service.baseUrl, apiKey: service.apiKey, ca: caPem })
  const w: BenchWorld = { home, mountDir, service, caPem, env, client, rows: [] }
  let pid = 0
  /** Signs the command in and mounts in the background; the daemon's pid. */
  const mount = async (): Promise<number> => {
    const login = execFile(process.execPath, [...process.execArgv, cliEntry, 'login', '--email', service.user.email, '--password-stdin'], { env })
    login.stdin!.end(service.user.password)
    await new Promise<void>((resolve, reject) => login.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`login: exit ${code}`)))))
    pid = (await startBackgroundMount({ args: [cliEntry, 'mount', mountDir, '--foreground'], env, logFile: path.join(home, 'mount.log') })).pid
    return pid
  }
  try {
    await client.auth.login(service.user.email, service.user.password)
    await measure(w, mount)
    if (pid) w.rows.push(['mount daemon peak RSS', `${(await peakRssKiB(pid) / 1024).toFixed(0)} MiB`])
  } finally {
    if (pid) {
      try { process.kill(pid, 'SIGTERM') } catch {}
      await new Promise((r) => setTimeout(r, 3000))
      await sh('fusermount', ['-uz', mountDir]).catch(() => {})
    }
    await client.close()
    await service.close()
    await rm(home, { recursive: true, force: true })
  }
  const width = Math.max(...w.rows.map((r) => r[0].length))
  process.stdout.write(w.rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n') + '\n')
  // The same figures for scripts and for comparing runs: bench-results/<name>-<time>.json.
  const out = path.join(root, 'bench-results', `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`)
  await mkdir(path.dirname(out), { recursive: true })
  await writeFile(out, JSON.stringify(Object.fromEntries(w.rows), null, 2) + '\n')
  process.stdout.write(`(${path.relative(process.cwd(), out)})\n`)
}

async function peakRssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0)
}
