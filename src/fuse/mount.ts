// Mounting and unmounting one FileSystemCore with fuse-native, with its options and
// traps handled (docs/design.md, FUSE): the addon of the chosen FUSE library loaded at the
// first mount, raw big_writes on libfuse 2, a stale mount cleaned first,
// fusermount -uz after a failed mount, readiness checked with an async stat (a sync call
// into our own mount deadlocks), an external unmount noticed through /proc/self/mountinfo.
import type Fuse from 'fuse-native'
import { stat, writeFile } from 'node:fs/promises'
import { checkEmptyFolder } from '../base/mount-point.js'
import { loadFuse, type FuseBackend } from './addon.js'
import path from 'node:path'
import { readAheadKbOf, type Settings } from '../config/settings.js'
import type { FileSystemCore } from '../vfs/core.js'
import { FuseAdapter } from './adapter.js'
import { ReadWindows } from './read-windows.js'
import { silentLogger, type Logger } from '../base/log.js'
import { diagnoseMountFailure } from './mount-failure.js'
import { unmountWithHelper } from './mount-helper.js'
import { findMount, isFuseType, mountSourceName, type MountEntry } from './mountinfo.js'

type FuseOps = Fuse.FuseOps
type FuseOptions = Fuse.FuseOptions

export const FS_NAME = 'transferfs'
/**
 * s: how long the kernel trusts attributes and names. Long, because `ls -l` costs one
 * getattr per entry (10k entries: 2.5 s at 1 s, 50 ms on repeat at 30 s). A file whose
 * size changes while it is cached by the kernel shows the old size until then.
 */
export const KERNEL_ATTR_TIMEOUT_S = 30
export const KERNEL_ENTRY_TIMEOUT_S = 30
/** ms: a stat that takes longer on a mount found at our folder means a hung (not dead) daemon. */
const STALE_PROBE_MS = 3000

export type MountSettings = Pick<
  Settings,
  'allowOther' | 'readTimeoutMs' | 'metadataTimeoutMs' | 'writeTimeoutMs' | 'readAheadKb' | 'maxBackground' | 'shutdownGraceMs' | 'unmountPollMs' | 'fuseLibrary'
>

export interface MountHandle {
  readonly dir: string
  readonly adapter: FuseAdapter
  /** What the mount lends libfuse's threads to answer reads from (read-windows.ts). */
  readonly windows: ReadWindows
  /** Settles when the mount is gone: 'unmounted' by unmount(), 'external' when someone else unmounted it. */
  readonly ended: Promise<'unmounted' | 'external'>
  /** Stop taking opens, wait (bounded) for open files and core.shutdown(), unmount. Idempotent. */
  unmount(): Promise<void>
}

/** fuse-native with our raw options and xattr handlers that see the caller's buffer size. */
function tunedFuse(Base: typeof Fuse, backend: FuseBackend): typeof Fuse {
  return class TunedFuse extends Base {
    // Private API of fuse-native 2.2.6 (pinned): the only way to pass options it does not know.
    // Without big_writes libfuse 2 has the kernel send 4 KiB writes (about 10x slower);
    // libfuse 3 always takes large writes, and refuses the option.
    override _fuseOptions(): string {
      const base = super._fuseOptions()
      if (backend !== 'libfuse2') return base
      return base ? `${base},big_writes` : '-obig_writes'
    }

    // fuse-native's own handlers copy the value without checking the buffer's size
    // (libfuse then replies with bytes past its buffer); ours answer ERANGE instead.
    override _op_getxattr(signal: (code: number, ...r: unknown[]) => void, p: string, name: string, valueBuf: Buffer): void {
      this.ops.getxattr!(p, name, valueBuf, (code: number) => signal(code, valueBuf.buffer))
    }

    override _op_listxattr(signal: (code: number, ...r: unknown[]) => void, p: string, listBuf: Buffer): void {
      this.ops.listxattr!(p, listBuf, (code: number) => signal(code, listBuf.buffer))
    }
  }
}

export async function fusermountUnmount(dir: string): Promise<boolean> {
  return (await unmountWithHelper(dir)).ok
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined
  const t = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms)
  })
  return Promise.race([p, t]).finally(() => clearTimeout(timer))
}

