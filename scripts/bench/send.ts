// Benchmark of sending through the mount against the local service, in one run. Not a
// test: it prints figures (and a ratio, which travels between machines better than MB/s).
//
//   node --import ./test/fuse/fixtures/register-ts.mjs scripts/bench/send.ts   (from TypeScript)
//   npm run build && node dist/scripts/bench/send.js                             (after a build)
//
// What it measures: `cp` of a 1 GiB file into outbox/ (the time cp takes: local-disk
// speed, since bytes only go to the staging folder), the time from the start of cp until
// the transfer is complete (settle time included, given separately), the same file
// uploaded directly with the client (initialize, chunks, Complete), their ratio, and the
// mount daemon's peak RSS.
import { execFile } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { TransferClient } from '../../src/api/client.js'
import { startService } from '../../src/emulator/index.js'
import { startBackgroundMount } from '../../src/fuse/background.js'

const MB = 1e6
const SIZE = 1024 ** 3
const SETTLE_MS = 500
const CHUNK = 50_000_000
const fromTs = import.meta.url.endsWith('.ts')
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), fromTs ? '../..' : '../../..')
const cliEntry = fromTs ? path.join(root, 'test/mount/fixtures/cli.ts') : path.join(root, 'dist/src/cli/main.js')

function sh(cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<{ ms: number; stdout: string }> {
  const t0 = performance.now()
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { env: env ?? process.env, maxBuffer: 64 * 1024 * 1024, timeout: 600_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')}: ${stderr || err.message}`))
      else resolve({ ms: performance.now() - t0, stdout })
    })
  })
}

async function writeSource(file: string): Promise<void> {
  const block = Buffer.alloc(1024 * 1024)
  const out = createWriteStream(file)
  for (let i = 0; i < SIZE / block.length; i++) {
    block.writeUInt32LE(i, 0)
    block.writeUInt32LE(i * 7919, block.length - 4)
    if (!out.write(Buffer.from(block))) await new Promise<void>((r) => out.once('drain', () => r()))
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())))
}

async function main(): Promise<void> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'transferfs-bench-send-'))
  const mountDir = path.join(home, 'mnt')
  const source = path.join(home, 'source.bin')
  process.stderr.write('writing a 1 GiB source file and starting the local service...\n')
  await writeSource(source)
  const service = await startService({ controls: true, dataDir: path.join(home, 'service') })
  const caPem = await readFile(service.ca, 'utf8')
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TRANSFERFS_API_URL: service.baseUrl, TRANSFERFS_API_KEY: service.apiKey, TRANSFERFS_CA: service.ca,
    TRANSFERFS_CONFIG_DIR: path.join(home, 'config'), TRANSFERFS_CACHE_DIR: path.join(home, 'cache'), TRANSFERFS_DATA_DIR: path.join(home, 'data'),
    TRANSFERFS_SETTLE_MS: String(SETTLE_MS),
  }
  const client = new TransferClient({ apiUrl: service.baseUrl, apiKey: service.apiKey, ca: caPem })
  let pid = 0
  const rows: Array<[string, string]> = []
  try {
    await client.auth.login(service.user.email, service.user.password)
    const node = [...process.execArgv, cliEntry]
    const login = execFile(process.execPath, [...node, 'login', '--email', service.user.email, '--password-stdin'], { env })
    login.stdin!.end(service.user.password)
    await new Promise<void>((resolve, reject) => login.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`login: exit ${code}`)))))
    pid = (await startBackgroundMount({ args: [cliEntry, 'mount', mountDir, '--foreground'], env, logFile: path.join(home, 'mount.log') })).pid

    process.stderr.write('cp 1 GiB into outbox/ and waiting for the transfer...\n')
    const sentLog = path.join(home, 'data', 'sent.jsonl')
    const t0 = performance.now()
    const cp = await sh('cp', [source, path.join(mountDir, 'outbox', 'big.bin')])
    for (;;) {
      const text = await readFile(sentLog, 'utf8').catch(() => '')
      if (text.includes('"subject":"big.bin"')) break
      await new Promise((r) => setTimeout(r, 20))
    }
    const viaMount = performance.now() - t0

    process.stderr.write('uploading the same file directly with the client...\n')
    const t1 = performance.now()
    const init = await client.transfers.initialize({ subject: 'direct.bin', transfersize: SIZE })
    await client.upload.uploadFile({
      transferUrl: init.transferurl, transferId: init.transferid, transferKey: init.transferkey,
      fileName: 'direct.bin', source: { path: source }, chunkSize: CHUNK,
    })
    await client.transfers.complete(init.transferid, init.transferkey)
    const direct = performance.now() - t1

    const mbps = (ms: number) => `${(SIZE / MB / (ms / 1000)).toFixed(0)} MB/s`
    rows.push(
      ['cp 1 GiB into outbox/ (returns)', `${(cp.ms / 1000).toFixed(2)} s (${mbps(cp.ms)})`],
      [`cp start → transfer complete (settle ${SETTLE_MS} ms)`, `${(viaMount / 1000).toFixed(1)} s (${mbps(viaMount)})`],
      ['1 GiB direct upload (client)', `${(direct / 1000).toFixed(1)} s (${mbps(direct)})`],
      ['via mount / direct (time ratio)', (viaMount / direct).toFixed(2)],
      ['via mount minus settle / direct', ((viaMount - SETTLE_MS) / direct).toFixed(2)],
    )
    const status = await readFile(`/proc/${pid}/status`, 'utf8')
    const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0)
    rows.push(['mount daemon peak RSS', `${(hwm / 1024).toFixed(0)} MiB`])
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
  const width = Math.max(...rows.map((r) => r[0].length))
  process.stdout.write(rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n') + '\n')
}

await main()
