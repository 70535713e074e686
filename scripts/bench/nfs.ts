// The NFS server (`transferfs serve-nfs`, what macOS mounts) against the FUSE mount, in the
// same run, on the same demo service: libnfs's nfs-cat and nfs-ls (run as root, so from a
// reserved port) against cat and ls on the FUSE mount. Not a test: it prints figures.
//
//   node --import ./test/fuse/fixtures/register-ts.mjs scripts/bench/nfs.ts   (from TypeScript)
//   npm run build && node dist/scripts/bench/nfs.js                             (after a build)
//
// What it measures, each on a fresh process with a cache of its own and the kernel's caches
// dropped: a cold read of the demo's 1 GiB file (its speed against the FUSE mount's, the bytes
// served and hashed per file byte, the CPU of the serving process); the same file read again
// (the FUSE mount's from the kernel's page cache, nfs-cat's from the read path's caches); and a
// listing of an inbox of 5,000 transfers, cold and again, with the service calls it made.
// nfs-cat keeps one READ of 1 MiB in flight at a time, where the kernel reads ahead on the FUSE
// mount (macOS's client reads ahead too): its figure is the server's, at one READ after another.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { createInterface } from 'node:readline'
import type { Transfer } from '../../src/api/types.js'
import { cliEntry, type Counters, cpuSeconds, dropCaches, mbps, median, perGiB, quietCounters, sh, transferFolder, withBenchWorld } from './world.js'

const TRANSFERS = 5000
const DEMO_FILE_SUBJECT = 'Disk image (1 GiB)'
const WARM_RUNS = 5

const requestsOf = (c: Counters) => Object.values(c.routes).reduce((a, b) => a + b, 0)

/** `transferfs serve-nfs` of this build in `env`, until stop(): its port and pid. */
async function serveNfs(env: NodeJS.ProcessEnv, dir: string): Promise<{ port: number; pid: number; stop(): Promise<void> }> {
  // BENCH_CPU_PROF=<folder>: the server writes a V8 CPU profile there when it stops, as the mounts do.
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : []
  const child = spawn(process.execPath, [...process.execArgv, ...prof, cliEntry, 'serve-nfs', dir], { env, stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`serve-nfs ended (exit ${code}) before serving`)))
  })
  const { port } = JSON.parse(first) as { port: number }
  return {
    port,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
      await exited
      clearTimeout(timer)
    },
  }
}

/** libnfs's URL of a path of the export (taken as it is: libnfs decodes no %XX). */
const nfsUrl = (port: number, p: string) => `nfs://127.0.0.1${p}?version=3&nfsport=${port}&mountport=${port}`
/** Reads everything from a command into /dev/null: its time. */
const drain = (cmd: string, arg: string) => sh('bash', ['-c', `${cmd} "$1" >/dev/null`, 'bash', arg])
/** The entries a listing shows, one a line. */
const count = (out: string) => out.split('\n').filter(Boolean).length

