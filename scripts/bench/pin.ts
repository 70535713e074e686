// Pinning files offline (pins) through the mount against the local service, each figure held
// against a baseline of the same run. Not a test: it prints figures.
//
//   node --import ./test/fuse/fixtures/register-ts.mjs scripts/bench/pin.ts    (from TypeScript)
//   npm run build && node dist/scripts/bench/pin.js                              (after a build)
//
// What it measures:
// - a cold `cat` of a 1 GiB file alone, against a cold `cat` of another 1 GiB file while a pin
//   of a 2 GiB file fetches in the background (pinned, and some of it on disk, before the read
//   starts); each on a fresh mount with an empty cache, after dropping the kernel's caches;
//   three rounds, the files swapped in each. The read's speed with the pin / alone in each
//   round, their median and all rounds' time together (target >= 0.8), and what the pin
//   fetched while the reader ran: the bytes the service served beyond the read's file, and
//   the pin's bytes on disk in status.json during the read. Each read also says how busy the
//   rest of the machine was (other work, and the kernel's own threads: the pin's bytes written
//   before the read are flushed to disk during it, so the dirty page cache at its start is
//   given too);
// - the pin's own rate: from `transferfs pin` of a cold 1 GiB file until its
//   user.transferfs.state says `pinned`, against curl of the same file from the same service
//   (the raw link), curl | md5sum (a fetch that checks every byte, the floor) and the cold
//   reads above (a verified read through FUSE); the mount's CPU per GiB against curl +
//   md5sum's; the bytes served and hashed and the requests;
// - the service's requests for pinning the 10 newest transfers of a 5,000-transfer inbox one
//   by one, each until it is pinned, after an `ls inbox/` (its requests counted apart): by
//   route, and the bytes served and hashed against the bytes of those 10 transfers.
import { readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import type { Transfer } from '../../src/api/types.js'
import type { BenchRow } from './results.js'
import { PINS_FILE } from '../../src/pin/pin-store.js'
import { STATUS_JSON_FILE, type StatusFileContent } from '../../src/status/status-file.js'
import {
  childrenCpuSeconds, type Counters, cpuSeconds, dropCaches, fileOnMount, GiB, machineBusySeconds, MB, mbps, median, MiB, perGiB, quietCounters, sh,
  transferFolder, transferfs, verifiedFetchFloor, waitUntil, withBenchWorld, type BenchWorld,
} from './world.js'

/** The file each cold read reads. */
const READ = GiB
/** The file pinned while the other is read. */
const PINNED = 2 * GiB
/** The file whose pin is timed against curl. */
const RATE = GiB
/** The pin has this much on disk before the reader starts: under way, not just asked for. */
const UNDER_WAY = 64 * MiB
/** Rounds of a read alone and a read beside the pin: single reads move by ±30% on a shared machine. */
const ROUNDS = 3
const INBOX = 5000
const NEWEST = 10
/** What each of the newest transfers holds: files of a few pieces each, the last piece short. */
const NEWEST_SHAPE = { files: 2, fileSize: 12 * MiB + 12345 }

const routes = (c: Counters) => Object.entries(c.routes).map(([r, n]) => `${r} ${n}`).join(', ') || 'none'
const requests = (c: Counters) => Object.values(c.routes).reduce((a, b) => a + b, 0)

async function state(p: string): Promise<string> {
  return (await sh('getfattr', ['--only-values', '-n', 'user.transferfs.state', p])).stdout
}

/** The pins section of the mount's status.json (rewritten each second while it changes), with when it was written. */
async function pinStatus(w: BenchWorld): Promise<{ at: number; bytesCached: number } | null> {
  try {
    const s = JSON.parse(await readFile(path.join(w.env.TRANSFERFS_DATA_DIR!, STATUS_JSON_FILE), 'utf8')) as StatusFileContent
    const entries = s.pins?.entries ?? []
    return { at: s.at, bytesCached: entries.reduce((n, e) => n + e.bytesCached, 0) }
  } catch {
    return null
  }
}

/** A mount with an empty cache and no pins (the pins saved by the mount before it are dropped too). */
async function freshMount(w: BenchWorld): Promise<number> {
  await w.unmount()
  await rm(w.env.TRANSFERFS_CACHE_DIR!, { recursive: true, force: true })
  await rm(path.join(w.env.TRANSFERFS_DATA_DIR!, PINS_FILE), { force: true })
  return w.mount()
}

interface ColdRead {
  ms: number
  /** CPU seconds while it ran: the mount, `cat`, the service, the rest of the machine. */
  mountCpu: number
  readerCpu: number
  serviceCpu: number
  othersCpu: number
  counters: Counters
  /** Bytes of the page cache waiting to be written to disk when it started (the kernel writes them meanwhile). */
  dirtyAtStart: number
}

/** Dirty and under-writeback bytes of the page cache (/proc/meminfo). */
async function dirtyBytes(): Promise<number> {
  const info = await readFile('/proc/meminfo', 'utf8')
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(info)?.[1] ?? 0)
  return (kb('Dirty') + kb('Writeback')) * 1024
}

