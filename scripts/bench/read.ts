// Sequential reads through the mount against the local service, each held against curl
// streaming the same bytes from the same service in the same run (the raw, unverified
// link; curl's figure is also the service's own raw speed). Not a test: it prints figures.
//
//   node --import ./test/fuse/fixtures/register-ts.mjs scripts/bench/read.ts   (from TypeScript)
//   npm run build && node dist/scripts/bench/read.js                             (after a build)
//
// What it measures, on two cold 1 GiB files and a cold 2 GiB file:
// - a cold sequential read (dd bs=1M) of 1 GiB: its speed / curl's, the bytes the service
//   served and hashed for it as multiples of the file, the CPU seconds of mount and service;
// - the same by an O_DIRECT reader, and a null filesystem's CPU for both kinds of read;
// - `transferfs download` of the same file / curl's speed;
// - four cold readers at four offsets of the 2 GiB file / four curl range streams together;
// - a sequential read through the service's throttle (12.5 MB/s, a 256 KiB burst) / its rate, from this
//   service and from one unlike it, and from that one through the rate without a burst;
// - the mount's peak RSS in each workload against memoryCacheBytes + 150 MiB;
// - a cold `cat` of 1 GiB at readahead 0 (the kernel's), 2 MiB, 4 MiB and 1 GiB, each on a fresh
//   mount: bytes served and hashed per file byte, requests and TLS connections;
// - `head -c 256M` of a cold 2 GiB file through 12.5 MB/s with a 256 KiB burst and 20 ms per
//   request, at readahead 0 and 4 MiB, each on a fresh mount: its rate / the link's, the bytes
//   served / the bytes read (when head exits, and once the service is quiet), against curl of
//   the same bytes through the same link.
import { rm } from 'node:fs/promises'
import path from 'node:path'
import type { Transfer } from '../../src/api/types.js'
import { DEFAULT_SETTINGS } from '../../src/config/settings.js'
import type { BenchRow } from './results.js'
import { cliEntry, type Counters, cpuSeconds, fileOnMount, GiB, MB, mbps, MiB, peakRssMiB, perGiB, resetPeakRss, RSS_BOUND_MIB, sh, verifiedFetchFloor, withBenchWorld, withNullFs } from './world.js'

const LINK = 12.5 * MB

/** What the service did for a cold read of 1 GiB, in the reader's column: bytes served and hashed per file byte, requests, connections. */
const counted = (group: string, c: Counters): BenchRow[] => {
  const how = 'the service\'s counters during the read'
  return [
    { group, figure: 'cold 1 GiB: bytes served', value: c.bytesServed / GiB, unit: '× the file', target: '<= 1.02', how },
    { group, figure: 'cold 1 GiB: bytes hashed', value: c.bytesHashed / GiB, unit: '× the file', target: '<= 1.02', how },
    { group, figure: 'cold 1 GiB: range GETs', value: c.routes.download ?? 0, unit: '', how },
    { group, figure: 'cold 1 GiB: GetRangeHash calls', value: c.routes.rangehash ?? 0, unit: '', how },
    { group, figure: 'cold 1 GiB: TLS connections', value: c.fileConnections, unit: '', target: `<= ${2 * DEFAULT_SETTINGS.maxConcurrentFetches}`, how: 'TLS connections the file server accepted' },
  ]
}
/** The first row of a cold 1 GiB read in the reader's column: its speed against curl's. */
const coldSpeed = (group: string, ms: number, rawMs: number, how: string): BenchRow =>
  ({ group, figure: 'cold 1 GiB: speed', value: mbps(GiB, ms), unit: 'MB/s', baseline: 'curl 1 GiB (the raw link)', ratio: rawMs / ms, target: '>= 0.6', how: `${how}; a fresh mount for each cat` })
const FLOOR_CPU = 'the floor: CPU of curl + md5sum'
/** The burst of the target's link (a token bucket's). */
const BURST = 256 * 1024