/** A FUSE mount left by a dead daemon answers ENOTCONN: detach it so the folder can be mounted again. */
export async function cleanStaleMount(dir: string, log: Logger = silentLogger): Promise<void> {
  const m = await findMount(dir)
  if (!m || !isFuseType(m.fsType)) return
  const probe = await withTimeout(
    stat(dir).then(
      () => 'alive' as const,
      (err: NodeJS.ErrnoException) => err.code ?? 'error',
    ),
    STALE_PROBE_MS,
  )
  if (probe === 'ENOTCONN' || probe === 'ECONNABORTED' || probe === 'ENXIO') {
    log.info(`${dir}: cleaning a stale mount (${probe})`)
    await fusermountUnmount(dir)
  } else if (probe === 'timeout') {
    log.warn(`${dir}: a mount there does not answer; run \`fusermount3 -uz ${dir}\` (or fusermount -uz)`)
  }
}

/** A folder with a mount on it already is left to cleanStaleMount; any other must be empty (checkEmptyFolder). */
export async function checkMountPoint(dir: string): Promise<void> {
  if (await findMount(dir)) return
  await checkEmptyFolder(dir)
}

function fuseOptions(adapter: FuseAdapter, settings: MountSettings, dataDir?: string): FuseOptions {
  return {
    autoUnmount: true, // the mount goes with the process, even after SIGKILL (a user's on fuse3 < 3.15: at the next mount; docs/design.md)
    force: true, // fuse-native cleans an ENOTCONN mountpoint too
    mkdir: true,
    fsname: mountSourceName(FS_NAME, dataDir),
    subtype: FS_NAME,
    attrTimeout: KERNEL_ATTR_TIMEOUT_S,
    entryTimeout: KERNEL_ENTRY_TIMEOUT_S,
    autoCache: true, // page cache kept across opens while mtime and size are unchanged
    allowOther: settings.allowOther || undefined,
    // The kernel checks every access against the modes and owners the mount reports, as on a
    // local disk: with allowOther, others may read what is readable and write nothing of the
    // account's; the owner's own chmod a-w is obeyed (docs/behaviour.md, "Permissions").
    defaultPermissions: true,
    timeout: adapter.fuseTimeouts(),
    // In the INIT reply, so a normal user gets them too (the patch adds these two options).
    maxBackground: settings.maxBackground || undefined,
    congestionThreshold: settings.maxBackground > 0 ? Math.max(1, Math.floor((settings.maxBackground * 3) / 4)) : undefined,
  }
}

/**
 * The kernel readahead (KiB) a mount with these settings sets, once the FUSE library it mounts
 * with is known: the addon is loaded here (once per process, addon.ts), so the mount that
 * follows runs on the same library. The read path is tuned for it before the mount starts.
 */
export function mountReadAheadKb(settings: Pick<MountSettings, 'readAheadKb' | 'fuseLibrary'>): number {
  return readAheadKbOf(settings.readAheadKb, loadFuse(settings.fuseLibrary).backend)
}

/**
 * More readahead keeps more reads in flight, hiding latency. The kernel takes it only from a
 * write under /sys (root); the INIT reply can only lower it. Best effort, said once when it fails.
 */
async function raiseReadahead(m: MountEntry, settings: MountSettings, log: Logger): Promise<void> {
  const kb = mountReadAheadKb(settings)
  if (kb <= 0) return
  const file = `/sys/class/bdi/${m.major}:${m.minor}/read_ahead_kb`
  try {
    await writeFile(file, String(kb))
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'EACCES' ? 'it takes root' : (err as Error).message
    log.info(`readahead stays at the kernel's default (readAheadKb ${kb} not applied: ${why}); set readAheadKb to 0 to silence this`)
  }
}

/**
 * Mounts core at dir and resolves once the mount answers. The caller owns the handle:
 * unmount() is the clean way out; `ended` tells of an unmount done by someone else.
 */