/** A cold `cat` of `file` on the mount `pid`, with the service's counters from zero. */
async function coldCat(w: BenchWorld, pid: number, file: string): Promise<ColdRead> {
  await w.service.control('POST', '/counters/reset')
  const dirtyAtStart = await dirtyBytes()
  const cpu0 = [await cpuSeconds(pid), await cpuSeconds(w.service.pid), await machineBusySeconds()]
  const r = await sh('bash', ['-c', 'cat "$1" >/dev/null; times', 'bash', file])
  const cpu1 = [await cpuSeconds(pid), await cpuSeconds(w.service.pid), await machineBusySeconds()]
  const counters = await w.service.counters()
  const [mountCpu, serviceCpu, busy] = cpu1.map((c, i) => c - cpu0[i]!) as [number, number, number]
  const readerCpu = childrenCpuSeconds(r.stdout)
  return { ms: r.ms, mountCpu, readerCpu, serviceCpu, othersCpu: Math.max(0, busy - mountCpu - readerCpu - serviceCpu), counters, dirtyAtStart }
}

/** A cold read's rows in its round's column: the mount's CPU, how busy the rest of the machine was (its dirty page cache at the start goes to stderr). */
const readRows = (group: string, what: string, r: ColdRead): BenchRow[] => {
  process.stderr.write(`${group}, ${what}: ${(r.dirtyAtStart / MiB).toFixed(0)} MiB of the page cache dirty at the start\n`)
  return [
    { group, figure: `${what}: mount CPU`, value: perGiB(r.mountCpu, READ), unit: 'CPU-s/GiB', how: 'the mount\'s CPU during the read' },
    { group, figure: `${what}: the rest of the machine`, value: r.othersCpu / (r.ms / 1000), unit: 'cores', how: 'cores busy with other work and the kernel\'s threads (/proc/stat)' },
  ]
}

/**
 * Part 1: a cold read alone and beside a pin fetching, in rounds (the two files swapped in
 * each: any difference between them falls on both sides); the reads alone, for part 2.
 */
