// Random and first reads through the mount against the local service, held against the
// service's own latency in the same run. Not a test: it prints figures.
//
//   node --import ./test/fuse/fixtures/register-ts.mjs scripts/bench/random.ts   (from TypeScript)
//   npm run build && node dist/scripts/bench/random.js                             (after a build)
//
// What it measures: fio random 4 KiB O_DIRECT reads (15 s) of a cold 2 GiB file, larger
// than the memory cache: IOPS, p50 and p99, and p50 against the service's own p50 for a
// 1 MiB range; the first 4 KiB of a cold small file and at a cold offset of the 2 GiB file
// through the service's throttle (12.5 MB/s shared, 20 ms per request), with the bytes the
// service served for each; the first 4 KiB and 4 KiB in the middle of a cold 16 MiB file
// against curl of the same bytes, here and through that link with a 256 KiB burst; the
// mount's peak RSS against memoryCacheBytes + 150 MiB.
import { fileOnMount, GiB, MB, median, MiB, peakRssMiB, resetPeakRss, RSS_BOUND_MIB, sh, withBenchWorld } from './world.js'


/** The columns of the first-bytes rows: the service as it is, through the target's link, and a server unlike ours through that link (with its burst, and without). */
const HERE = 'here'
const LINKED = 'through the link (12.5 MB/s, 256 KiB burst, 20 ms per request)'
/** A server that closes every connection and hashes at 300 MB/s, through the same link. */
const UNLIKE = 'a server unlike ours, the same link'
const FIRST = 'first 4 KiB of a cold small file'
const CURL_FIRST = 'curl of the first 4 KiB of a small file'

