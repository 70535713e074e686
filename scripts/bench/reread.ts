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
import { cpuSeconds, fileOnMount, GiB, mbps, MiB, peakRssMiB, perGiB, RSS_BOUND_MIB, sh, verifiedFetchFloor, withBenchWorld, withNullFs } from './world.js'


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
  const how = 'dd bs=1M iflag=direct of a 1 GiB file read once cold, after a remount'
  rows.push(
    { figure: 'null filesystem (RAM buffer), O_DIRECT', value: mbps(GiB, nullMs), unit: 'MB/s', how: 'dd bs=1M iflag=direct of 1 GiB on null-fs.ts, best of 2' },
    { figure: 're-read after remount from our caches', value: mbps(GiB, direct.ms), unit: 'MB/s', baseline: 'null filesystem (RAM buffer), O_DIRECT', ratio: nullMs / direct.ms, target: '>= 0.7', how },
    { figure: 'bytes fetched again', value: fetched / MiB, unit: 'MiB', target: '0', how: 'the service\'s bytes served during the re-read' },
    { figure: 'curl | md5sum (the floor): CPU', value: perGiB(floor.cpuS, GiB), unit: 'CPU-s/GiB', how: 'curl of the file piped into md5sum, both processes, best of 2' },
    { figure: 'mount CPU, re-read', value: perGiB(directCpu, GiB), unit: 'CPU-s/GiB', baseline: 'curl | md5sum (the floor): CPU', ratio: directCpu / floor.cpuS, target: '<= 0.4', how },
    { figure: 'null filesystem CPU', value: perGiB(nullCpu, GiB), unit: 'CPU-s/GiB', baseline: 'curl | md5sum (the floor): CPU', ratio: nullCpu / floor.cpuS, how: 'the same read on null-fs.ts' },
    { figure: 'warm re-read through the page cache', value: mbps(GiB, warm.ms), unit: 'MB/s', how: 'dd bs=1M, the same mount, right after' },
    { figure: 'mount peak RSS', value: peak, unit: 'MiB', baseline: 'memoryCacheBytes + 150 MiB', ratio: peak / RSS_BOUND_MIB, target: '<= 1', how: 'VmHWM of the mount after the re-reads' },
  )
})