async function readBesidePin(w: BenchWorld, files: [Transfer, Transfer], pinned: Transfer): Promise<ColdRead[]> {
  const { rows } = w
  const alone: ColdRead[] = []
  const beside: ColdRead[] = []
  for (let round = 1; round <= ROUNDS; round++) {
    const [first, second] = round % 2 === 1 ? files : [files[1], files[0]]
    process.stderr.write(`round ${round}: a cold read alone...\n`)
    let pid = await freshMount(w)
    const aloneFile = await fileOnMount(w.mountDir, first)
    await dropCaches()
    const a = await coldCat(w, pid, aloneFile)
    alone.push(a)
    const group = `round ${round}`
    rows.push(
      { group, figure: 'cold cat alone', value: mbps(READ, a.ms), unit: 'MB/s', how: 'cat of a cold 1 GiB file, fresh mount, caches dropped' },
      ...readRows(group, 'alone', a),
    )

    process.stderr.write(`round ${round}: a cold read while a 2 GiB pin fetches...\n`)
    pid = await freshMount(w)
    const besideFile = await fileOnMount(w.mountDir, second)
    const pinFile = await fileOnMount(w.mountDir, pinned)
    await dropCaches()
    const t0 = performance.now()
    await transferfs(w.env, ['pin', pinFile])
    let before = await pinStatus(w)
    if (!(await waitUntil(async () => ((before = await pinStatus(w))?.bytesCached ?? 0) >= UNDER_WAY, 120_000, 100))) {
      throw new Error(`the pin of ${pinFile} had ${before?.bytesCached ?? 0} bytes on disk after 2 minutes`)
    }
    const ranMs = performance.now() - t0
    // The pin's bytes on disk while the reader runs, as status.json has them: it is rewritten
    // each second while they change, so its first and last writes within the read are taken.
    const startedAt = Date.now()
    const samples: Array<{ at: number; bytesCached: number }> = []
    let reading = true
    const sampling = (async () => {
      while (reading) {
        const s = await pinStatus(w)
        if (s && s.at !== samples.at(-1)?.at) samples.push(s)
        await new Promise((r) => setTimeout(r, 100))
      }
    })()
    const b = await coldCat(w, pid, besideFile).finally(() => { reading = false })
    const endedAt = Date.now()
    await sampling
    beside.push(b)
    const within = samples.filter((s) => s.at >= startedAt && s.at <= endedAt)
    const early = within[0]
    const late = within.at(-1)
    rows.push(
      { group, figure: 'cold cat beside the pin', value: mbps(READ, b.ms), unit: 'MB/s', baseline: 'cold cat alone', ratio: a.ms / b.ms, target: '>= 0.8 (the median round)', how: 'cat of the other cold 1 GiB file while a 2 GiB pin fetches' },
      ...readRows(group, 'beside', b),
      { group, figure: 'the pin before the read', value: before!.bytesCached / MiB, unit: 'MiB', how: `on disk (status.json) ${(ranMs / 1000).toFixed(1)} s after transferfs pin` },
      { group, figure: 'the pin while the reader ran: served', value: (b.counters.bytesServed - READ) / MiB, unit: 'MiB', how: 'the service\'s bytes served beyond the read\'s 1 GiB' },
      { group, figure: 'the pin while the reader ran: on disk', value: early && late ? (late.bytesCached - early.bytesCached) / MiB : NaN, unit: 'MiB', how: 'growth of the pin\'s bytes on disk in status.json within the read' },
    )
  }
  const total = (rs: ColdRead[]) => rs.reduce((n, r) => n + r.ms, 0)
  const roundsHow = `${ROUNDS} rounds, the two files swapped each round`
  rows.push(
    { figure: 'cold cat alone, all rounds', value: mbps(ROUNDS * READ, total(alone)), unit: 'MB/s', how: roundsHow },
    { figure: 'cold cat beside a 2 GiB pin, all rounds', value: mbps(ROUNDS * READ, total(beside)), unit: 'MB/s', baseline: 'cold cat alone, all rounds', ratio: total(alone) / total(beside), target: '>= 0.8', how: roundsHow },
    { figure: 'the median round', value: median(alone.map((a, i) => a.ms / beside[i]!.ms)), unit: '× alone', target: '>= 0.8', how: 'speed beside the pin / alone, the median of the rounds' },
  )
  return alone
}

