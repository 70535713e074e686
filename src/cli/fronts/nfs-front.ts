// The NFS front (macOS): the NFSv3 server of src/nfs/ on a free port of 127.0.0.1, mounted at
// DIR by the system's own NFS client (mount_nfs), so that no FUSE driver is needed. The server
// is the mount's process, as the FUSE daemon is on Linux: it runs mount_nfs once it listens,
// watches `mount` for its mount to go (`transferfs unmount`, `umount`, or an eject in Finder)
// and then stops as a FUSE mount does: sends pause, pins stay for the next start. On SIGINT,
// SIGTERM or SIGHUP (launchd at logout) it unmounts first, while it can still answer the
// writes the client flushes at unmount.
//
// It records its pid in the data folder for `transferfs unmount`, which waits for it to end,
// and which tells a mount whose server is gone (only a forced unmount undoes that one).
import { createHash } from 'node:crypto'
import { mkdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from '../../base/log.js'
import { checkEmptyFolder } from '../../base/mount-point.js'
import { writeFileAtomically } from '../../base/durable-file.js'
import { loadSettings, type Settings } from '../../config/index.js'
import { reportFailure, reportReady } from '../../fuse/background.js'
import { NFS_HOST, NFS_READ_AHEAD_KB, NfsServer } from '../../nfs/server.js'
import type { FileSystemCore } from '../../vfs/core.js'
import type { MountFront } from './mount-front.js'
import { diskutilUnmountCommand, isLoopbackNfs, mountAt, mountNfsCommand, umountCommand } from './macos-commands.js'
import { listMounts, runSystemCommand, type CommandResult } from './system-command.js'

/** ms mount_nfs may take: it mounts in a blink, but asks the server (this process) first. */
const MOUNT_TIMEOUT_MS = 60_000
/** ms an unmount command may take before it is killed (one of a server that does not answer can hang). */
const UNMOUNT_TIMEOUT_MS = 15_000
/** Folder of the mount records, in the data folder: one file per mount point. */
const RECORDS_DIR = 'nfs-mounts'
/** ms `transferfs unmount` waits for the server past its own shutdown grace. */
const END_MARGIN_MS = 5_000

interface MountRecord {
  pid: number
  port: number
  dir: string
}

function recordFile(dataDir: string, dir: string): string {
  return path.join(dataDir, RECORDS_DIR, `${createHash('sha256').update(dir).digest('hex').slice(0, 16)}.json`)
}

async function readRecord(dataDir: string, dir: string): Promise<MountRecord | null> {
  try {
    const r = JSON.parse(await readFile(recordFile(dataDir, dir), 'utf8')) as MountRecord
    return r.dir === dir && Number.isInteger(r.pid) ? r : null
  } catch {
    return null
  }
}

/** True while pid runs (EPERM: it runs, as another user's). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** umount, then diskutil's (Finder's) unmount; the first that succeeds, else the last failure. */
async function unmountGently(dir: string): Promise<CommandResult> {
  const r = await runSystemCommand(umountCommand(dir), UNMOUNT_TIMEOUT_MS)
  if (r.ok) return r
  const d = await runSystemCommand(diskutilUnmountCommand(dir), UNMOUNT_TIMEOUT_MS)
  return d.ok ? d : { ...d, stderr: `${r.stderr}; diskutil: ${d.stderr}` }
}

/** The mount at dir is still the loopback server's (null when `mount` could not be asked). */
async function stillMounted(dir: string): Promise<boolean | null> {
  try {
    const m = mountAt(await listMounts(), dir)
    return m !== undefined && isLoopbackNfs(m)
  } catch {
    return null
  }
}

async function run(core: FileSystemCore, dirArg: string, settings: Settings, opts: { log: Logger; dataDir: string; onReady: (dir: string) => void }): Promise<void> {
  const { log, dataDir } = opts
  const dir = path.resolve(dirArg)
  const fail = async (err: Error, server?: NfsServer): Promise<never> => {
    await server?.close().catch(() => {})
    await core.shutdown?.().catch(() => {})
    await reportFailure(err)
    throw err
  }
  let server: NfsServer
  try {
    server = await NfsServer.start({ core, dataDir, port: 0, deadlines: settings, log,
      // Only the account's owner gets in, through the system's NFS client (a reserved port).
      ownerUid: process.getuid?.() ?? null, reservedPortsOnly: true,
    })
  } catch (err) {
    return fail(new Error(`cannot serve NFS on ${NFS_HOST}: ${(err as Error).message}`, { cause: err }))
  }
  try {
    await mkdir(dir, { recursive: true })
  } catch (err) {
    return fail(new Error(`cannot mount ${dir}: ${(err as Error).message}`, { cause: err }), server)
  }
  const mountCmd = mountNfsCommand(server.port, dir)
  log.info(`serving NFSv3 on ${NFS_HOST}:${server.port}; mounting it at ${dir}`)
  const mounted = await runSystemCommand(mountCmd, MOUNT_TIMEOUT_MS)
  if (!mounted.ok) return fail(new Error(`cannot mount ${dir}: ${mounted.stderr.startsWith('mount_nfs') ? '' : 'mount_nfs: '}${mounted.stderr}`), server)
  const record = recordFile(dataDir, dir)
  try {
    await mkdir(path.dirname(record), { recursive: true, mode: 0o700 })
    await writeFileAtomically(record, JSON.stringify({ pid: process.pid, port: server.port, dir } satisfies MountRecord))
  } catch (err) {
    log.warn(`cannot record the mount in ${record} (${(err as Error).message}): \`transferfs unmount\` will not wait for this server to stop`)
  }
  log.info(`mounted ${dir} (NFS, port ${server.port})`)

  let stopping = false
  const finish = (code: number): void => {
    // Give the log a moment to drain; exit even if something still holds the loop.
    setTimeout(() => process.exit(code), 50).unref()
    process.exitCode = code
  }
  const stop = (why: string, external: boolean): void => {
    if (stopping) {
      if (external) return
      log.warn(`${why} again: exiting now`)
      process.exit(1)
    }
    stopping = true
    clearInterval(watch)
    log.info(`${why}: stopping the NFS server of ${dir}`)
    void (async () => {
      if (!external) {
        const r = await unmountGently(dir)
        if (!r.ok && (await stillMounted(dir)) !== false) {
          // Going anyway (a signal asks for it): a mount left without its server would hang whoever touches it.
          log.warn(`cannot unmount ${dir} (${r.stderr}): forcing it`)
          const f = await runSystemCommand(umountCommand(dir, true), UNMOUNT_TIMEOUT_MS)
          if (!f.ok) log.error(`cannot unmount ${dir}: ${f.stderr}`)
        }
      }
      await server.close()
      let timer: NodeJS.Timeout | undefined
      const grace = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), settings.shutdownGraceMs)))
      const down = core.shutdown?.().then(() => 'done' as const)
      if (down && (await Promise.race([down, grace])) === 'timeout') log.warn('shutdown did not finish in time')
      clearTimeout(timer)
      await rm(record, { force: true })
      log.info(`unmounted ${dir}`)
    })().then(() => finish(0), (err: unknown) => {
      log.error(`stopping: ${(err as Error).message}`)
      finish(1)
    })
  }
  process.on('SIGINT', () => stop('SIGINT', false))
  process.on('SIGTERM', () => stop('SIGTERM', false))
  process.on('SIGHUP', () => stop('SIGHUP', false))
  // `mount` lists what the kernel has mounted without touching the mount: when ours is gone
  // (whoever unmounted it), the server's work is over.
  let asking = false
  const watch = setInterval(() => {
    if (asking || stopping) return
    asking = true
    void stillMounted(dir).then((still) => {
      asking = false
      if (still === false) stop(`${dir} was unmounted`, true)
    })
  }, settings.unmountPollMs)

  await reportReady()
  opts.onReady(dir)
}

