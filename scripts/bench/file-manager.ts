// Nautilus opening an inbox of 5,000 transfers in list view, with the transferfs extension
// (desktop/file-managers) and without it, in the same run. Not a test: it prints figures.
//
//   node --import ./test/fuse/fixtures/register-ts.mjs scripts/bench/file-manager.ts   (from TypeScript)
//   npm run build && node dist/scripts/bench/file-manager.js                             (after a build)
//
// Each open is a fresh Nautilus (`nautilus --new-window inbox/`) in a fresh session
// (`xvfb-run -a dbus-run-session`) with a home of its own and the list view set, on a mount
// whose inbox pages have already arrived (`ls inbox/` first), so both sides list the same
// cached folder. The end point is file-manager-probe.py, a Nautilus extension loaded on both
// sides: it notes the time once Nautilus has asked it about every entry of inbox/. Nautilus
// asks the info providers about one file of a folder at a time, each provider in turn, so
// at that point the view holds all the rows and the transferfs extension has filled the
// Transfer column of all of them but at most the last. The time runs from just before
// Nautilus is started; the two sides alternate, 3 times each (BENCH_FM_RUNS), and the medians
// are compared, and so is each round's pair. BENCH_FM_COMPARE=<entry file> adds a third side to
// each round, another copy of the extension (an earlier commit's): a before and after under one load.
// The service's counters are read for each open: its bytes served (file content) and
// requests.
import { spawn } from 'node:child_process'
import { mkdir, readFile, readdir, rm, symlink } from 'node:fs/promises'
import path from 'node:path'
import { killGroup } from '../support/process-group.js'
import { formatNumber } from './results.js'
import { cpuSeconds, median, root, sh, withBenchWorld, type BenchService } from './world.js'

const TRANSFERS = 5000
const RUNS = Number(process.env.BENCH_FM_RUNS ?? 3)
/** ms: for one open to reach its end point before it counts as failed. */
const OPEN_TIMEOUT_MS = Number(process.env.BENCH_FM_TIMEOUT_MS ?? 180_000)
const PROBE = path.join(root, 'scripts/bench/file-manager-probe.py')
const READS = path.join(root, 'scripts/bench/file-manager-reads.py')
/** The extension's entry file (BENCH_FM_EXTENSION: another, such as a changed copy to profile). */
const EXTENSION = path.resolve(process.env.BENCH_FM_EXTENSION ?? path.join(root, 'desktop/file-managers/nautilus/transferfs_nautilus.py'))
/** BENCH_FM_COMPARE: another copy's entry file (an earlier commit's), opened as a third side of each round, for a before/after under the same load. */
const COMPARE = process.env.BENCH_FM_COMPARE ? path.resolve(process.env.BENCH_FM_COMPARE) : undefined
/** What the compared copy is, for the figures (BENCH_FM_COMPARE_NAME, e.g. "main at ed75029"); else its path. */
const COMPARE_NAME = process.env.BENCH_FM_COMPARE_NAME ?? (COMPARE && path.relative(root, COMPARE))
const SETTINGS: Array<[string, string, string]> = [
  ['org.gnome.nautilus.preferences', 'default-folder-viewer', 'list-view'],
  ['org.gnome.nautilus.list-view', 'default-visible-columns', "['name', 'size', 'Transferfs::state']"],
  ['org.gnome.nautilus.window-state', 'initial-size', '(1260, 780)'],
  // Tracker (which Nautilus starts) indexes nothing: it would read files of the home.
  ['org.freedesktop.Tracker3.Miner.Files', 'index-recursive-directories', '[]'],
  ['org.freedesktop.Tracker3.Miner.Files', 'index-single-directories', '[]'],
]

async function quiet(service: BenchService): Promise<void> {
  for (let idle = 0; idle < 10;) {
    await new Promise((r) => setTimeout(r, 200))
    idle = (await service.counters()).inFlight > 0 ? 0 : idle + 1
  }
  await service.control('POST', '/counters/reset')
}

/** The processes whose environment carries `mark` (what the session bus started, outside the group). */
async function marked(mark: string): Promise<number[]> {
  const out: number[] = []
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    const env = await readFile(`/proc/${name}/environ`, 'latin1').catch(() => '')
    if (env.split('\0').includes(`TRANSFERFS_BENCH_SESSION=${mark}`)) out.push(Number(name))
  }
  return out
}

interface Open {
  ms: number
  log: string
  /** CPU seconds of the nautilus process, from its start to the end point (and a little past it). */
  nautilusCpuS: number
}