/** Part 2: a pin's own rate and CPU, against curl and curl | md5sum of the same file. */
async function pinRate(w: BenchWorld, t: Transfer, coldReads: ColdRead[]): Promise<void> {
  const { rows, service } = w
  process.stderr.write('the pin of a cold 1 GiB file until pinned...\n')
  const pid = await freshMount(w)
  const file = await fileOnMount(w.mountDir, t)
  await sh('stat', [file])
  await dropCaches()
  await quietCounters(service)
  const cpu0 = [await cpuSeconds(pid), await cpuSeconds(service.pid), await machineBusySeconds()]
  const t0 = performance.now()
  const cmd = await transferfs(w.env, ['pin', file])
  if (!(await waitUntil(async () => (await state(file)) === 'pinned', 600_000, 100))) throw new Error(`${file} is not pinned after 10 minutes: ${await state(file)}`)
  const ms = performance.now() - t0
  const cpu1 = [await cpuSeconds(pid), await cpuSeconds(service.pid), await machineBusySeconds()]
  const c = await service.counters()
  const [mountCpu, serviceCpu, busy] = cpu1.map((x, i) => x - cpu0[i]!) as [number, number, number]

  process.stderr.write('curl and curl | md5sum of the same file...\n')
  const url = t.files[0]!.downloadurl
  await dropCaches()
  const busy0 = await machineBusySeconds()
  const curl = await sh(w.curl[0]!, [...w.curl.slice(1), url])
  const curlBusy = await machineBusySeconds() - busy0
  await dropCaches()
  const floorCpu0 = await cpuSeconds(service.pid)
  const floor = await verifiedFetchFloor(service.ca, url, 2)
  const floorServiceCpu = (await cpuSeconds(service.pid) - floorCpu0) / 2
  const rate = RATE / MB / (ms / 1000)
  rows.push(
    { figure: 'curl of the file (the raw link)', value: mbps(RATE, curl.ms), unit: 'MB/s', how: `curl to /dev/null; ${(curlBusy / (curl.ms / 1000)).toFixed(2)} cores busy` },
    { figure: 'curl | md5sum (the floor)', value: mbps(RATE, floor.ms), unit: 'MB/s', how: 'a fetch that checks every byte, best of 2 by CPU' },
    { figure: 'the floor: CPU of curl + md5sum', value: perGiB(floor.cpuS, RATE), unit: 'CPU-s/GiB', how: `bash's times; the service ${perGiB(floorServiceCpu, RATE).toFixed(2)} CPU-s/GiB` },
    { figure: 'the cold cats alone above, median', value: READ / MB / (median(coldReads.map((r) => r.ms)) / 1000), unit: 'MB/s', how: 'part 1' },
    { figure: 'pin of a cold 1 GiB file until pinned', value: rate, unit: 'MB/s', baseline: 'curl of the file (the raw link)', ratio: rate / (RATE / MB / (curl.ms / 1000)),
      how: `transferfs pin until user.transferfs.state says pinned (the command returned after ${(cmd.ms / 1000).toFixed(1)} s)` },
    { figure: '  the same / the floor', value: rate, unit: 'MB/s', baseline: 'curl | md5sum (the floor)', ratio: rate / (RATE / MB / (floor.ms / 1000)), how: 'the same pin' },
    { figure: '  the same / the cold cats', value: rate, unit: 'MB/s', baseline: 'the cold cats alone above, median', ratio: rate / (READ / MB / (median(coldReads.map((r) => r.ms)) / 1000)), how: 'the same pin' },
    { figure: 'the pin: mount CPU', value: perGiB(mountCpu, RATE), unit: 'CPU-s/GiB', baseline: 'the floor: CPU of curl + md5sum', ratio: mountCpu / floor.cpuS, how: 'the mount\'s CPU until pinned' },
    { figure: 'the pin: service CPU', value: perGiB(serviceCpu, RATE), unit: 'CPU-s/GiB', how: 'the service process\'s CPU' },
    { figure: 'the pin: the rest of the machine', value: Math.max(0, busy - mountCpu - serviceCpu) / (ms / 1000), unit: 'cores', how: '/proc/stat less mount and service' },
    { figure: 'the pin: bytes served', value: c.bytesServed / RATE, unit: '× the file', how: 'the service\'s counters' },
    { figure: 'the pin: bytes hashed', value: c.bytesHashed / RATE, unit: '× the file', how: 'the service\'s counters' },
    { figure: 'the pin: range GETs', value: c.routes.download ?? 0, unit: '', how: 'one per 5 MiB piece' },
    { figure: 'the pin: GetRangeHash calls', value: c.routes.rangehash ?? 0, unit: '', how: 'one per 5 MiB piece' },
  )
}

