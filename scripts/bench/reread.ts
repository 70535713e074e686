// Re-reads through the mount from transferfs' own caches, held against the null
// filesystem (null-fs.ts: fuse-native serving a RAM buffer) in the same run. Not a test.
//
//   node --import ./test/fuse/fixtures/register-ts.mjs scripts/bench/reread.ts   (from TypeScript)
//   npm run build && node dist/scripts/bench/reread.js                             (after a build)
//
// What it measures: a 1 GiB file read once cold, the mount stopped and started again, then
// read with O_DIRECT (no page cache: every byte comes through FUSE from the memory or disk
// cache), with the bytes the service served meanwhile (0 when the caches hold it all);
// the same O_DIRECT read of a 1 GiB file on the null filesystem; a warm re-read through the
// page cache for scale; the mount's peak RSS against memoryCacheBytes + 150 MiB.
import path from 'node:path'
import { cpuSeconds, fileOnMount, GiB, mbps, MiB, peakRssMiB, perGiB, ratio, RSS_BOUND_MIB, sh, verifiedFetchFloor, withBenchWorld, withNullFs } from './world.js'


await withBenchWorld('reread', {}, async (w) => {
  const { rows, service, mountDir } = w
  const [t] = await service.seed(1, { fileSize: GiB, subjectPrefix: 'One GiB' })
  await w.mount()
  const fileOf = () => fileOnMount(mountDir, t!)
  process.stderr.write('cold read, then a remount...\n')
  await sh('dd', [`if=${await fileOf()}`, 'of=/dev/null', 'bs=1M'])
  await w.unmount()
  const pid = await w.mount()
  const file = await fileOf()
  await service.control('POST', '/counters/reset')
  const cpu0 = await cpuSeconds(pid)
  const direct = await sh('dd', [`if=${file}`, 'of=/dev/null', 'bs=1M', 'iflag=direct'])
  const directCpu = await cpuSeconds(pid) - cpu0
  const fetched = (await service.counters()).bytesServed
  const warm = await sh('dd', [`if=${file}`, 'of=/dev/null', 'bs=1M'])
  const peak = await peakRssMiB(pid)
  await w.unmount()
  process.stderr.write('curl | md5sum of the file (the verified-fetch floor)...\n')
  const floor = await verifiedFetchFloor(service.ca, t!.files[0]!.downloadurl)
  process.stderr.write('the same read on the null filesystem...\n')
  const { nullMs, nullCpu } = await withNullFs(w.home, [['f', 'big.bin', GiB]], async (dir, nullPid) => {
    const times: number[] = []
    const cpus: number[] = []
    for (let i = 0; i < 2; i++) {
      const c0 = await cpuSeconds(nullPid)
      times.push((await sh('dd', [`if=${path.join(dir, 'big.bin')}`, 'of=/dev/null', 'bs=1M', 'iflag=direct'])).ms)
      cpus.push(await cpuSeconds(nullPid) - c0)
    }
    return { nullMs: Math.min(...times), nullCpu: Math.min(...cpus) }
  })
  rows.push(
    ['re-read after remount, O_DIRECT, from our caches', `${mbps(GiB, direct.ms)}, ${(fetched / MiB).toFixed(1)} MiB fetched again`],
    ['  null filesystem (RAM buffer), O_DIRECT', mbps(GiB, nullMs)],
    ['  / null filesystem (target >= 0.7)', ratio(nullMs / direct.ms)],
    ['  CPU: mount; null filesystem; curl | md5sum of the same bytes (the floor)', `${perGiB(directCpu, GiB)}; ${perGiB(nullCpu, GiB)}; ${perGiB(floor.cpuS, GiB)}`],
    ['  mount CPU / floor CPU (target <= 0.4)', ratio(directCpu / floor.cpuS)],
    ['warm re-read through the page cache', mbps(GiB, warm.ms)],
    ['  mount peak RSS / (memoryCacheBytes + 150 MiB)', `${peak.toFixed(0)} MiB, ${ratio(peak / RSS_BOUND_MIB)}`],
  )
})
