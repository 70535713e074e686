// Benchmarks of the mount against the local service, in one run. Not a test: it prints
// figures (and ratios, which travel between machines better than MB/s).
//
//   node --import ./test/fuse/fixtures/register-ts.mjs scripts/bench/mount.ts   (from TypeScript)
//   npm run build && node dist/scripts/bench/mount.js                             (after a build)
//
// What it measures: a cold sequential read of the demo's 1 GiB file through the mount
// against the same bytes streamed directly with the client; a warm re-read; the time to
// the first 4 KiB of a cold file with the service throttled to 12.5 MB/s; `ls -l` of the
// inbox folder, cold and warm; the peak RSS of the mount daemon.
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Agent, request } from 'undici'
import { TransferClient } from '../../src/api/client.js'
import type { Transfer } from '../../src/api/types.js'
import { startService } from '../../src/emulator/index.js'
import { startBackgroundMount } from '../../src/fuse/background.js'

const MB = 1e6
const fromTs = import.meta.url.endsWith('.ts')
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), fromTs ? '../..' : '../../..')
// src/cli/main.ts finds package.json only from dist, so TypeScript runs use the tests' entry point.
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

async function main(): Promise<void> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'transferfs-bench-'))
  const mountDir = path.join(home, 'mnt')
  process.stderr.write('starting the local service with the demo transfers...\n')
  const service = await startService({ demo: true, controls: true, dataDir: path.join(home, 'service') })
  const caPem = await readFile(service.ca, 'utf8')
  const agent = new Agent({ connect: { ca: caPem } })
  const control = async (method: 'POST' | 'DELETE', p: string, body?: unknown) => {
    const res = await request(`${new URL(service.baseUrl).origin}/_emulator${p}`, {
      method, dispatcher: agent, body: body === undefined ? undefined : JSON.stringify(body),
      headers: { 'x-api-key': service.apiKey, 'content-type': 'application/json' },
    })
    await res.body.text()
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TRANSFERFS_API_URL: service.baseUrl, TRANSFERFS_API_KEY: service.apiKey, TRANSFERFS_CA: service.ca,
    TRANSFERFS_CONFIG_DIR: path.join(home, 'config'), TRANSFERFS_CACHE_DIR: path.join(home, 'cache'), TRANSFERFS_DATA_DIR: path.join(home, 'data'),
  }
  const client = new TransferClient({ apiUrl: service.baseUrl, apiKey: service.apiKey, ca: caPem })
  let pid = 0
  const rows: Array<[string, string]> = []
  try {
    await client.auth.login(service.user.email, service.user.password)
    const inbox: Transfer[] = []
    for await (const t of client.transfers.inboxAll()) inbox.push(t)
    const find = async (prefix: string) => client.transfers.details(inbox.find((t) => t.subject.startsWith(prefix))!.id, { filesLimit: -1 })
    const big = await find('Disk image')
    const db = await find('Database export')

    const node = [...process.execArgv, cliEntry]
    const login = execFile(process.execPath, [...node, 'login', '--email', service.user.email, '--password-stdin'], { env })
    login.stdin!.end(service.user.password)
    await new Promise<void>((resolve, reject) => login.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`login: exit ${code}`)))))
    pid = (await startBackgroundMount({ args: [cliEntry, 'mount', mountDir, '--foreground'], env, logFile: path.join(home, 'mount.log') })).pid

    const inboxDir = path.join(mountDir, 'inbox')
    const lsCold = await sh('ls', ['-l', inboxDir])
    const lsWarm = await sh('ls', ['-l', inboxDir])
    rows.push(['ls -l inbox/ (cold)', `${lsCold.ms.toFixed(0)} ms`], ['ls -l inbox/ (warm)', `${lsWarm.ms.toFixed(0)} ms`])

    const folderOf = async (t: Transfer) => path.join(inboxDir, (await readdir(inboxDir)).find((n) => n.endsWith(`(${t.id})`))!)
    const bigFile = path.join(await folderOf(big), big.files[0]!.filename!)
    const size = big.files[0]!.filesize!
    // Cold first bytes with a slow link, before anything of these files is cached.
    await control('POST', '/throttle', { bytesPerSecond: 12.5 * MB })
    const coldFile = path.join(await folderOf(db), 'inventory.sqlite')
    const first = await sh('head', ['-c', '4096', coldFile])
    const firstBig = await sh('dd', [`if=${bigFile}`, 'of=/dev/null', 'bs=4096', 'count=1', `skip=${Math.floor((size * 0.9) / 4096)}`])
    await control('DELETE', '/faults')
    rows.push(
      ['first 4 KiB of a cold small file @12.5 MB/s', `${first.ms.toFixed(0)} ms`],
      ['first 4 KiB at a cold offset of the 1 GiB file @12.5 MB/s', `${firstBig.ms.toFixed(0)} ms`],
    )

    process.stderr.write('reading 1 GiB through the mount (cold)...\n')
    const cold = await sh('dd', [`if=${bigFile}`, 'of=/dev/null', 'bs=1M'])
    process.stderr.write('reading it again (warm)...\n')
    const warm = await sh('dd', [`if=${bigFile}`, 'of=/dev/null', 'bs=1M'])
    // The read path's own caches, without the kernel's page cache: the FUSE + JS ceiling.
    const warmDirect = await sh('dd', [`if=${bigFile}`, 'of=/dev/null', 'bs=1M', 'iflag=direct'])
    process.stderr.write('streaming the same bytes with the client...\n')
    const t0 = performance.now()
    let got = 0
    for await (const piece of client.download.streamFile(big.files[0]!.downloadurl, { size })) got += piece.length
    const directMs = performance.now() - t0
    if (got !== size) throw new Error(`direct download gave ${got} bytes, expected ${size}`)
    process.stderr.write('downloading them verified with the client (downloadFile)...\n')
    const t1 = performance.now()
    await client.downloadFile({ downloadUrl: big.files[0]!.downloadurl, transferId: big.id, fileName: big.files[0]!.filename!, size, md5: big.files[0]!.md5, path: path.join(home, 'direct.img') })
    const verifiedMs = performance.now() - t1
    await rm(path.join(home, 'direct.img'), { force: true })
    const mbps = (ms: number) => `${(size / MB / (ms / 1000)).toFixed(0)} MB/s`
    rows.push(
      ['1 GiB cold via mount', `${(cold.ms / 1000).toFixed(1)} s (${mbps(cold.ms)})`],
      ['1 GiB direct (client stream)', `${(directMs / 1000).toFixed(1)} s (${mbps(directMs)})`],
      ['cold mount / direct (time ratio)', (cold.ms / directMs).toFixed(2)],
      ['1 GiB direct verified (client downloadFile)', `${(verifiedMs / 1000).toFixed(1)} s (${mbps(verifiedMs)})`],
      ['cold mount / direct verified (time ratio)', (cold.ms / verifiedMs).toFixed(2)],
      ['1 GiB warm re-read via mount', `${(warm.ms / 1000).toFixed(1)} s (${mbps(warm.ms)})`],
      ['1 GiB warm re-read, O_DIRECT (no page cache)', `${(warmDirect.ms / 1000).toFixed(1)} s (${mbps(warmDirect.ms)})`],
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
    await agent.close()
    await service.close()
    await rm(home, { recursive: true, force: true })
  }
  const width = Math.max(...rows.map((r) => r[0].length))
  process.stdout.write(rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n') + '\n')
}

await main()
