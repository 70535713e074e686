// Every reader users run, on a cold file, as they run it: `dd bs=1M iflag=direct` (the O_DIRECT
// reader every other one is held against), `cat`, `head -c 256M`, `md5sum` and `cp` to a file
// on the local disk. Each reads a 1 GiB file on a fresh mount with an empty cache, right after
// the kernel's caches were dropped (`echo 3 > /proc/sys/vm/drop_caches`). Not a test: it
// prints figures.
//
//   npm run build && node dist/scripts/bench/readers.js
//   TRANSFERFS_FUSE_LIBRARY=libfuse3 node dist/scripts/bench/readers.js      (one library only)
//
// Each reader runs on two kinds of mount, on libfuse 3 and on libfuse 2:
// - a mount run as root, which applies the default readAheadKb (4096 KiB on libfuse 3, the kernel's
//   128 KiB on libfuse 2);
// - a normal user's mount (the user the test suite makes, scripts/support/normal-user.ts),
//   whose readahead stays at the kernel's 128 KiB, read by that user (nobody else may enter
//   it). Where no normal user can mount, a root mount at readAheadKb 0 stands in, and its
//   rows say so.
// For each read: its time, bytes served and hashed by the service per byte read, range GETs,
// GetRangeHash calls and TLS connections (the service's counters), what the service served
// after the reader exited (until the mount stopped), CPU seconds per GiB of the mount, the
// reader and the service, and the cores they and the rest of the machine kept busy meanwhile
// (on a shared machine the times mean little when the rest was busy). Then the ratios against
// the O_DIRECT reader of the same bytes, mount kind and library in this run, with the targets
// of a reader of the whole file (`head -c` stops while the prefetch is under way: its targets
// are through the link, in read.ts), and the CPU of mount + reader against `curl | md5sum` of
// the same bytes, measured before each library's and mount kind's reads (the floor; `cat`'s
// target is 1.5; the null filesystem's rows use the floor measured last).
// The null filesystem (null-fs.ts) runs the same readers at the same two readaheads: what
// filling the page cache costs any FUSE file system on this machine.
import { readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { DEFAULT_SETTINGS, FUSE_LIBRARIES, readAheadKbOf } from '../../src/config/settings.js'
import { findMount } from '../../src/fuse/mountinfo.js'
import { allowFuseDevice, ensureNormalUser, releaseFolder, removeUserFolders, runAs, userAccount, type NormalUser } from '../support/normal-user.js'
import type { Transfer } from '../../src/api/types.js'
import {
  childrenCpuSeconds, cliEntry, type Counters, cpuSeconds, dropCaches, fileOnMount, GiB, machineBusySeconds, MiB, perGiB, sh, verifiedFetchFloor,
  withBenchWorld, withNullFs, type BenchWorld,
} from './world.js'

const FILE = GiB
const HEAD = 256 * MiB
/** A cold read's connections: one per range stream and one per GetRangeHash call in flight. */
const MAX_CONNECTIONS = 2 * DEFAULT_SETTINGS.maxConcurrentFetches
const DIRECT = 'dd bs=1M iflag=direct'
const DIRECT_HEAD = `dd bs=1M iflag=direct count=${HEAD / MiB}`

interface Reader {
  name: string
  /** A bash script: $1 is the file, $2 a path on the local disk it may write. */
  script: string
  /** The bytes it reads. */
  bytes: number
  /** The O_DIRECT reader of the same bytes it is held against (none: it is one). */
  baseline?: string
}

const READERS: Reader[] = [
  { name: DIRECT, script: 'dd if="$1" of=/dev/null bs=1M iflag=direct 2>/dev/null', bytes: FILE },
  { name: DIRECT_HEAD, script: `dd if="$1" of=/dev/null bs=1M iflag=direct count=${HEAD / MiB} 2>/dev/null`, bytes: HEAD },
  { name: 'cat', script: 'cat "$1" >/dev/null', bytes: FILE, baseline: DIRECT },
  { name: 'head -c 256M', script: `head -c ${HEAD} "$1" >/dev/null`, bytes: HEAD, baseline: DIRECT_HEAD },
  { name: 'md5sum', script: 'md5sum "$1" >/dev/null', bytes: FILE, baseline: DIRECT },
  { name: 'cp to the local disk', script: 'cp "$1" "$2"', bytes: FILE, baseline: DIRECT },
]

/** A mount ready for one cold read. */
interface Mounted {
  /** The mount daemon (or null filesystem) whose CPU is counted. */
  pid: number
  file: string
  /** Where `cp` writes (removed after each read). */
  copy: string
  readaheadKb: number
  /** Runs a bash script as whoever may read the mount; its time and output. */
  run(script: string, args: string[]): Promise<{ ms: number; stdout: string }>
  /** Stops the daemon, leaves no mount behind and empties its cache. */
  stop(): Promise<void>
}

interface MountKind {
  /** How its rows are named. */
  name: string
  mount(library: string): Promise<Mounted>
}

/** The kernel readahead of the mount at dir, as the kernel has it. */
async function readaheadKb(dir: string): Promise<number> {
  const m = await findMount(dir)
  if (!m) throw new Error(`${dir} is not mounted`)
  return Number((await readFile(`/sys/class/bdi/${m.major}:${m.minor}/read_ahead_kb`, 'utf8')).trim())
}

/** The bench's own mount, run as root; readAheadKb unset keeps the default. */
function rootKind(w: BenchWorld, transfer: Transfer, readAheadKb?: number, why = ''): MountKind {
  return {
    name: readAheadKb === undefined ? 'root' : `root, readAheadKb ${readAheadKb}${why}`,
    async mount(library) {
      w.env.TRANSFERFS_FUSE_LIBRARY = library
      if (readAheadKb === undefined) delete w.env.TRANSFERFS_READ_AHEAD_KB
      else w.env.TRANSFERFS_READ_AHEAD_KB = String(readAheadKb)
      const pid = await w.mount()
      return {
        pid,
        file: await fileOnMount(w.mountDir, transfer),
        copy: path.join(w.home, 'copy'),
        readaheadKb: await readaheadKb(w.mountDir),
        run: (script, args) => sh('bash', ['-c', script, 'bash', ...args]),
        async stop() {
          await w.unmount()
          await rm(w.env.TRANSFERFS_CACHE_DIR!, { recursive: true, force: true })
        },
      }
    },
  }
}

/** A normal user's mount, through the command line as that user would start it. */
async function userKind(w: BenchWorld, transfer: Transfer, user: NormalUser): Promise<MountKind> {
  const { home, env } = await userAccount(user, w.service)
  const mountDir = path.join(home, 'mnt')
  const transferfs = async (args: string[], library: string, input?: string) => {
    const r = await runAs(user, process.execPath, [...process.execArgv, cliEntry, ...args], { env: { ...env, TRANSFERFS_FUSE_LIBRARY: library }, input, timeoutMs: 60_000 })
    if (r.code !== 0) throw new Error(`transferfs ${args[0]} as ${user.name}: exit ${r.code}: ${r.stderr}`)
    return r.stdout
  }
  const run = async (script: string, args: string[]) => {
    const t0 = performance.now()
    const r = await runAs(user, 'bash', ['-c', script, 'bash', ...args], { env, timeoutMs: 600_000 })
    if (r.code !== 0) throw new Error(`${script} as ${user.name}: exit ${r.code}: ${r.stderr}`)
    return { ms: performance.now() - t0, stdout: r.stdout }
  }
  let signedIn = false
  return {
    name: 'normal user',
    async mount(library) {
      if (!signedIn) await transferfs(['login', '--email', w.service.user.email, '--password-stdin'], library, w.service.user.password)
      signedIn = true
      // The user's own folder: fusermount mounts only on a folder the user may write.
      await run('mkdir -p "$1"', [mountDir])
      const out = await transferfs(['mount', mountDir], library)
      const pid = Number(/process (\d+)/.exec(out)?.[1])
      if (!(pid > 0)) throw new Error(`transferfs mount as ${user.name} printed no process: ${out}`)
      const inbox = path.join(mountDir, 'inbox')
      const folder = (await run('ls "$1"', [inbox])).stdout.split('\n').find((n) => n.endsWith(`(${transfer.id})`))
      if (!folder) throw new Error(`transfer ${transfer.id} is not in ${inbox}`)
      return {
        pid,
        file: path.join(inbox, folder, transfer.files[0]!.filename!),
        copy: path.join(home, 'copy'),
        readaheadKb: await readaheadKb(mountDir),
        run,
        async stop() {
          try { process.kill(pid, 'SIGTERM') } catch {}
          for (let i = 0; i < 100; i++) {
            try { process.kill(pid, 0) } catch { break }
            await new Promise((r) => setTimeout(r, 100))
          }
          await releaseFolder(user, mountDir)
          await rm(env.TRANSFERFS_CACHE_DIR!, { recursive: true, force: true })
        },
      }
    },
  }
}

/** The normal user, once it may open /dev/fuse and run this build's command line; else why not. */
async function normalUser(): Promise<NormalUser | string> {
  try {
    const user = await ensureNormalUser()
    const device = await allowFuseDevice(user)
    if (device) return device
    const r = await runAs(user, process.execPath, [...process.execArgv, cliEntry, '--version'], { timeoutMs: 60_000 })
    return r.code === 0 ? user : `${user.name} cannot run ${cliEntry}: ${r.stderr.trim()}`
  } catch (e) {
    return (e as Error).message
  }
}

/** One read's figures. */
interface Read {
  ms: number
  bytes: number
  /** CPU seconds: the mount (or null filesystem), the reader's processes, the service. */
  mountCpu: number
  readerCpu: number
  serviceCpu: number
  /** What the rest of the machine used meanwhile (other work, the kernel's writeback); 0 when the clock ticks' rounding makes it negative. */
  othersCpu: number
  /** The service's counters when the reader exited; null for the null filesystem. */
  counters: Counters | null
  /** Bytes the service served after the reader exited, until the mount stopped. */
  servedAfter: number
}

/** The cores mount, reader and service kept busy during a read. */
const coresBusy = (r: Read) => (r.mountCpu + r.readerCpu + r.serviceCpu) / (r.ms / 1000)

await withBenchWorld('readers', {}, async (w) => {
  const { rows, service } = w
  const started = performance.now()
  const libraries = FUSE_LIBRARIES.filter((l) => l !== 'auto' && (!process.env.TRANSFERFS_FUSE_LIBRARY || process.env.TRANSFERFS_FUSE_LIBRARY === l))
  process.stderr.write('seeding a 1 GiB file...\n')
  const [transfer] = await service.seed(1, { fileSize: FILE, subjectPrefix: 'Readers GiB' })

  /**
   * `curl | md5sum` of the file, measured again before each library's and mount kind's reads:
   * this machine's speed moves by a fifth within a run (the service's CPU for the same bytes
   * with it), so each group is held against the floor of the same minutes.
   */
  const measureFloor = async (group: string): Promise<{ cpuS: number; serviceCpuS: number }> => {
    process.stderr.write(`${group}: curl | md5sum of 1 GiB (the verified-fetch floor)...\n`)
    await dropCaches()
    const serviceCpu0 = await cpuSeconds(service.pid)
    const f = await verifiedFetchFloor(service.ca, transfer!.files[0]!.downloadurl, 2)
    return { cpuS: f.cpuS, serviceCpuS: (await cpuSeconds(service.pid) - serviceCpu0) / 2 }
  }
  let floor = { cpuS: NaN, serviceCpuS: NaN }
  const FLOOR = 'curl | md5sum (the floor): CPU'
  /** Groups whose floor row is written (the null filesystem's use the floor measured last). */
  const floorShown = new Set<string>()
  /** The most cores other work kept busy during one read of each group (/proc/stat): how far its times can be trusted. */
  const busiest = new Map<string, number>()

  /** One cold read by `reader` on a fresh mount. */
  const coldRead = async (m: Mounted, reader: Reader, counted: boolean): Promise<Read> => {
    await dropCaches()
    if (counted) await service.control('POST', '/counters/reset')
    const cpu0 = [await cpuSeconds(m.pid), await cpuSeconds(service.pid), await machineBusySeconds()]
    const r = await m.run(`set -e; ${reader.script}; times`, [m.file, m.copy])
    const cpu1 = [await cpuSeconds(m.pid), await cpuSeconds(service.pid), await machineBusySeconds()]
    const counters = counted ? await service.counters() : null
    await rm(m.copy, { force: true })
    const [mountCpu, serviceCpu, busy] = cpu1.map((c, i) => c - cpu0[i]!) as [number, number, number]
    const readerCpu = childrenCpuSeconds(r.stdout)
    return { ms: r.ms, bytes: reader.bytes, mountCpu, readerCpu, serviceCpu, othersCpu: Math.max(0, busy - mountCpu - readerCpu - serviceCpu), counters, servedAfter: 0 }
  }

  /** The rows of one reader in its group's column, each held against the O_DIRECT reader of the same bytes or the floor. */
  const report = (group: string, reader: Reader, r: Read, base: Read | undefined) => {
    if (!floorShown.has(group)) {
      floorShown.add(group)
      rows.push(
        { group, figure: FLOOR, value: perGiB(floor.cpuS, FILE), unit: 'CPU-s/GiB', how: 'curl of the file piped into md5sum, both processes, best of 2, measured before the group\'s reads (the null filesystem\'s: the last)' },
        { group, figure: 'curl | md5sum: CPU of the service', value: perGiB(floor.serviceCpuS, FILE), unit: 'CPU-s/GiB', how: 'the service process\'s CPU per fetch' },
      )
    }
    const c = r.counters
    const b = base?.counters
    // The targets are a whole file's reader's: a reader that stops early leaves a prefetch under way.
    const held = reader.bytes === FILE
    const name = reader.name
    const requests = (x: Counters) => (x.routes.download ?? 0) + (x.routes.rangehash ?? 0)
    rows.push({
      group, figure: `${name}: time`, value: r.ms / 1000, unit: 's',
      ...(base ? { baseline: `${reader.baseline}: time`, ratio: r.ms / base.ms, ...(c && held ? { target: '<= 1.2' } : {}) } : {}),
      how: 'a cold read on a fresh mount, caches dropped',
    })
    busiest.set(group, Math.max(busiest.get(group) ?? 0, r.othersCpu / (r.ms / 1000)))
    // The O_DIRECT reader of the first 256 MiB is only head's baseline: its time and requests.
    const onlyBaseline = !base && !held
    if (c) {
      rows.push({ group, figure: `${name}: range GETs + GetRangeHash calls`, value: requests(c), unit: '',
        ...(b ? { baseline: `${reader.baseline}: range GETs + GetRangeHash calls`, ratio: requests(c) / requests(b), ...(held ? { target: '0.9–1.1' } : {}) } : {}), how: `the service's counters: ${c.routes.download ?? 0} + ${c.routes.rangehash ?? 0}` })
    }
    if (onlyBaseline) return
    if (base && c && name === 'md5sum') {
      // Where the cores are busy with the read, a reader's own work (md5sum's hashing) lengthens it
      // by its CPU over the cores it kept busy: that share of the O_DIRECT read's time (next to
      // nothing for the readers that do not hash).
      rows.push({ group, figure: `${name}: of it, the reader's own CPU`, value: Math.max(0, r.readerCpu - base.readerCpu) / coresBusy(r) / (base.ms / 1000), unit: `× ${reader.baseline}'s time`, how: 'its CPU beyond the O_DIRECT reader\'s over the cores busy' })
    }
    rows.push(
      { group, figure: `${name}: CPU of mount + reader`, value: perGiB(r.mountCpu + r.readerCpu, r.bytes), unit: 'CPU-s/GiB', baseline: FLOOR, ratio: (r.mountCpu + r.readerCpu) / r.bytes / (floor.cpuS / FILE), ...(name === 'cat' ? { target: '<= 1.5' } : {}), how: 'the mount\'s (or null filesystem\'s) CPU and the reader\'s (bash times), per GiB read' },
    )
    if (c) {
      rows.push(
        { group, figure: `${name}: bytes served`, value: c.bytesServed / r.bytes, unit: '× bytes read', ...(held ? { target: '<= 1.02' } : {}), how: `the service's counters when the reader exited (${(r.servedAfter / MiB).toFixed(0)} MiB more until the mount stopped)` },
        { group, figure: `${name}: bytes hashed`, value: c.bytesHashed / r.bytes, unit: '× bytes read', ...(held ? { target: '<= 1.02' } : {}), how: 'the service\'s counters' },
        { group, figure: `${name}: TLS connections`, value: c.fileConnections, unit: '', target: `<= ${MAX_CONNECTIONS}`, how: 'TLS connections the file server accepted' },
      )
    }
  }

  const user = await normalUser()
  try {
    const kinds = [rootKind(w, transfer!), typeof user === 'string' ? rootKind(w, transfer!, 0, ` (no normal user can mount here: ${user})`) : await userKind(w, transfer!, user)]
    for (const library of libraries) {
      for (const kind of kinds) {
        const done = new Map<string, Read>()
        floor = await measureFloor(`${library}, ${kind.name}`)
        let group = ''
        for (const reader of READERS) {
          process.stderr.write(`${library}, ${kind.name}: cold ${reader.name}...\n`)
          const m = await kind.mount(library)
          group = `${library}, ${kind.name}, readahead ${m.readaheadKb} KiB`
          let r: Read
          try {
            r = await coldRead(m, reader, true)
          } finally {
            await m.stop()
          }
          r.servedAfter = (await service.counters()).bytesServed - r.counters!.bytesServed
          done.set(reader.name, r)
          report(group, reader, r, reader.baseline ? done.get(reader.baseline) : undefined)
        }
      }
      // The null filesystem at the same two readaheads: page-cache filling's own cost here.
      for (const kb of [readAheadKbOf(DEFAULT_SETTINGS.readAheadKb, library as Exclude<typeof library, 'auto'>), 0]) {
        await withNullFs(w.home, [['f', 'a.bin', FILE]], async (dir, pid) => {
          const m: Mounted = {
            pid, file: path.join(dir, 'a.bin'), copy: path.join(w.home, 'copy'), readaheadKb: await readaheadKb(dir),
            run: (script, args) => sh('bash', ['-c', script, 'bash', ...args]), stop: async () => {},
          }
          const done = new Map<string, Read>()
          for (const reader of READERS) {
            process.stderr.write(`${library}, null filesystem, readahead ${m.readaheadKb} KiB: ${reader.name}...\n`)
            const r = await coldRead(m, reader, false)
            done.set(reader.name, r)
            report(`${library}, null filesystem, readahead ${m.readaheadKb} KiB`, reader, r, reader.baseline ? done.get(reader.baseline) : undefined)
          }
        }, { readAheadKb: kb, env: { ...process.env, TRANSFERFS_FUSE_LIBRARY: library } })
      }
    }
  } finally {
    await removeUserFolders()
  }
  for (const [group, cores] of busiest) rows.push({ group, figure: 'the rest of the machine, busiest read', value: cores, unit: 'cores', how: 'the most cores other work kept busy during one of the group\'s reads (/proc/stat)' })
  process.stderr.write(`the whole step took ${((performance.now() - started) / 1000).toFixed(0)} s\n`)
})