await withBenchWorld('nfs', { demo: true }, async (w) => {
  const { rows, service, mountDir } = w
  let demo: Transfer | undefined
  for await (const t of w.client.transfers.inboxAll()) if (t.subject === DEMO_FILE_SUBJECT) demo = t
  if (!demo) throw new Error(`the demo has no transfer "${DEMO_FILE_SUBJECT}"`)
  const file = (await w.client.transfers.details(demo.id, { filesLimit: -1 })).files[0]!
  const size = file.filesize!
  process.stderr.write(`seeding ${TRANSFERS} transfers...\n`)
  await service.control('POST', '/inbox/seed', { to: service.user.email, count: TRANSFERS })

  // The FUSE mount: ls of the inbox cold and again, then a cold cat and a warm one.
  process.stderr.write('the FUSE mount: ls inbox/, cold cat of 1 GiB...\n')
  const mountPid = await w.mount()
  await quietCounters(service)
  const inbox = path.join(mountDir, 'inbox')
  const lsCold = await sh('ls', [inbox])
  const lsRequests = requestsOf(await service.counters())
  const lsWarm: number[] = []
  for (let i = 0; i < WARM_RUNS; i++) lsWarm.push((await sh('ls', [inbox])).ms)
  // nfs-ls shows each entry's attributes, as ls -l does (the kernel asks for them entry by entry).
  const lsLong = await sh('ls', ['-l', inbox])
  const fusePath = path.join(await transferFolder(mountDir, demo), file.filename!)
  await dropCaches()
  await quietCounters(service)
  const fuseCpu0 = await cpuSeconds(mountPid)
  const catCold = await drain('cat', fusePath)
  const fuseCpu = (await cpuSeconds(mountPid)) - fuseCpu0
  const fuseServed = await service.counters()
  const catWarm = await drain('cat', fusePath)
  await w.unmount()

  // The NFS server: a process and a cache of its own, the kernel's caches dropped again.
  process.stderr.write('the NFS server: nfs-ls inbox/, cold nfs-cat of 1 GiB...\n')
  const server = await serveNfs({ ...w.env, TRANSFERFS_CACHE_DIR: path.join(w.home, 'cache-nfs') }, path.join(w.home, 'nfs-mnt'))
  try {
    await quietCounters(service)
    const nfsLsCold = await sh('nfs-ls', [nfsUrl(server.port, '/inbox')])
    const nfsLsRequests = requestsOf(await service.counters())
    const nfsLsWarm: number[] = []
    for (let i = 0; i < WARM_RUNS; i++) nfsLsWarm.push((await sh('nfs-ls', [nfsUrl(server.port, '/inbox')])).ms)
    const folder = nfsLsCold.stdout.split('\n').map((l) => l.replace(/^\S+\s+\d+\s+\d+\s+\d+\s+\d+\s/, '')).find((n) => n.endsWith(`(${demo.id})`))
    if (!folder) throw new Error(`nfs-ls lists no folder of transfer ${demo.id}`)
    const url = nfsUrl(server.port, `/inbox/${folder}/${file.filename!}`)
    await dropCaches()
    await quietCounters(service)
    const nfsCpu0 = await cpuSeconds(server.pid)
    const nfsCatCold = await drain('nfs-cat', url)
    const nfsCpu = (await cpuSeconds(server.pid)) - nfsCpu0
    const nfsServed = await service.counters()
    const nfsCatWarm = await drain('nfs-cat', url)

    const cold = 'cold 1 GiB: cat on the FUSE mount'
    const fuseHow = 'cat of the demo\'s 1 GiB file to /dev/null, a fresh mount, the kernel\'s caches dropped'
    const nfsHow = 'nfs-cat of the same file to /dev/null, a fresh serve-nfs with a cache of its own, the kernel\'s caches dropped'
    const perFile = (n: number) => n / size
    const cpuBase = 'cold 1 GiB: CPU of the FUSE mount'
    const warm = 'warm re-read: cat on the FUSE mount'
    const ls = 'ls inbox/ on the FUSE mount, cold'
    const lsAgain = 'ls inbox/ on the FUSE mount, again'
    const lsReq = 'ls inbox/ on the FUSE mount: requests'
    rows.push(
      { figure: cold, value: mbps(size, catCold.ms), unit: 'MB/s', how: fuseHow },
      { figure: 'cold 1 GiB: nfs-cat', value: mbps(size, nfsCatCold.ms), unit: 'MB/s', baseline: cold, ratio: catCold.ms / nfsCatCold.ms, target: '>= 0.9', how: nfsHow },
      { figure: 'cold 1 GiB: bytes served, nfs-cat', value: perFile(nfsServed.bytesServed), unit: '× the file', target: '<= 1.02', how: `the service's counters (the FUSE mount's cat: ${perFile(fuseServed.bytesServed).toFixed(2)}×)` },
      { figure: 'cold 1 GiB: bytes hashed, nfs-cat', value: perFile(nfsServed.bytesHashed), unit: '× the file', target: '<= 1.02', how: `the service's counters (the FUSE mount's cat: ${perFile(fuseServed.bytesHashed).toFixed(2)}×)` },
      { figure: cpuBase, value: perGiB(fuseCpu, size), unit: 'CPU-s/GiB', how: 'the mount process\'s CPU during the cold cat' },
      { figure: 'cold 1 GiB: CPU of the NFS server', value: perGiB(nfsCpu, size), unit: 'CPU-s/GiB', baseline: cpuBase, ratio: nfsCpu / fuseCpu, how: 'the serve-nfs process\'s CPU during the cold nfs-cat' },
      { figure: warm, value: mbps(size, catWarm.ms), unit: 'MB/s', how: 'cat again, right after: from the kernel\'s page cache' },
      { figure: 'warm re-read: nfs-cat', value: mbps(size, nfsCatWarm.ms), unit: 'MB/s', baseline: warm, ratio: catWarm.ms / nfsCatWarm.ms, how: 'nfs-cat again, right after: from the read path\'s memory and disk caches (no page cache)' },
      { figure: ls, value: lsCold.ms, unit: 'ms', how: `the first ls of inbox/ after the mount (whose start listed the inbox once), ${count(lsCold.stdout)} entries` },
      { figure: 'nfs-ls inbox/, cold', value: nfsLsCold.ms, unit: 'ms', baseline: ls, ratio: nfsLsCold.ms / lsCold.ms,
        how: `the first nfs-ls of inbox/ (READDIRPLUS: names and attributes, as ls -l) after the server started (whose start listed the inbox once), ${count(nfsLsCold.stdout)} entries` },
      { figure: 'ls -l inbox/ on the FUSE mount', value: lsLong.ms, unit: 'ms', how: 'the first ls -l, after the ls above: names, and the attributes nfs-ls shows too' },
      { figure: lsAgain, value: median(lsWarm), unit: 'ms', how: `ls inbox/ again, median of ${WARM_RUNS}` },
      { figure: 'nfs-ls inbox/, again', value: median(nfsLsWarm), unit: 'ms', baseline: lsAgain, ratio: median(nfsLsWarm) / median(lsWarm), how: `nfs-ls inbox/ again, median of ${WARM_RUNS} (each a new connection and MNT)` },
      { figure: lsReq, value: lsRequests, unit: 'requests', how: 'the service\'s counters during the cold ls' },
      { figure: 'nfs-ls inbox/: requests', value: nfsLsRequests, unit: 'requests', baseline: lsReq, ratio: nfsLsRequests / Math.max(1, lsRequests), target: '<= 1', how: 'the service\'s counters during the cold nfs-ls (its pages by cookie ask nothing again)' },
    )
  } finally {
    await server.stop()
  }
})