/** Part 3: the requests for pinning the newest transfers of a large inbox, one by one. */
async function pinNewest(w: BenchWorld, older: number): Promise<void> {
  const { rows, service } = w
  process.stderr.write(`seeding ${INBOX - older - NEWEST} small transfers, then ${NEWEST} of ${NEWEST_SHAPE.files} files...\n`)
  await service.control('POST', '/inbox/seed', { to: service.user.email, count: INBOX - older - NEWEST })
  // The newest after everything seeded before, whatever the seeding took: the service's clock a day on.
  await service.control('POST', '/clock', { advanceMs: 24 * 3600_000 })
  const newest = await service.seed(NEWEST, { ...NEWEST_SHAPE, subjectPrefix: 'Newest' })
  const bytes = newest.reduce((n, t) => n + t.files.reduce((m, f) => m + (f.filesize ?? 0), 0), 0)
  await quietCounters(service)
  await freshMount(w)
  const ls = await sh('ls', [path.join(w.mountDir, 'inbox')])
  const listed = ls.stdout.split('\n').filter(Boolean).length
  // The mount starts reading the inbox's pages as soon as it is up: its start and the ls together.
  const lsCounters = await quietCounters(service)
  const folders: string[] = []
  for (const t of newest) folders.push(await transferFolder(w.mountDir, t))
  // The folders' own lookups are not the pins'.
  await quietCounters(service)
  process.stderr.write(`pinning the ${NEWEST} newest transfers one by one...\n`)
  const t0 = performance.now()
  for (const dir of folders.reverse()) {
    await transferfs(w.env, ['pin', dir])
    if (!(await waitUntil(async () => (await state(dir)) === 'pinned', 120_000, 100))) throw new Error(`${dir} is not pinned after 2 minutes: ${await state(dir)}`)
  }
  const ms = performance.now() - t0
  const c = await quietCounters(service)
  const newestHow = `the ${NEWEST} newest transfers of ${INBOX} (${NEWEST_SHAPE.files} files of ${(NEWEST_SHAPE.fileSize / MiB).toFixed(2)} MiB each), pinned one by one, each until pinned`
  rows.push(
    { figure: `a fresh mount and ls inbox/ of ${INBOX}: requests`, value: requests(lsCounters), unit: '', how: `${listed} listed in ${(ls.ms / 1000).toFixed(2)} s; ${routes(lsCounters)}` },
    { figure: `pin of the ${NEWEST} newest`, value: ms / 1000, unit: 's', how: newestHow },
    { figure: '  requests', value: requests(c), unit: '', how: routes(c) },
    { figure: '  bytes served', value: c.bytesServed / bytes, unit: '× their bytes', how: `of ${(bytes / MiB).toFixed(0)} MiB` },
    { figure: '  bytes hashed', value: c.bytesHashed / bytes, unit: '× their bytes', how: 'the service\'s counters' },
    { figure: '  TLS connections', value: c.fileConnections, unit: '', how: 'TLS connections the file server accepted' },
  )
}

await withBenchWorld('pin', {}, async (w) => {
  const started = performance.now()
  process.stderr.write('seeding two 1 GiB files and a 2 GiB file...\n')
  const reads = await w.service.seed(2, { fileSize: READ, subjectPrefix: 'Read GiB' })
  const [pinned] = await w.service.seed(1, { fileSize: PINNED, subjectPrefix: 'Pinned two GiB' })
  const coldReads = await readBesidePin(w, [reads[0]!, reads[1]!], pinned!)
  await pinRate(w, reads[0]!, coldReads)
  await pinNewest(w, reads.length + 1)
  process.stderr.write(`the whole step took ${((performance.now() - started) / 1000).toFixed(0)} s\n`)
})