/** `dataDir`: the data folder the mount serves from, named in its source (mountinfo.ts mountSourceName) for the commands to find. */
export async function mountFileSystem(core: FileSystemCore, dir: string, settings: MountSettings, log: Logger = silentLogger, dataDir?: string): Promise<MountHandle> {
  dir = path.resolve(dir)
  let addon
  try {
    addon = loadFuse(settings.fuseLibrary)
  } catch (err) {
    throw new Error(`cannot mount ${dir}: ${(err as Error).message}`, { cause: err })
  }
  await cleanStaleMount(dir, log)
  await checkMountPoint(dir)
  const before = await findMount(dir)
  const adapter = new FuseAdapter(core, settings, log)
  const TunedFuse = tunedFuse(addon.Fuse, addon.backend)
  const fuse = new TunedFuse(dir, adapter.ops as FuseOps, fuseOptions(adapter, settings, dataDir))

  try {
    await new Promise<void>((resolve, reject) => fuse.mount((err) => (err ? reject(err) : resolve())))
    // The mount callback fires before the kernel has the INIT reply: wait for a real answer.
    await stat(dir)
  } catch (err) {
    // A failed mount can leave a dead kernel mount behind; never touch one that was there before.
    const after = await findMount(dir).catch(() => undefined)
    if (after && isFuseType(after.fsType) && (!before || after.minor !== before.minor)) await fusermountUnmount(dir)
    // The library says only "fuse failed": tell why from what the machine shows, with the way out.
    const prefix = `cannot mount ${dir}: `
    const mountPoint = await checkMountPoint(dir).then(
      () => undefined,
      (e: Error) => (e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message),
    )
    const reason = await diagnoseMountFailure({ dir, allowOther: settings.allowOther, root: process.getuid?.() === 0, error: err, mountPoint, backend: addon.backend })
    throw new Error(prefix + reason, { cause: err })
  }
  const entry = await findMount(dir)
  if (!entry || entry.fsType !== `fuse.${FS_NAME}`) {
    await fusermountUnmount(dir)
    throw new Error(`cannot mount ${dir}: the mount did not appear`)
  }
  await raiseReadahead(entry, settings, log)
  const windows = new ReadWindows({
    lend: (fh, start, bytes) => fuse.lendWindow(fh, start, bytes),
    withdraw: (fh, start) => fuse.withdrawWindow(fh, start),
    reads: () => fuse.windowReads(),
  })
  adapter.useWindows(windows)
  log.info(`mounted ${dir} (${addon.backend})`)

  let endedBy: ((how: 'unmounted' | 'external') => void) | undefined
  const ended = new Promise<'unmounted' | 'external'>((resolve) => (endedBy = resolve))
  let external = false
  let stopping = false
  const poll = setInterval(() => {
    findMount(dir).then(
      (m) => {
        if (stopping || (m && m.minor === entry.minor)) return
        external = true
        clearInterval(poll)
        log.warn(`${dir} was unmounted by someone else`)
        endedBy?.('external')
      },
      () => {},
    )
  }, settings.unmountPollMs)
  poll.unref()

  let unmounting: Promise<void> | undefined
  const unmount = (): Promise<void> =>
    (unmounting ??= (async () => {
      adapter.stopAccepting()
      if (!(await adapter.whenIdle(settings.shutdownGraceMs))) log.warn(`${dir}: unmounting with ${adapter.openHandles} file(s) still open`)
      if (core.shutdown && (await withTimeout(core.shutdown().catch((err: unknown) => log.error(`shutdown: ${(err as Error).message}`)), settings.shutdownGraceMs)) === 'timeout') {
        log.warn('shutdown did not finish in time')
      }
      stopping = true
      clearInterval(poll)
      if (!external) {
        const err = await new Promise<Error | null>((resolve) => fuse.unmount(resolve))
        if (err && (await findMount(dir))?.minor === entry.minor) {
          if (!(await fusermountUnmount(dir))) throw new Error(`cannot unmount ${dir}: ${err.message}`)
        }
      }
      // libfuse's threads are gone: what the windows still hold goes back.
      windows.closeAll()
      log.info(`unmounted ${dir} (${windows.reads} reads answered from read windows)`)
      endedBy?.('unmounted')
    })())
  return { dir, adapter, windows, ended, unmount }
}