await withBenchWorld('random', {}, async (w) => {
  const { rows, service, client, mountDir } = w
  process.stderr.write('seeding a 2 GiB file and a small one...\n')
  const [big] = await service.seed(1, { fileSize: 2 * GiB, subjectPrefix: 'Two GiB' })
  const [small, plain, other, strict] = await service.seed(4, { fileSize: 200_000, subjectPrefix: 'Small' })
  const [mid, linked] = await service.seed(2, { fileSize: 16 * MiB, subjectPrefix: 'Sixteen MiB' })
  const pid = await w.mount()
  const bigFile = await fileOnMount(mountDir, big!)
  const smallFile = await fileOnMount(mountDir, small!)
  const size = big!.files[0]!.filesize!
  /** ms curl takes for the first 4 KiB of the transfer's file, best of three (a new connection each: curl's own cold start). */
  const curlFirst = async (t: typeof small) => {
    const times: number[] = []
    for (let i = 0; i < 3; i++) times.push((await sh(w.curl[0]!, [...w.curl.slice(1), '-r', '0-4095', t!.files[0]!.downloadurl])).ms)
    return Math.min(...times)
  }

  /** ms curl takes for 4 KiB of the transfer's file at `at`, best of three (a new connection each). */
  const curlBytes = async (t: typeof small, at: number) => {
    const times: number[] = []
    for (let i = 0; i < 3; i++) times.push((await sh(w.curl[0]!, [...w.curl.slice(1), '-r', `${at}-${at + 4095}`, t!.files[0]!.downloadurl])).ms)
    return Math.min(...times)
  }

  // First bytes as the service serves them here, against curl of the same 4 KiB.
  const plainCurl = await curlFirst(plain)
  const plainFirst = await sh('head', ['-c', '4096', await fileOnMount(mountDir, plain!)])
  const curlHow = 'curl -r of the same 4 KiB, best of 3, a new connection each'
  rows.push(
    { group: HERE, figure: CURL_FIRST, value: plainCurl, unit: 'ms', how: curlHow },
    { group: HERE, figure: FIRST, value: plainFirst.ms, unit: 'ms', baseline: CURL_FIRST, ratio: plainFirst.ms / plainCurl, target: '<= 2 here, <= 1.2 through the link', how: 'head -c 4096 of a cold 200 KB file (a server unlike ours closes every connection and hashes at 300 MB/s)' },
  )

  // A peek at a cold file bigger than a block: its first 4 KiB (`head`) and 4 KiB in its
  // middle (`dd skip=`), each against curl of the same bytes (best of three), here and
  // through a 12.5 MB/s link with a 256 KiB burst and 20 ms per request; with the bytes the
  // service served for each.
  const peekAt = Math.floor(mid!.files[0]!.filesize! / 2 / 4096) * 4096
  for (const [label, throttle, t] of [[HERE, null, mid], [LINKED, { bytesPerSecond: 12.5 * MB, latencyMs: 20, burstBytes: 256 * 1024 }, linked]] as const) {
    if (throttle) await service.control('POST', '/throttle', throttle)
    const file = await fileOnMount(mountDir, t!)
    const headCurl = await curlBytes(t, 0)
    await service.control('POST', '/counters/reset')
    const head = await sh('head', ['-c', '4096', file])
    const headBytes = (await service.counters()).bytesServed
    const ddCurl = await curlBytes(t, peekAt)
    await service.control('POST', '/counters/reset')
    const dd = await sh('dd', [`if=${file}`, 'of=/dev/null', 'bs=4096', 'count=1', `skip=${peekAt / 4096}`])
    const ddBytes = (await service.counters()).bytesServed
    await service.control('DELETE', '/faults')
    const target = '<= 2 here, <= 1.3 through the link'
    rows.push(
      { group: label, figure: 'curl of the first 4 KiB of the 16 MiB file', value: headCurl, unit: 'ms', how: curlHow },
      { group: label, figure: 'head -c 4096 of a cold 16 MiB file', value: head.ms, unit: 'ms', baseline: 'curl of the first 4 KiB of the 16 MiB file', ratio: head.ms / headCurl, target, how: 'head -c 4096' },
      { group: label, figure: '  fetched for head', value: headBytes / 1024, unit: 'KiB', how: 'the service\'s bytes served' },
      { group: label, figure: 'curl of 4 KiB in its middle', value: ddCurl, unit: 'ms', how: curlHow },
      { group: label, figure: 'dd of 4 KiB in its middle', value: dd.ms, unit: 'ms', baseline: 'curl of 4 KiB in its middle', ratio: dd.ms / ddCurl, target, how: 'dd bs=4096 count=1 skip=' },
      { group: label, figure: '  fetched for dd', value: ddBytes / 1024, unit: 'KiB', how: 'the service\'s bytes served' },
    )
  }

  // A server unlike ours (as an HTTP/1.0 server behind a slow link): every answer closes its
  // connection, 20 ms before each request, 12.5 MB/s, and a hash of 300 MB/s. The target's
  // link is a token bucket with a 256 KiB burst (a shaping proxy); the same link without a
  // burst, where each byte of a small file's body waits its turn, is shown beside it.
  const unlike = { bytesPerSecond: 12.5 * MB, latencyMs: 20, closeConnections: true, hashBytesPerSecond: 300 * MB }
  for (const [label, burstBytes, file] of [[UNLIKE, 256 * 1024, other], [`${UNLIKE} without a burst`, 0, strict]] as const) {
    await service.control('POST', '/throttle', { ...unlike, burstBytes })
    const otherCurl = await curlFirst(file)
    await service.control('POST', '/counters/reset')
    const otherFirst = await sh('head', ['-c', '4096', await fileOnMount(mountDir, file!)])
    const otherRequests = (await service.counters()).routes
    await service.control('DELETE', '/faults')
    const requests = Object.values(otherRequests).reduce((a, b) => a + b, 0)
    rows.push(
      { group: label, figure: CURL_FIRST, value: otherCurl, unit: 'ms', how: curlHow },
      { group: label, figure: FIRST, value: otherFirst.ms, unit: 'ms', baseline: CURL_FIRST, ratio: otherFirst.ms / otherCurl, how: 'head -c 4096 of a cold 200 KB file (a server unlike ours closes every connection and hashes at 300 MB/s)' },
      { group: label, figure: 'requests for the first 4 KiB of the small file', value: requests, unit: '', how: 'the service\'s counters' },
    )
  }

  // First bytes over a slow link with a round-trip cost, before anything of these files is cached.
  await service.control('POST', '/throttle', { bytesPerSecond: 12.5 * MB, latencyMs: 20 })
  await service.control('POST', '/counters/reset')
  const first = await sh('head', ['-c', '4096', smallFile])
  const firstBytes = (await service.counters()).bytesServed
  await service.control('POST', '/counters/reset')
  const firstBig = await sh('dd', [`if=${bigFile}`, 'of=/dev/null', 'bs=4096', 'count=1', `skip=${Math.floor((size * 0.9) / 4096)}`])
  const firstBigBytes = (await service.counters()).bytesServed
  await service.control('DELETE', '/faults')
  const linkHow = 'through 12.5 MB/s + 20 ms per request, no burst'
  rows.push(
    { figure: 'first 4 KiB of a cold small file, 12.5 MB/s + 20 ms', value: first.ms, unit: 'ms', target: '<= 45 ms', how: `head -c 4096 of a 200 KB file, ${linkHow}` },
    { figure: '  fetched for the small file', value: firstBytes / 1024, unit: 'KiB', target: '<= 1.2 MiB', how: 'the service\'s bytes served' },
    { figure: 'first 4 KiB at a cold offset of 2 GiB, 12.5 MB/s + 20 ms', value: firstBig.ms, unit: 'ms', target: '<= 50 ms', how: `dd of 4 KiB at 90% of a 2 GiB file, ${linkHow}` },
    { figure: '  fetched at the cold offset', value: firstBigBytes / 1024, unit: 'KiB', target: '<= 1.2 MiB', how: 'the service\'s bytes served' },
  )

  const latencies: number[] = []
  for (let i = 0; i < 50; i++) {
    const at = Math.floor((Math.random() * (size - MiB)) / 4096) * 4096
    const t = performance.now()
    await client.download.fetchRange(big!.files[0]!.downloadurl, at, at + MiB)
    latencies.push(performance.now() - t)
  }
  const serviceP50 = median(latencies)
  await resetPeakRss(pid)
  process.stderr.write('fio randread 4 KiB, O_DIRECT, 15 s...\n')
  const fio = JSON.parse((await sh('fio', ['--name=rand', `--filename=${bigFile}`, '--rw=randread', '--bs=4k', '--direct=1', '--ioengine=psync',
    '--runtime=15', '--time_based', '--output-format=json', `--size=${size}`])).stdout) as { jobs: Array<{ read: { iops: number; clat_ns: { percentile: Record<string, number> } } }> }
  const rand = fio.jobs[0]!.read
  const p50 = rand.clat_ns.percentile['50.000000']! / 1e6
  const p99 = rand.clat_ns.percentile['99.000000']! / 1e6
  process.stderr.write('fio randread 1 MiB, O_DIRECT, 15 s...\n')
  const fio1m = JSON.parse((await sh('fio', ['--name=rand1m', `--filename=${bigFile}`, '--rw=randread', '--bs=1M', '--direct=1', '--ioengine=psync',
    '--runtime=15', '--time_based', '--output-format=json', `--size=${size}`])).stdout) as { jobs: Array<{ read: { iops: number } }> }
  const rand1m = fio1m.jobs[0]!.read.iops
  const peak = await peakRssMiB(pid)
  const fioHow = (bs: string) => `fio randread ${bs}, O_DIRECT, psync, 15 s over a cold 2 GiB file`
  rows.push(
    { figure: 'service: 1 MiB range, p50', value: serviceP50, unit: 'ms', how: 'the client\'s fetchRange of 1 MiB at random offsets, 50 in a row' },
    { figure: 'the client\'s 1 MiB ranges one at a time', value: 1000 / serviceP50, unit: 'per s', how: '1000 / that p50' },
    { figure: 'fio random 1 MiB', value: rand1m, unit: 'IOPS', baseline: 'the client\'s 1 MiB ranges one at a time', ratio: rand1m / (1000 / serviceP50), target: '>= 0.5', how: fioHow('1 MiB') },
    { figure: 'fio random 4 KiB', value: rand.iops, unit: 'IOPS', target: '>= 1000 IOPS', how: fioHow('4 KiB') },
    { figure: '  4 KiB p50', value: p50, unit: 'ms', baseline: 'service: 1 MiB range, p50', ratio: p50 / serviceP50, target: '<= 3', how: 'fio\'s completion latency' },
    { figure: '  4 KiB p99', value: p99, unit: 'ms', target: '<= 10 ms', how: 'fio\'s completion latency' },
    { figure: 'mount peak RSS', value: peak, unit: 'MiB', baseline: 'memoryCacheBytes + 150 MiB', ratio: peak / RSS_BOUND_MIB, target: '<= 1', how: 'VmHWM of the mount over the two fio runs' },
  )
})