await withBenchWorld('read', {}, async (w) => {
  const { rows, service, mountDir } = w
  process.stderr.write('seeding a 1 GiB and a 2 GiB file...\n')
  const [one, oneDirect] = await service.seed(2, { fileSize: GiB, subjectPrefix: 'One GiB' })
  const [two] = await service.seed(1, { fileSize: 2 * GiB, subjectPrefix: 'Two GiB' })
  const urlOf = (t: Transfer) => t.files[0]!.downloadurl
  /** Seconds curl takes for the URL (a range when given), best of three: the raw link. */
  const curl = async (t: Transfer, range?: string) => {
    const times: number[] = []
    for (let i = 0; i < 3; i++) times.push((await sh(w.curl[0]!, [...w.curl.slice(1), ...(range ? ['-r', range] : []), urlOf(t)])).ms)
    return Math.min(...times)
  }
  const pid = await w.mount()
  const rss = async (workload: string) => {
    const peak = await peakRssMiB(pid)
    rows.push({ figure: `mount peak RSS, ${workload}`, value: peak, unit: 'MiB', baseline: 'memoryCacheBytes + 150 MiB', ratio: peak / RSS_BOUND_MIB, target: '<= 1', how: 'VmHWM of the mount over the workload' })
    await resetPeakRss(pid)
  }
  await resetPeakRss(pid)

  process.stderr.write('curl of 1 GiB (raw stream)...\n')
  const rawMs = await curl(one!)
  rows.push({ figure: 'curl 1 GiB (the raw link)', value: mbps(GiB, rawMs), unit: 'MB/s', target: '>= 1000 MB/s', how: 'curl of the file to /dev/null, best of 3' })
  process.stderr.write('curl | md5sum of 1 GiB (the verified-fetch floor)...\n')
  const floorCpu0 = await cpuSeconds(service.pid)
  const floorTries = 2
  const floor = await verifiedFetchFloor(service.ca, urlOf(one!), floorTries)
  const floorServiceCpu = (await cpuSeconds(service.pid) - floorCpu0) / floorTries
  const floorHow = 'curl of the file piped into md5sum (a fetch that checks every byte), best of 2 by CPU'
  rows.push(
    { figure: 'curl | md5sum 1 GiB (the floor)', value: mbps(GiB, floor.ms), unit: 'MB/s', how: floorHow },
    { figure: FLOOR_CPU, value: perGiB(floor.cpuS, GiB), unit: 'CPU-s/GiB', how: 'bash\'s times of both processes' },
    { figure: 'the floor: CPU of the service', value: perGiB(floorServiceCpu, GiB), unit: 'CPU-s/GiB', how: 'the service process\'s CPU' },
  )

  process.stderr.write('cold sequential read of 1 GiB through the mount...\n')
  const oneFile = await fileOnMount(mountDir, one!)
  await service.control('POST', '/counters/reset')
  const cpu0 = [await cpuSeconds(pid), await cpuSeconds(service.pid)]
  const cold = await sh('dd', [`if=${oneFile}`, 'of=/dev/null', 'bs=1M'])
  const cpu1 = [await cpuSeconds(pid), await cpuSeconds(service.pid)]
  const served = await service.counters()
  const buffered = 'dd bs=1M'
  rows.push(
    coldSpeed(buffered, cold.ms, rawMs, 'the reader on a cold 1 GiB file'),
    ...counted(buffered, served),
    { group: buffered, figure: 'cold 1 GiB: CPU of the mount', value: perGiB(cpu1[0]! - cpu0[0]!, GiB), unit: 'CPU-s/GiB', baseline: FLOOR_CPU, ratio: (cpu1[0]! - cpu0[0]!) / floor.cpuS,
      how: 'the mount\'s CPU (a buffered reader\'s: with the kernel filling its page cache)' },
    { group: buffered, figure: 'cold 1 GiB: CPU of the service', value: perGiB(cpu1[1]! - cpu0[1]!, GiB), unit: 'CPU-s/GiB', baseline: 'the floor: CPU of the service', ratio: (cpu1[1]! - cpu0[1]!) / floorServiceCpu, how: 'the service process\'s CPU' },
  )
  await rss('cold sequential')

  // The same read by an O_DIRECT reader (dd iflag=direct), whose bytes the kernel copies
  // straight into the reader's buffer: a buffered reader has the kernel fill its page cache
  // with them first, in the mount's own threads (FUSE's reply), and on this virtual machine
  // that costs a null filesystem 0.6 to 2.7 CPU-s per GiB, depending on how long ago the
  // guest last used the memory it fills (docs/performance.md). The read path's own cost is
  // the O_DIRECT figure; the null filesystem's two reads in this run are shown beside it.
  process.stderr.write('cold sequential read of 1 GiB through the mount, O_DIRECT reader...\n')
  const directFile = await fileOnMount(mountDir, oneDirect!)
  await service.control('POST', '/counters/reset')
  const cpuD0 = await cpuSeconds(pid)
  const direct = await sh('dd', [`if=${directFile}`, 'of=/dev/null', 'bs=1M', 'iflag=direct'])
  const mountDirectCpu = (await cpuSeconds(pid)) - cpuD0
  const directServed = await service.counters()
  const nullCpu = await withNullFs(w.home, [['f', 'a.bin', GiB], ['f', 'b.bin', GiB]], async (dir, nullPid) => {
    const cpuOf = async (file: string, flags: string[]) => {
      const c0 = await cpuSeconds(nullPid)
      await sh('dd', [`if=${path.join(dir, file)}`, 'of=/dev/null', 'bs=1M', ...flags])
      return (await cpuSeconds(nullPid)) - c0
    }
    return { buffered: await cpuOf('a.bin', []), direct: await cpuOf('b.bin', ['iflag=direct']) }
  })
  const odirect = 'dd bs=1M iflag=direct'
  rows.push(
    coldSpeed(odirect, direct.ms, rawMs, 'the reader on a cold 1 GiB file'),
    ...counted(odirect, directServed),
    { group: odirect, figure: 'cold 1 GiB: CPU of the mount', value: perGiB(mountDirectCpu, GiB), unit: 'CPU-s/GiB', baseline: FLOOR_CPU, ratio: mountDirectCpu / floor.cpuS, target: '<= 1.5 (O_DIRECT)',
      how: 'the mount\'s CPU (an O_DIRECT reader\'s: the read path\'s own cost, no page cache filled)' },
    { figure: 'null filesystem: CPU, buffered read', value: perGiB(nullCpu.buffered, GiB), unit: 'CPU-s/GiB', how: 'dd bs=1M of 1 GiB from RAM on null-fs.ts: what filling a page cache costs any FUSE file system here' },
    { figure: 'null filesystem: CPU, O_DIRECT read', value: perGiB(nullCpu.direct, GiB), unit: 'CPU-s/GiB', how: 'dd bs=1M iflag=direct of 1 GiB on null-fs.ts' },
  )

  process.stderr.write('transferfs download of the same file...\n')
  const out = path.join(w.home, 'download')
  const cli = await sh(process.execPath, [...process.execArgv, cliEntry, 'download', one!.id, '-o', out], w.env)
  await rm(out, { recursive: true, force: true })
  rows.push({ figure: 'transferfs download', value: mbps(GiB, cli.ms), unit: 'MB/s', baseline: 'curl 1 GiB (the raw link)', ratio: rawMs / cli.ms, target: '>= 0.7', how: 'transferfs download of the 1 GiB transfer (read before through the mount)' })

  process.stderr.write('four cold readers of the 2 GiB file...\n')
  const twoFile = await fileOnMount(mountDir, two!)
  const quarter = 256 * MiB
  const offsets = [0, 1, 2, 3].map((i) => i * (2 * GiB / 4))
  const t0 = performance.now()
  await Promise.all(offsets.map((at) => sh('dd', [`if=${twoFile}`, 'of=/dev/null', 'bs=1M', `skip=${at / MiB}`, `count=${quarter / MiB}`])))
  const fourMs = performance.now() - t0
  const curls: number[] = []
  for (let i = 0; i < 3; i++) {
    const c0 = performance.now()
    await Promise.all(offsets.map((at) => sh(w.curl[0]!, [...w.curl.slice(1), '-r', `${at}-${at + quarter - 1}`, urlOf(two!)])))
    curls.push(performance.now() - c0)
  }
  const fourRawMs = Math.min(...curls)
  rows.push(
    { figure: 'four curl range streams together', value: mbps(4 * quarter, fourRawMs), unit: 'MB/s', how: 'curl -r of the same four 256 MiB ranges at once, best of 3' },
    { figure: 'four cold readers together', value: mbps(4 * quarter, fourMs), unit: 'MB/s', baseline: 'four curl range streams together', ratio: fourRawMs / fourMs, target: '>= 0.6', how: 'four dd of 256 MiB at four offsets of a cold 2 GiB file at once' },
  )
  await rss('four readers')

  // The link of the target: 12.5 MB/s as a token bucket with a 256 KiB burst, as a shaping
  // proxy is (a pause between requests earns that much back). The unlike server is also
  // read through the same rate without a burst, where every pause is lost for good.
  process.stderr.write('sequential read through a 12.5 MB/s link...\n')
  await service.control('POST', '/throttle', { bytesPerSecond: LINK, burstBytes: BURST })
  const slowBytes = 48 * MiB
  /** The 48 MiB `n` places from the end of the 2 GiB file (none of it read before), through the throttle as it is set now. */
  const slowRead = (n: number) => sh('dd', [`if=${twoFile}`, 'of=/dev/null', 'bs=1M', `skip=${(2 * GiB - n * slowBytes) / MiB}`, `count=${slowBytes / MiB}`])
  const slow = await slowRead(1)
  await service.control('DELETE', '/faults')
  const linkFigure = 'the link: 12.5 MB/s'
  rows.push(
    { figure: linkFigure, value: LINK / MB, unit: 'MB/s', how: 'the service\'s throttle: a token bucket shared by every connection' },
    { figure: '48 MiB through the link', value: mbps(slowBytes, slow.ms), unit: 'MB/s', baseline: linkFigure, ratio: slowBytes / (slow.ms / 1000) / LINK, target: '>= 0.95', how: 'dd bs=1M of 48 MiB not read before; a 256 KiB burst' },
  )
  await rss('throttled')

  process.stderr.write('the same through the link to a server unlike ours...\n')
  // An HTTP/1.0-like server: every answer closes its connection, 20 ms before each request,
  // and a hash of 300 MB/s.
  const unlikeServer = { bytesPerSecond: LINK, latencyMs: 20, closeConnections: true, hashBytesPerSecond: 300 * MB }
  for (const [n, burstBytes] of [[2, BURST], [3, 0]] as const) {
    await service.control('POST', '/throttle', { ...unlikeServer, burstBytes })
    await service.control('POST', '/counters/reset')
    const unlike = await slowRead(n)
    const unlikeRoutes = (await service.counters()).routes
    await service.control('DELETE', '/faults')
    const requests = Object.values(unlikeRoutes).reduce((a, b) => a + b, 0)
    rows.push({
      figure: `48 MiB from a server unlike ours${burstBytes ? '' : ', no burst'}`, value: mbps(slowBytes, unlike.ms), unit: 'MB/s', baseline: linkFigure, ratio: slowBytes / (unlike.ms / 1000) / LINK,
      ...(burstBytes ? { target: '>= 0.95' } : {}), how: `the same through a server that closes every connection, 20 ms per request, hash 300 MB/s; ${requests} requests`,
    })
  }

  // A buffered `cat` of a cold 1 GiB file at each readahead the kernel may be given: its own
  // default (0: 128 KiB), 2 MiB, the mount's default 4 MiB, and 1 GiB (the kernel takes any
  // value). Each on a fresh mount and a file not read before. The kernel's readahead requests
  // arrive several at a time and out of order; each byte should still be served and hashed once.
  const readaheads = [0, 2048, 4096, 1024 * 1024]
  const catFiles = await service.seed(readaheads.length, { fileSize: GiB, subjectPrefix: 'Cat GiB' })
  for (const [i, kb] of readaheads.entries()) {
    process.stderr.write(`cold cat of 1 GiB at readAheadKb ${kb}...\n`)
    await w.unmount()
    w.env.TRANSFERFS_READ_AHEAD_KB = String(kb)
    await w.mount()
    const file = await fileOnMount(mountDir, catFiles[i]!)
    await service.control('POST', '/counters/reset')
    const cat = await sh('bash', ['-c', 'cat "$1" > /dev/null', 'bash', file])
    const c = await service.counters()
    const group = `cat, readAheadKb ${kb}`
    rows.push(coldSpeed(group, cat.ms, rawMs, 'the reader on a cold 1 GiB file'), ...counted(group, c))
  }

  // A reader that stops early through a slow link: `head -c 256M` of a cold 2 GiB file through
  // 12.5 MB/s (a token bucket with a 256 KiB burst, shared by every connection) with 20 ms per
  // request. A prefetch reaching further than the link delivers in a short while takes its
  // share of the link from the bytes the reader waits for and holds bytes nobody reads when
  // the reader stops; the rate and the bytes served per byte read tell. Each on a fresh mount
  // (after the listing, so the link slows file bytes only), and curl of the same bytes through
  // the same link as the baseline.
  const headBytes = 256 * MiB
  const link = { bytesPerSecond: LINK, burstBytes: BURST, latencyMs: 20 }
  const headReadaheads = [0, 4096]
  const headFiles = await service.seed(headReadaheads.length + 1, { fileSize: 2 * GiB, subjectPrefix: 'Head GiB' })
  /**
   * The service's counters once no byte was served for two seconds (at most 30 s): what the
   * read cost, with the kernel's readahead in flight when head exited answered. Not by requests
   * in flight: the service counts one given up during its added latency as in flight for good.
   */
  const quiet = async (): Promise<Counters> => {
    let last = await service.counters()
    for (let still = 0, i = 0; still < 8 && i < 120; i++) {
      await new Promise((r) => setTimeout(r, 250))
      const now = await service.counters()
      still = now.bytesServed === last.bytesServed ? still + 1 : 0
      last = now
    }
    return last
  }
  for (const [i, kb] of headReadaheads.entries()) {
    process.stderr.write(`head -c 256M of a cold 2 GiB file through the link at readAheadKb ${kb}...\n`)
    await w.unmount()
    w.env.TRANSFERFS_READ_AHEAD_KB = String(kb)
    await w.mount()
    const file = await fileOnMount(mountDir, headFiles[i]!)
    await sh('stat', [file])
    await service.control('POST', '/throttle', link)
    await service.control('POST', '/counters/reset')
    const head = await sh('bash', ['-c', 'head -c "$2" "$1" > /dev/null', 'bash', file, String(headBytes)])
    const atExit = await service.counters()
    const settled = await quiet()
    await service.control('DELETE', '/faults')
    const what = `head -c 256M through the link, readAheadKb ${kb}`
    rows.push(
      { figure: what, value: mbps(headBytes, head.ms), unit: 'MB/s', baseline: linkFigure, ratio: headBytes / (head.ms / 1000) / LINK, target: '>= 0.95',
        how: `head -c 256M of a cold 2 GiB file on a fresh mount, 12.5 MB/s, 256 KiB burst, 20 ms per request; ${settled.routes.download ?? 0} range GETs, ${settled.routes.rangehash ?? 0} GetRangeHash, ${settled.fileConnections} TLS` },
      { figure: `${what}: served when head exits`, value: atExit.bytesServed / headBytes, unit: '× bytes read', target: '<= 1.05', how: 'the service\'s counters as head exits' },
      { figure: `${what}: served once quiet`, value: settled.bytesServed / headBytes, unit: '× bytes read', target: '<= 1.05', how: 'the same once nothing was served for 2 s' },
    )
  }
  await service.control('POST', '/throttle', link)
  const headCurl = await sh(w.curl[0]!, [...w.curl.slice(1), '-r', `0-${headBytes - 1}`, urlOf(headFiles[headReadaheads.length]!)])
  await service.control('DELETE', '/faults')
  rows.push({ figure: 'curl of 256 MiB through the link', value: mbps(headBytes, headCurl.ms), unit: 'MB/s', baseline: linkFigure, ratio: headBytes / (headCurl.ms / 1000) / LINK, how: 'curl -r of the first 256 MiB of a cold 2 GiB file, the same link' })
})