/** The CPU seconds of the session's nautilus process (NaN when it is not found). */
async function nautilusCpu(mark: string): Promise<number> {
  for (const pid of await marked(mark)) {
    if ((await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim() === 'nautilus') return cpuSeconds(pid)
  }
  return NaN
}

/** One fresh Nautilus in a fresh session on `folder`, with the extension at `extension` (none: without it); the ms until the probe has seen every entry. */
async function openInNautilus(home: string, folder: string, extension: string | undefined): Promise<Open> {
  await rm(home, { recursive: true, force: true })
  const extensions = path.join(home, 'data', 'nautilus-python', 'extensions')
  await mkdir(extensions, { recursive: true })
  await mkdir(path.join(home, 'run'), { mode: 0o700 })
  await symlink(PROBE, path.join(extensions, 'transferfs_bench_probe.py'))
  if (extension) await symlink(extension, path.join(extensions, 'transferfs_nautilus.py'))
  const mark = path.basename(home) + (extension ? '-with' : '-without')
  const start = path.join(home, 'start'), done = path.join(home, 'done'), logFile = path.join(home, 'session.log')
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home, XDG_DATA_HOME: path.join(home, 'data'), XDG_CONFIG_HOME: path.join(home, 'config'), XDG_RUNTIME_DIR: path.join(home, 'run'),
    // Settings from a key file in XDG_CONFIG_HOME: set here, read by Nautilus, no dconf.
    GSETTINGS_BACKEND: 'keyfile',
    // No GL under Xvfb: GTK 4 draws with cairo.
    GSK_RENDERER: 'cairo', GDK_BACKEND: 'x11', PYTHONDONTWRITEBYTECODE: '1', NAUTILUS_PYTHON_DEBUG: 'misc',
    TRANSFERFS_BENCH_FOLDER: folder, TRANSFERFS_BENCH_COUNT: String(TRANSFERS), TRANSFERFS_BENCH_OUT: done,
    TRANSFERFS_BENCH_SESSION: mark,
  }
  for (const [schema, key, value] of SETTINGS) await sh('gsettings', ['set', schema, key, value], env)
  const script = 'date +%s.%N >"$1"; exec stdbuf -oL -eL nautilus --new-window "$2"'
  const child = spawn('timeout', ['-k', '5', String(OPEN_TIMEOUT_MS / 1000 + 30), 'xvfb-run', '-a', '-s', '-screen 0 1280x800x24 -nolisten tcp',
    'dbus-run-session', '--', 'bash', '-c', `${script} >>"$3" 2>&1`, 'bash', start, folder, logFile], { detached: true, stdio: 'ignore', env })
  child.on('error', () => {})
  try {
    const end = Date.now() + OPEN_TIMEOUT_MS
    for (;;) {
      const text = await readFile(done, 'utf8').catch(() => '')
      if (text) {
        const [at, seen] = text.trim().split(' ').map(Number)
        const from = Number((await readFile(start, 'utf8')).trim())
        if (seen !== TRANSFERS) throw new Error(`the probe saw ${seen} entries, not ${TRANSFERS}`)
        return { ms: (at! - from) * 1000, log: await readFile(logFile, 'utf8').catch(() => ''), nautilusCpuS: await nautilusCpu(mark) }
      }
      if (Date.now() > end || child.exitCode !== null) {
        const progress = (await readFile(`${done}.progress`, 'utf8').catch(() => '')).trim().split(' ')[1] ?? 0
        throw new Error(`Nautilus did not ask about the ${TRANSFERS} entries of ${folder} (${child.exitCode === null ? 'timed out' : `ended ${child.exitCode}`}; ${progress} asked about): ${await readFile(logFile, 'utf8').catch(() => '')}`)
      }
      await new Promise((r) => setTimeout(r, 50))
    }
  } finally {
    try { process.kill(-child.pid!, 'SIGTERM') } catch {}
    await new Promise((r) => setTimeout(r, 1000))
    await killGroup(child.pid!, 5000)
    for (const pid of await marked(mark)) try { process.kill(pid, 'SIGKILL') } catch {}
  }
}

/** ms the mount reuses a listing (its default listingTtlMs), and a transfer's details. */
const LISTING_TTL_MS = 30_000

/**
 * The inbox listed afresh: once the listing is past its TTL, `ls inbox/` starts the refresh of
 * its pages (and with them every transfer's details), and quiet() waits for it to end. Each
 * open then starts on a fresh listing, not one that goes stale (and refreshes, page after page
 * and folder by folder) during some opens and not others.
 */
