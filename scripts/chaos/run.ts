// `npm run chaos -- --minutes N --fault-rate R`: the mount against a local service that
// misbehaves at random on every route (5xx, 429 with Retry-After, resets mid-body, stalls,
// corrupted bodies and hashes), with several readers reading files at random offsets,
// files copied into outbox/ meanwhile, and the mount killed (SIGKILL) and started again at
// random moments. At the end, with the faults lifted, it checks that every byte read was
// right, that every outbox entry arrived exactly once with the right bytes, and that no
// read outlived the mount's read deadline; it prints a summary and exits 1 on any breach.
// Loopback only; it stops by itself and undoes every mount and process it made.
import { execFile, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { TransferClient } from '../../src/api/client.js'
import { startService } from '../../src/emulator/index.js'
import type { FaultSpec } from '../../src/emulator/faults.js'
import { startBackgroundMount } from '../../src/fuse/background.js'
import { unmountWithHelper } from '../../src/fuse/mount-helper.js'
import { Agent, request } from 'undici'

const MiB = 1024 * 1024
const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '1' },
    'fault-rate': { type: 'string', default: '0.2' },
    readers: { type: 'string', default: '3' },
  },
})
const minutes = Number(args.minutes)
const faultRate = Number(args['fault-rate'])
const readers = Number(args.readers)
if (!(minutes > 0) || !(faultRate >= 0 && faultRate <= 1) || !(readers >= 1)) {
  process.stderr.write('usage: chaos [--minutes N] [--fault-rate 0..1] [--readers N]\n')
  process.exit(2)
}
/** ms: the mount's read deadline; a read that takes longer broke the promise. */
const READ_TIMEOUT_MS = 30_000
/** ms a read may exceed the deadline by (scheduling on a busy machine), before it counts. */
const DEADLINE_SLACK_MS = 2_000
/** ms left at the end, faults lifted, for what is queued to be sent. */
const DRAIN_MS = 120_000

const fromTs = import.meta.url.endsWith('.ts')
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), fromTs ? '../..' : '../../..')
const cliEntry = path.join(root, fromTs ? 'src/cli/main.ts' : 'dist/src/cli/main.js')

function sh(cmd: string, argv: string[], env?: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, argv, { env: env ?? process.env, timeout: 120_000, maxBuffer: 16 * MiB }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }))
  })
}

const md5 = (b: Buffer): string => createHash('md5').update(b).digest('hex')
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
/** A dead mount answers so; the reader waits for the next one. */
const DEAD = new Set(['ENOTCONN', 'ECONNABORTED', 'ENXIO', 'ENOENT'])

/** The faults of one rate, spread over every route: each request meets one with probability ≈ rate. */
function faultsOf(rate: number): FaultSpec[] {
  const share = (w: number) => rate * w
  return [
    { route: '*', kind: 'status', status: 500, probability: share(0.15) },
    { route: '*', kind: 'status', status: 502, probability: share(0.05) },
    { route: '*', kind: 'status', status: 503, probability: share(0.15) },
    { route: '*', kind: 'status', status: 429, probability: share(0.15) },
    { route: '*', kind: 'reset', probability: share(0.15) },
    { route: '*', kind: 'stall', ms: 3000, probability: share(0.05) },
    // Corruption applies to file bytes and range hashes only.
    { route: 'download', kind: 'corrupt', probability: share(0.3) },
    { route: 'rangehash', kind: 'corrupt', probability: share(0.3) },
  ]
}

interface Tally {
  reads: number
  bytesRead: number
  wrong: string[]
  /** Failed reads by errno (a killed mount's answers apart). */
  failed: Record<string, number>
  interrupted: number
  /** Reads that returned fewer bytes than asked. */
  short: number
  latencies: number[]
  copies: number
  copyRetries: number
  restarts: number
}

