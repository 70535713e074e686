// Benchmarks of the mount against the local service, in one run. Not a test: it prints
// figures (and ratios, which travel between machines better than MB/s).
//
//   node --import ./test/fuse/fixtures/register-ts.mjs scripts/bench/mount.ts   (from TypeScript)
//   npm run build && node dist/scripts/bench/mount.js                             (after a build)
//
// What it measures: random 4 KiB O_DIRECT reads of the demo's cold 1 GiB file (fio) next
// to the service's own latency for a 1 MiB range; a cold sequential read of that file
// through the mount against the same bytes streamed directly with the client, with the
// bytes the service served and hashed for it (as multiples of the file) and the mount's
// CPU seconds; a warm re-read; the time to the first 4 KiB of a cold file with the service
// throttled to 12.5 MB/s; `ls -l` of the inbox folder, cold and warm; the peak RSS of the
// mount daemon.
import { readdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { Agent, request } from 'undici'
import type { Transfer } from '../../src/api/types.js'
import { MB, sh, withBenchWorld } from './world.js'

const MiB = 1024 * 1024

/** User + system CPU seconds of a process so far. */
async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

await withBenchWorld('mount', { service: { demo: true } }, async ({ home, mountDir, service, caPem, client, rows }, mount) => {
  const agent = new Agent({ connect: { ca: caPem } })
  const control = async (method: 'GET' | 'POST' | 'DELETE', p: string, body?: unknown): Promise<unknown> => {
    const res = await request(`${new URL(service.baseUrl).origin}/_emulator${p}`, {
      method, dispatcher: agent, body: body === undefined ? undefined : JSON.stringify(body),
      headers: { 'x-api-key': service.apiKey, 'content-type': 'application/json' },
    })
    return res.body.json() as Promise<unknown>
  }
  const counters = () => control('GET', '/counters') as Promise<{ routes: Record<string, number>; bytesServed: number; bytesHashed: number }>
  try {
    const inbox: Transfer[] = []
    for await (const t of client.transfers.inboxAll()) inbox.push(t)
    const find = async (prefix: string) => client.transfers.details(inbox.find((t) => t.subject.startsWith(prefix))!.id, { filesLimit: -1 })
    const big = await find('Disk image')
    const db = await find('Database export')

    const pid = await mount()

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

    // Random reads first, while the file is cold: they fetch their own spans, which the block caches do not keep.
    const latencies: number[] = []
    for (let i = 0; i < 50; i++) {
      const at = Math.floor((Math.random() * (size - MiB)) / 4096) * 4096
      const t = performance.now()
      await client.download.fetchRange(big.files[0]!.downloadurl, at, at + MiB)
      latencies.push(performance.now() - t)
    }
    latencies.sort((a, b) => a - b)
    const serviceP50 = latencies[25]!
    process.stderr.write('fio randread 4 KiB, O_DIRECT, 15 s...\n')
    const fio = JSON.parse((await sh('fio', ['--name=rand', `--filename=${bigFile}`, '--rw=randread', '--bs=4k', '--direct=1', '--ioengine=psync',
      '--runtime=15', '--time_based', '--output-format=json', `--size=${size}`])).stdout) as { jobs: Array<{ read: { iops: number; clat_ns: { percentile: Record<string, number> } } }> }
    const rand = fio.jobs[0]!.read
    const p50 = rand.clat_ns.percentile['50.000000']! / 1e6
    rows.push(
      ['service: 1 MiB range, p50', `${serviceP50.toFixed(1)} ms`],
      ['fio randread 4 KiB O_DIRECT (cold 1 GiB file)', `${rand.iops.toFixed(0)} IOPS, p50 ${p50.toFixed(2)} ms, p99 ${(rand.clat_ns.percentile['99.000000']! / 1e6).toFixed(2)} ms`],
      ['random 4 KiB p50 / service 1 MiB p50', (p50 / serviceP50).toFixed(2)],
    )

    process.stderr.write('reading 1 GiB through the mount (cold)...\n')
    await control('POST', '/counters/reset')
    const cpuBefore = await cpuSeconds(pid)
    const cold = await sh('dd', [`if=${bigFile}`, 'of=/dev/null', 'bs=1M'])
    const cpuCold = (await cpuSeconds(pid)) - cpuBefore
    const served = await counters()
    rows.push(
      ['cold read: bytes served / file size', (served.bytesServed / size).toFixed(3)],
      ['cold read: bytes hashed by the service / file size', (served.bytesHashed / size).toFixed(3)],
      ['cold read: downloads + range hashes', `${served.routes.download ?? 0} + ${served.routes.rangehash ?? 0}`],
      ['cold read: mount CPU seconds', cpuCold.toFixed(1)],
    )
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
  } finally {
    await agent.close()
  }
})