async function freshInbox(service: BenchService, inbox: string, since: number): Promise<number> {
  await new Promise((r) => setTimeout(r, Math.max(0, since + LISTING_TTL_MS + 1000 - Date.now())))
  const listed = (await sh('ls', [inbox])).stdout.split('\n').filter(Boolean).length
  if (listed !== TRANSFERS) throw new Error(`inbox/ lists ${listed} entries, not ${TRANSFERS}`)
  await quiet(service)
  return Date.now()
}

interface Side { ms: number[]; bytes: number; requests: number; failures: number; nautilusCpuS: number[]; mountCpuS: number[]; calls: Record<string, number> }
const newSide = (): Side => ({ ms: [], bytes: 0, requests: 0, failures: 0, nautilusCpuS: [], mountCpuS: [], calls: {} })

await withBenchWorld('file-manager', {}, async (w) => {
  const { rows, service, mountDir } = w
  process.stderr.write(`seeding ${TRANSFERS} transfers...\n`)
  await service.control('POST', '/inbox/seed', { to: service.user.email, count: TRANSFERS })
  const mountPid = await w.mount()
  const inbox = path.join(mountDir, 'inbox')
  await sh('ls', [inbox])
  let refreshed = 0
  const sides = { without: newSide(), with: newSide(), compared: newSide() }
  const extensionOf = { without: undefined, with: EXTENSION, compared: COMPARE }
  for (let i = 0; i < RUNS; i++) {
    for (const side of COMPARE ? ['without', 'with', 'compared'] as const : ['without', 'with'] as const) {
      refreshed = await freshInbox(service, inbox, refreshed)
      const mountCpu = await cpuSeconds(mountPid)
      const open = await openInNautilus(path.join(w.home, 'nautilus'), inbox, extensionOf[side])
      const counters = await service.counters()
      const s = sides[side]
      s.ms.push(open.ms)
      s.nautilusCpuS.push(open.nautilusCpuS)
      s.mountCpuS.push(await cpuSeconds(mountPid) - mountCpu)
      s.bytes += counters.bytesServed
      for (const [route, n] of Object.entries(counters.routes)) {
        s.calls[route] = (s.calls[route] ?? 0) + n
        s.requests += n
      }
      // The extension says on stderr each entry it could not read ("transferfs: reading ...").
      s.failures += open.log.split('\n').filter((l) => l.startsWith('transferfs: ')).length
      process.stderr.write(`${side} the extension: ${Math.round(open.ms)} ms, nautilus ${open.nautilusCpuS} CPU-s, ${counters.bytesServed} bytes served, requests ${JSON.stringify(counters.routes)}\n`)
    }
  }
  // The extension's reads alone, without Nautilus: what the mount's answers cost.
  const reads: Array<{ syscalls: number; gio: number; enumeration: number; failed: number; missed: number }> = []
  for (let i = 0; i < RUNS; i++) reads.push(JSON.parse((await sh('/usr/bin/python3', [READS, inbox])).stdout) as (typeof reads)[number])
  const without = median(sides.without.ms), withExt = median(sides.with.ms)
  const runs = (xs: number[]) => xs.map((x) => formatNumber(x)).join(', ')
  const how = `a fresh Nautilus 43 (--new-window inbox/, list view with the Transfer column) in a fresh xvfb-run dbus-run-session, on a fresh listing, until it has asked about every one of the ${TRANSFERS} entries (file-manager-probe.py); median of ${RUNS}, the sides alternating`
  const cpuHow = (what: string) => `${what}, from Nautilus's start to the end point, median of ${RUNS}`
  rows.push(
    { figure: 'Nautilus: inbox/ without the extension', value: without, unit: 'ms', how: `${how}; runs ${runs(sides.without.ms)} ms` },
    { figure: 'Nautilus: inbox/ with the extension', value: withExt, unit: 'ms', baseline: 'Nautilus: inbox/ without the extension', ratio: withExt / without, target: '<= 1.2', how: `${how}, every row's Transfer column filled; runs ${runs(sides.with.ms)} ms` },
    // The load of the shared machine moves both sides of a round alike: each round's own ratio
    // is steadier than the ratio of the medians.
    { figure: 'Nautilus: with the extension / without, round by round', value: median(sides.with.ms.map((ms, i) => ms / sides.without.ms[i]!)), unit: '×', target: '<= 1.2', how: `median of the ${RUNS} rounds' ratios: ${sides.with.ms.map((ms, i) => formatNumber(ms / sides.without.ms[i]!)).join(', ')}` },
    { figure: 'CPU of nautilus without the extension', value: median(sides.without.nautilusCpuS), unit: 'CPU-s', how: cpuHow(`the nautilus process; runs ${runs(sides.without.nautilusCpuS)}`) },
    { figure: 'CPU of nautilus with the extension', value: median(sides.with.nautilusCpuS), unit: 'CPU-s', baseline: 'CPU of nautilus without the extension', ratio: median(sides.with.nautilusCpuS) / median(sides.without.nautilusCpuS), how: cpuHow(`the nautilus process; runs ${runs(sides.with.nautilusCpuS)}`) },
    { figure: 'CPU of the mount without the extension', value: median(sides.without.mountCpuS), unit: 'CPU-s', how: cpuHow(`the mount's daemon; runs ${runs(sides.without.mountCpuS)}`) },
    { figure: 'CPU of the mount with the extension', value: median(sides.with.mountCpuS), unit: 'CPU-s', baseline: 'CPU of the mount without the extension', ratio: median(sides.with.mountCpuS) / median(sides.without.mountCpuS), how: cpuHow(`the mount's daemon; runs ${runs(sides.with.mountCpuS)}`) },
    { figure: 'the extension\'s reads alone, one enumeration of the folder', value: median(reads.map((r) => r.enumeration)), unit: 'ms', how: `file-manager-reads.py: folder_reads.py's enumeration with user.transferfs.shown, each of the ${TRANSFERS} entries taken in turn on a GLib main loop, median of ${RUNS}; ${Math.max(...reads.map((r) => r.missed))} read alone` },
    { figure: 'the same read one entry after another', value: median(reads.map((r) => r.gio)), unit: 'ms', how: `file-manager-reads.py: Gio query_info_async of user.transferfs.shown for each of the ${TRANSFERS} entries, on a GLib main loop, median of ${RUNS}; ${Math.max(...reads.map((r) => r.failed))} failed` },
    { figure: 'the same as system calls', value: median(reads.map((r) => r.syscalls)), unit: 'ms', how: `lstat and one getxattr (user.transferfs.shown) per entry from Python, median of ${RUNS}` },
    { figure: 'with the extension: bytes served', value: sides.with.bytes, unit: 'bytes', target: '0', how: `the service's counters over the ${RUNS} opens with the extension (without: ${sides.without.bytes})` },
    { figure: 'with the extension: requests', value: sides.with.requests, unit: 'requests', baseline: 'without the extension: requests', ratio: sides.with.requests / Math.max(1, sides.without.requests), how: `the service's counters over the ${RUNS} opens with the extension: ${JSON.stringify(sides.with.calls)}` },
    { figure: 'without the extension: requests', value: sides.without.requests, unit: 'requests', how: `the service's counters over the ${RUNS} opens without it: ${JSON.stringify(sides.without.calls)}` },
    { figure: 'with the extension: entries it could not read', value: sides.with.failures, unit: '', target: '0', how: 'its "transferfs: reading ..." lines on stderr' },
  )
  if (COMPARE) {
    const compared = median(sides.compared.ms)
    const pairs = sides.compared.ms.map((ms, i) => ms / sides.without.ms[i]!)
    rows.push(
      { figure: 'Nautilus: inbox/ with the compared extension', value: compared, unit: 'ms', baseline: 'Nautilus: inbox/ without the extension', ratio: compared / without, how: `${how}, with the extension of ${COMPARE_NAME} (BENCH_FM_COMPARE), the third open of each round; runs ${runs(sides.compared.ms)} ms` },
      { figure: 'Nautilus: with the compared extension / without, round by round', value: median(pairs), unit: '×', how: `median of the ${RUNS} rounds' ratios: ${pairs.map((x) => formatNumber(x)).join(', ')}` },
      { figure: 'CPU of nautilus with the compared extension', value: median(sides.compared.nautilusCpuS), unit: 'CPU-s', baseline: 'CPU of nautilus without the extension', ratio: median(sides.compared.nautilusCpuS) / median(sides.without.nautilusCpuS), how: cpuHow(`the nautilus process; runs ${runs(sides.compared.nautilusCpuS)}`) },
      { figure: 'CPU of the mount with the compared extension', value: median(sides.compared.mountCpuS), unit: 'CPU-s', baseline: 'CPU of the mount without the extension', ratio: median(sides.compared.mountCpuS) / median(sides.without.mountCpuS), how: cpuHow(`the mount's daemon; runs ${runs(sides.compared.mountCpuS)}`) },
      { figure: 'with the compared extension: bytes served', value: sides.compared.bytes, unit: 'bytes', target: '0', how: `the service's counters over its ${RUNS} opens` },
    )
  }
})