async function unmount(dirArg: string): Promise<void> {
  const dir = path.resolve(dirArg)
  const m = mountAt(await listMounts(), dir)
  if (!m) throw new Error(`${dir} is not mounted`)
  if (!isLoopbackNfs(m)) throw new Error(`${dir} is not a transferfs mount (it is ${m.fsType} from ${m.source})`)
  const loaded = await loadSettings()
  const record = await readRecord(loaded.folders.data, dir)
  const serving = record !== null && isAlive(record.pid)
  if (record !== null && !serving) {
    // Its server is gone: nothing to end cleanly, and only a forced unmount undoes the mount.
    const f = await runSystemCommand(umountCommand(dir, true), UNMOUNT_TIMEOUT_MS)
    if (!f.ok) throw new Error(`cannot detach ${dir}: ${f.stderr}`)
    await rm(recordFile(loaded.folders.data, dir), { force: true })
    return
  }
  const r = await unmountGently(dir)
  if (!r.ok) {
    if (/busy/i.test(r.stderr)) throw new Error(`${dir} is busy: close the files, windows and shells open in it, then try again`)
    throw new Error(`cannot unmount ${dir}: ${r.stderr}`)
  }
  // A server of another data folder (record unknown) ends by itself all the same; this one is waited for.
  if (!record) return
  const s = loaded.settings
  const until = Date.now() + s.unmountPollMs + s.shutdownGraceMs + END_MARGIN_MS
  while (isAlive(record.pid)) {
    if (Date.now() > until) throw new Error(`${dir} is unmounted, but its server (process ${record.pid}) has not ended yet`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

export const nfsFront: MountFront = {
  kind: 'nfs',
  async precheck(dirArg, loaded) {
    const dir = path.resolve(dirArg)
    let m = mountAt(await listMounts(), dir)
    const record = m && isLoopbackNfs(m) ? await readRecord(loaded.folders.data, dir) : null
    if (record && !isAlive(record.pid)) {
      // Left by a server that died (a crash, a kill): it would hang whoever touches it; undone, as a FUSE front cleans a stale mount.
      const f = await runSystemCommand(umountCommand(dir, true), UNMOUNT_TIMEOUT_MS)
      if (!f.ok) throw new Error(`cannot mount ${dir}: the mount left there by a server that ended cannot be undone: ${f.stderr}`)
      await rm(recordFile(loaded.folders.data, dir), { force: true })
      m = mountAt(await listMounts(), dir)
    }
    if (m) {
      throw new Error(`cannot mount ${dir}: ${isLoopbackNfs(m) ? `a transferfs mount is there already (\`transferfs unmount ${dir}\` ends it)` : `${m.fsType} from ${m.source} is mounted there`}`)
    }
    await checkEmptyFolder(dir)
  },
  // The client reads ahead of a sequential reader by READs of rsize.
  readAheadKb: () => NFS_READ_AHEAD_KB,
  run,
  unmount,
}