async function main(): Promise<number> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'transferfs-chaos-'))
  const mountDir = path.join(home, 'mnt')
  const service = await startService({ controls: true, dataDir: path.join(home, 'service') })
  const ca = await readFile(service.ca, 'utf8')
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TRANSFERFS_API_URL: service.baseUrl, TRANSFERFS_API_KEY: service.apiKey, TRANSFERFS_CA: service.ca,
    TRANSFERFS_CONFIG_DIR: path.join(home, 'config'), TRANSFERFS_CACHE_DIR: path.join(home, 'cache'), TRANSFERFS_DATA_DIR: path.join(home, 'data'),
    TRANSFERFS_READ_TIMEOUT_MS: String(READ_TIMEOUT_MS), TRANSFERFS_SETTLE_MS: '500', TRANSFERFS_LOG_LEVEL: 'debug',
    // Caches smaller than the files, so reads keep going to the service.
    TRANSFERFS_MEMORY_CACHE_BYTES: '16M', TRANSFERFS_DISK_CACHE_BYTES: '24M',
  }
  const client = new TransferClient({ apiUrl: service.baseUrl, apiKey: service.apiKey, ca })
  const dispatcher = new Agent({ connect: { ca } })
  const controls = async (method: 'GET' | 'POST' | 'DELETE', p: string, body?: unknown): Promise<unknown> => {
    const res = await request(`${new URL(service.baseUrl).origin}/_emulator${p}`, {
      method, dispatcher, headers: { 'x-api-key': service.apiKey, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return res.body.json()
  }
  let pid = 0
  const logs: string[] = []
  const t: Tally = { reads: 0, bytesRead: 0, wrong: [], failed: {}, interrupted: 0, short: 0, latencies: [], copies: 0, copyRetries: 0, restarts: 0 }
  const problems: string[] = []
  let stop = false
  // Kept unless the run ends passed: a run cut short by an error keeps its logs too.
  let keepHome = true
  /** True while the killer has the mount down. */
  let restarting = false
  /** When the mount was killed (ms since the epoch). */
  const kills: number[] = []
  const onSignal = () => { stop = true }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    // Files to read: received transfers, their bytes kept here to compare with.
    await client.auth.login(service.user.email, service.user.password)
    const files: Array<{ path: string; data: Buffer }> = []
    for (const [i, size] of [3 * MiB + 17, 12 * MiB, 40 * MiB + 5].entries()) {
      const data = randomBytes(size)
      const init = await client.transfers.initialize({ subject: `chaos source ${i}`, to: [service.user.email] })
      await client.upload.uploadFile({ transferUrl: init.transferurl, transferId: init.transferid, transferKey: init.transferkey, fileName: `f${i}.bin`, source: { size, read: async (s, e) => data.subarray(s, e) } })
      await client.transfers.complete(init.transferid, init.transferkey)
      files.push({ path: path.join(mountDir, 'by-id', init.transferid, `f${i}.bin`), data })
    }
    const login = spawn(process.execPath, [...process.execArgv, cliEntry, 'login', '--email', service.user.email, '--password-stdin'], { env, stdio: ['pipe', 'ignore', 'inherit'] })
    login.stdin.end(`${service.user.password}\n`)
    const loginCode = await new Promise<number | null>((resolve) => login.on('exit', resolve))
    if (loginCode !== 0) throw new Error(`login: exit ${loginCode}`)

    let mounted: Promise<void> = Promise.resolve()
    const startMount = async () => {
      const log = path.join(home, `mount-${logs.length}.log`)
      logs.push(log)
      pid = (await startBackgroundMount({ args: [cliEntry, 'mount', mountDir, '--foreground'], env, logFile: log, readyTimeoutMs: 60_000 })).pid
    }
    await startMount()
    await controls('POST', '/counters/reset')
    for (const f of faultsOf(faultRate)) await controls('POST', '/faults', f)

    const made = await sh('mkdir', ['-p', path.join(mountDir, 'outbox', service.user.email)])
    if (made.code !== 0) throw new Error(`a recipient folder in outbox/: ${made.stderr}`)
    const endAt = Date.now() + minutes * 60_000
    const reader = async () => {
      while (!stop && Date.now() < endAt) {
        await mounted
        const f = pick(files)
        const length = Math.min(f.data.length, 1 + Math.floor(Math.random() * (Math.random() < 0.5 ? 64 * 1024 : 2 * MiB)))
        const position = Math.floor(Math.random() * (f.data.length - length + 1))
        const started = Date.now()
        try {
          // O_DIRECT: every read reaches the mount, none is served by the kernel's page cache.
          const fh = await open(f.path, constants.O_RDONLY | constants.O_DIRECT)
          try {
            const buf = Buffer.alloc(length)
            const t0 = Date.now()
            const { bytesRead } = await fh.read(buf, 0, length, position)
            t.latencies.push(Date.now() - t0)
            t.reads++
            t.bytesRead += bytesRead
            // Fewer bytes than asked is a short read (a kill can cut a large O_DIRECT read
            // between its FUSE requests); the bytes given must still be the file's.
            if (bytesRead < length) {
              if (kills.some((at) => at >= t0 - 1000)) t.short++
              else t.failed.short = (t.failed.short ?? 0) + 1
            }
            if (!buf.subarray(0, bytesRead).equals(f.data.subarray(position, position + bytesRead))) {
              t.wrong.push(`${path.basename(f.path)} [${position}, +${bytesRead}): md5 ${md5(buf.subarray(0, bytesRead))} vs ${md5(f.data.subarray(position, position + bytesRead))}`)
            }
          } finally {
            await fh.close().catch(() => {})
          }
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code ?? 'error'
          if (DEAD.has(code) && (await mountDown())) t.interrupted++
          else {
            t.failed[code] = (t.failed[code] ?? 0) + 1
            t.latencies.push(Date.now() - started)
          }
          await sleep(200)
        }
      }
    }
    /** True when the mount is not answering now (killed): such failures are expected. */
    const mountDown = async () => (await sh('stat', ['-f', mountDir])).code !== 0 || restarting

    // Outbox: files copied into a recipient folder of the account itself, so each arrives in its inbox.
    const expected = new Map<string, string>()
    const srcDir = path.join(home, 'src')
    await sh('mkdir', ['-p', srcDir])
    const copier = async () => {
      for (let n = 0; !stop && Date.now() < endAt - 5000; n++) {
        await mounted
        const name = `chaos-${n}.bin`
        const data = randomBytes(4096 + Math.floor(Math.random() * 8 * MiB))
        await writeFile(path.join(srcDir, name), data)
        expected.set(name, md5(data))
        for (;;) {
          await mounted
          const r = await sh('cp', [path.join(srcDir, name), path.join(mountDir, 'outbox', service.user.email, name)])
          if (r.code === 0) break
          // The mount died mid-copy: copy it again once it is back, as a user would.
          t.copyRetries++
          await sleep(500)
          if (stop) return
        }
        t.copies++
        await sleep(1000 + Math.random() * 3000)
      }
    }
    const killer = async () => {
      while (!stop && Date.now() < endAt - 15_000) {
        await sleep(10_000 + Math.random() * 15_000)
        if (stop || Date.now() >= endAt - 15_000) return
        restarting = true
        let release!: () => void
        mounted = new Promise((r) => (release = r))
        kills.push(Date.now())
        try { process.kill(pid, 'SIGKILL') } catch {}
        await sleep(300)
        await unmountWithHelper(mountDir)
        await startMount()
        t.restarts++
        restarting = false
        release()
      }
    }
    await Promise.all([...Array.from({ length: readers }, reader), copier(), killer()])
    const counters = await controls('GET', '/counters') as { routes: Record<string, number> }

    // Faults lifted: what is queued goes out; then the checks.
    await controls('DELETE', '/faults')
    const drainEnd = Date.now() + DRAIN_MS
    const pendingInOutbox = async () => (await sh('find', [path.join(mountDir, 'outbox'), '-type', 'f'])).stdout.trim().split('\n').filter(Boolean)
    while (Date.now() < drainEnd && (await pendingInOutbox()).length > 0) await sleep(1000)
    const left = await pendingInOutbox()
    if (left.length) problems.push(`still in outbox/ after ${DRAIN_MS / 1000} s without faults: ${left.map((l) => path.basename(l)).join(', ')}`)

    // Each copied file: one complete transfer of its name, holding exactly that file.
    const arrived = new Map<string, Array<{ id: string; files: string[] }>>()
    for await (const tr of client.transfers.inboxAll()) {
      if (!tr.subject.startsWith('chaos-')) continue
      const details = await client.transfers.details(tr.id, { filesLimit: -1 })
      arrived.set(tr.subject, [...(arrived.get(tr.subject) ?? []), { id: tr.id, files: details.files.map((f) => `${f.filename} ${f.md5}`) }])
    }
    for (const [name, sum] of expected) {
      const got = arrived.get(name) ?? []
      if (got.length !== 1) problems.push(`${name}: arrived as ${got.length} transfers ${JSON.stringify(got)}`)
      else if (got[0]!.files.join() !== `${name} ${sum}`) problems.push(`${name}: arrived holding ${JSON.stringify(got[0]!.files)}, sent ${sum}`)
    }
    for (const name of arrived.keys()) if (!expected.has(name)) problems.push(`${name}: arrived but was never copied`)
    if (t.wrong.length) problems.push(`${t.wrong.length} reads returned wrong bytes: ${t.wrong.slice(0, 5).join('; ')}`)
    const failedReads = Object.values(t.failed).reduce((a, b) => a + b, 0)
    if (failedReads) problems.push(`${failedReads} reads failed: ${JSON.stringify(t.failed)}`)
    const slow = t.latencies.filter((ms) => ms > READ_TIMEOUT_MS + DEADLINE_SLACK_MS)
    if (slow.length) problems.push(`${slow.length} reads outlived the ${READ_TIMEOUT_MS / 1000} s deadline (longest ${Math.max(...slow)} ms)`)
    let deadlineAnswers = 0
    for (const log of logs) deadlineAnswers += ((await readFile(log, 'utf8').catch(() => '')).match(/no answer within/g) ?? []).length
    if (deadlineAnswers) problems.push(`the FUSE adapter answered ${deadlineAnswers} operations at their deadline`)

    const sorted = [...t.latencies].sort((a, b) => a - b)
    const q = (p: number) => sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : 0
    const summary = {
      minutes, faultRate, readers, reads: t.reads, mibRead: +(t.bytesRead / MiB).toFixed(1), wrongReads: t.wrong.length,
      failedReads: t.failed, readsInterruptedByKills: t.interrupted, shortReadsCutByKills: t.short,
      readLatencyMs: { p50: q(0.5), p99: q(0.99), max: sorted.at(-1) ?? 0 },
      copies: t.copies, copyRetriesAfterKills: t.copyRetries, arrived: arrived.size, mountRestarts: t.restarts,
      requestsByRoute: counters.routes, deadlineAnswers, problems,
    }
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`)
    process.stdout.write(problems.length ? `chaos: FAILED (${problems.length} problems)\n` : 'chaos: passed\n')
    keepHome = problems.length > 0
    return problems.length ? 1 : 0
  } finally {
    try { if (pid) process.kill(pid, 'SIGKILL') } catch {}
    await sleep(300)
    await unmountWithHelper(mountDir)
    await client.close().catch(() => {})
    await dispatcher.close().catch(() => {})
    await service.close().catch(() => {})
    // A failed run keeps its folder (the mount's logs) for a look; a passed one leaves nothing.
    if (keepHome) process.stderr.write(`chaos: logs kept in ${home}\n`)
    else await rm(home, { recursive: true, force: true }).catch(() => {})
  }
}

process.exitCode = await main().catch((err: unknown) => {
  process.stderr.write(`chaos: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  return 1
})
