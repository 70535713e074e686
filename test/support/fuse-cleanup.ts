// Getting rid of a FUSE mount whatever its daemon does, within a deadline. A daemon that
// stopped answering (or one that lives in this very process, whose event loop is waiting on
// the mount) makes every call into the mount wait, fusermount's own stat included; only the
// kernel's fusectl `abort` ends those calls. So: the helper's unmount with a deadline, then
// the connection aborted (the minor of the mount's device, from mountinfo, is its fusectl id),
// then a lazy unmount, which no longer waits on anything. And no folder is removed while
// something is mounted in it: `rm -r` would walk into the mount.
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { mountHelperCommand, unmountWithHelper } from '../../src/fuse/mount-helper.js'
import { isFuseType, parseMountInfo, type MountEntry } from '../../src/fuse/mountinfo.js'

const CONNECTIONS = '/sys/fs/fuse/connections'
/** ms: for each step (unmount, abort, lazy unmount); a step that takes longer is stuck. */
export const STEP_DEADLINE_MS = 5000

const under = (dir: string, mountPoint: string): boolean => mountPoint === dir || mountPoint.startsWith(dir.endsWith('/') ? dir : `${dir}/`)

/** The mounts at dir or inside it, innermost first (the order to take them down in). */
export async function mountsUnder(dir: string): Promise<MountEntry[]> {
  return inner(parseMountInfo(await readFile('/proc/self/mountinfo', 'utf8')), path.resolve(dir))
}

export function mountsUnderSync(dir: string): MountEntry[] {
  return inner(parseMountInfo(readFileSync('/proc/self/mountinfo', 'utf8')), path.resolve(dir))
}

function inner(entries: MountEntry[], dir: string): MountEntry[] {
  return entries.filter((e) => under(dir, e.mountPoint)).reverse()
}

/** Runs a program with a deadline (killed then); resolves with whether it exited 0 and its stderr. */
function bounded(cmd: string, args: string[], timeoutMs = STEP_DEADLINE_MS): Promise<{ ok: boolean; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: timeoutMs, killSignal: 'SIGKILL' }, (err, _out, stderr) =>
      resolve({ ok: !err, stderr: err ? String(stderr || err.message).trim() : '' }))
  })
}

/** fusectl is where the abort files are; most systems mount it at boot, a container may not. */
async function connectionsDir(minor: number): Promise<string | undefined> {
  const dir = path.join(CONNECTIONS, String(minor))
  if (!existsSync(dir)) await bounded('mount', ['-t', 'fusectl', 'fusectl', CONNECTIONS])
  return existsSync(dir) ? dir : undefined
}

/** Ends every call waiting on the FUSE connection of entry: they fail with ENOTCONN at once. */
export async function abortConnection(entry: MountEntry): Promise<boolean> {
  if (!isFuseType(entry.fsType)) return false
  const dir = await connectionsDir(entry.minor)
  if (!dir) return false
  return writeFile(path.join(dir, 'abort'), '1').then(() => true, () => false)
}

const stillThere = async (entry: MountEntry): Promise<boolean> =>
  (await mountsUnder(entry.mountPoint)).some((e) => e.mountPoint === entry.mountPoint && e.minor === entry.minor && e.major === entry.major)

/**
 * Takes down every mount at dir or inside it, in bounded time: the helper's unmount, then
 * (still there) its connection aborted and a lazy unmount. Returns what could not be taken
 * down, with why (empty: nothing is mounted there any more).
 */
export async function forceUnmountUnder(dir: string): Promise<string[]> {
  const left: string[] = []
  for (const entry of await mountsUnder(dir)) {
    if (isFuseType(entry.fsType)) {
      await unmountWithHelper(entry.mountPoint, { lazy: false, timeoutMs: STEP_DEADLINE_MS })
      if (!(await stillThere(entry))) continue
      await abortConnection(entry)
    }
    const lazy = await unmountWithHelper(entry.mountPoint, { timeoutMs: STEP_DEADLINE_MS })
    if (!lazy.ok && (await stillThere(entry))) await bounded('umount', ['-l', entry.mountPoint])
    if (await stillThere(entry)) left.push(`${entry.mountPoint} (${entry.fsType}) is still mounted: ${lazy.stderr}`)
  }
  return left
}

/**
 * `rm -r dir`, never into a mount: whatever is mounted in it is taken down first, and when
 * something cannot be, the folder is left and the error says what is mounted there.
 */
export async function removeTree(dir: string): Promise<void> {
  const left = await forceUnmountUnder(dir)
  if (left.length > 0) throw new Error(`not removing ${dir}: ${left.join('; ')}`)
  await rm(dir, { recursive: true, force: true })
}

/**
 * At process exit, where nothing can wait: every FUSE mount at or under dir aborted, then
 * lazily unmounted, each step bounded, neither one a call into the mount.
 */
export function forceUnmountUnderSync(dir: string): void {
  for (const entry of mountsUnderSync(dir)) {
    if (!isFuseType(entry.fsType)) continue
    try {
      writeFileSync(path.join(CONNECTIONS, String(entry.minor), 'abort'), '1')
    } catch {}
    try {
      execFileSync(mountHelperCommand(), ['-uz', entry.mountPoint], { stdio: 'ignore', timeout: STEP_DEADLINE_MS, killSignal: 'SIGKILL' })
    } catch {}
  }
}
