// Why a mount failed, and the way out. The FUSE library says only "fuse failed", and the
// mount helper it runs, which knows the reason, says it on the mount's stderr (the log), not
// to this code, so the reason is told from what this machine shows: the helper, /dev/fuse,
// /etc/fuse.conf and AppArmor. Facts are gathered apart from the reasoning, so each cause can be shown
// without a machine that has it.
import { open, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { findMountHelpers, type HelperSearch, type MountHelper } from './mount-helper.js'

export type DevFuse =
  | { state: 'ok' }
  /** kernelHasFuse: the kernel knows the fuse file system (so the device is what is missing, as in a container). */
  | { state: 'missing'; kernelHasFuse: boolean }
  | { state: 'denied'; code: string; mode: number; uid: number; gid: number }

export interface MachineFacts {
  helpers: MountHelper[]
  /** Whether this process can open /dev/fuse read-write. */
  devFuse: DevFuse
  /** /etc/fuse.conf has a `user_allow_other` line that is not commented out. */
  userAllowOther: boolean
  /** AppArmor is on and enforces a profile on fusermount3, which limits where it mounts. */
  apparmorFusermount: boolean
}

export interface FailureContext {
  dir: string
  allowOther: boolean
  root: boolean
  /** What the library threw. */
  error: unknown
  /** checkMountPoint's reason (e.g. the folder is not empty), when it has one. */
  mountPoint?: string
  /** The FUSE library the mount ran on: each runs a helper of its own name. */
  backend?: 'libfuse2' | 'libfuse3'
}

/** Where the fusermount3 profile lets it mount: any home folder, /root, /mnt, /media, /tmp, a user's runtime folder. */
const APPARMOR_ALLOWED = [/^\/home\/[^/]+(\/|$)/, /^\/root(\/|$)/, /^\/mnt(\/|$)/, /^\/media(\/|$)/, /^\/tmp(\/|$)/, /^\/run\/user\/\d+(\/|$)/]

export function explainMountFailure(ctx: FailureContext, facts: MachineFacts): string {
  if (ctx.mountPoint) return ctx.mountPoint
  const said = ctx.error instanceof Error ? ctx.error.message : String(ctx.error)
  // A file-system error (making the folder, the first stat) already says what went wrong.
  if ((ctx.error as NodeJS.ErrnoException | undefined)?.syscall) return generic(said, ctx.dir)
  if (facts.helpers.length === 0) {
    return 'no FUSE mount helper (fusermount3 or fusermount) is installed (looked for in PATH, /bin, /usr/bin and /usr/local/bin): ' +
      'install the fuse3 package (Debian/Ubuntu: `sudo apt install fuse3`; Fedora: `sudo dnf install fuse3`; Arch: `sudo pacman -S fuse3`); ' +
      'on Debian/Ubuntu not the `fuse` package, which replaces fuse3 and removes the desktop packages that need it'
  }
  // libfuse 3 runs only fusermount3, libfuse 2 only fusermount: another name does not help.
  const wanted = ctx.backend === 'libfuse2' ? 'fusermount' : ctx.backend === 'libfuse3' ? 'fusermount3' : undefined
  const usable = facts.helpers.filter((h) => !wanted || h.name === wanted)
  if (usable.length === 0) {
    const only = `only ${facts.helpers[0]?.name} is installed (${facts.helpers.map((h) => h.path).join(', ')})`
    return ctx.backend === 'libfuse3'
      ? `libfuse 3, which this mount runs on, needs the mount helper fusermount3, and ${only}: install the fuse3 package ` +
        '(Debian/Ubuntu: `sudo apt install fuse3`, which keeps a `fusermount` for libfuse 2 programs), or mount with --fuse-library libfuse2'
      : `libfuse 2, which this mount runs on, needs the mount helper fusermount, and ${only}: mount with --fuse-library libfuse3 (or auto), ` +
        'or install fuse 2\'s helper (Fedora: `sudo dnf install fuse`; Arch: `sudo pacman -S fuse2`)'
  }
  const dev = facts.devFuse
  if (dev.state === 'missing') {
    return dev.kernelHasFuse
      ? 'there is no /dev/fuse although the kernel has FUSE: in a container, pass the device in (e.g. `docker run --device /dev/fuse --cap-add SYS_ADMIN`)'
      : 'there is no /dev/fuse: the kernel\'s FUSE module is not loaded; load it with `sudo modprobe fuse` ' +
        '(at every boot: `echo fuse | sudo tee /etc/modules-load.d/fuse.conf`); in a container, pass the device in (`--device /dev/fuse`)'
  }
  // The setuid helper opens /dev/fuse with the user's own rights, so its mode stops a user's mounts as it stops root's.
  if (dev.state === 'denied') {
    return `${ctx.root ? 'this process' : 'this user'} may not open /dev/fuse (${dev.code}; mode ${(dev.mode & 0o7777).toString(8).padStart(4, '0')}, owner ${dev.uid}:${dev.gid}): ` +
      'in a container, allow the device (e.g. `docker run --device /dev/fuse --cap-add SYS_ADMIN`); ' +
      'elsewhere give it its usual mode with `sudo chmod 0666 /dev/fuse`'
  }
  if (!ctx.root && !usable.some((h) => h.setuidRoot)) {
    const paths = [...new Set(usable.map((h) => h.file))].join(' ')
    return `the FUSE mount helper (${paths}) is not setuid root, so it cannot mount for a user who is not root: ` +
      `run \`sudo chmod u+s ${paths}\`, or reinstall fuse3 (Debian/Ubuntu: \`sudo apt install --reinstall fuse3\`)`
  }
  if (ctx.allowOther && !ctx.root && !facts.userAllowOther) {
    return 'allowOther (--allow-other) is refused to users other than root unless /etc/fuse.conf has a line `user_allow_other`, and it has none ' +
      '(or only a commented-out one): add it (`echo user_allow_other | sudo tee -a /etc/fuse.conf`), or mount without --allow-other (allowOther off)'
  }
  if (facts.apparmorFusermount && !APPARMOR_ALLOWED.some((re) => re.test(path.resolve(ctx.dir)))) {
    return 'AppArmor lets fusermount3 mount only under a home folder, /mnt, /media or /tmp, and this folder is elsewhere: ' +
      'mount under your home folder (e.g. `transferfs mount ~/Transfers`), /mnt or /tmp, ' +
      'or have an administrator allow this folder in /etc/apparmor.d/local/fusermount3'
  }
  return generic(said, ctx.dir)
}

// No cause found here: the words of the library and of its mount helper are on the mount's
// stderr (our patch copies what the helper says while it mounts there).
function generic(said: string, dir: string): string {
  return `${said} (no known cause found on this machine; the FUSE library's own messages are on the mount's error output: ` +
    `mount.log in transferfs' data folder for a background mount, or run \`transferfs mount ${dir} --foreground --log-level debug\`)`
}

/** Where gatherFacts reads: `prefix` stands for / (tests point it at a made-up tree). */
export interface FactSources {
  prefix?: string
  helpers?: HelperSearch
}

export async function gatherFacts(sources: FactSources = {}): Promise<MachineFacts> {
  const at = (p: string): string => path.join(sources.prefix ?? '/', p)
  const text = (p: string): Promise<string | undefined> => readFile(at(p), 'utf8').catch(() => undefined)
  const [devFuse, conf, enabled, profiles] = await Promise.all([
    devFuseState(at('/dev/fuse'), () => text('/proc/filesystems')),
    text('/etc/fuse.conf'),
    text('/sys/module/apparmor/parameters/enabled'),
    text('/sys/kernel/security/apparmor/profiles'),
  ])
  // A profile in complain mode only logs (enforce and kill refuse); when the loaded list cannot be read, the installed profile is taken to be loaded.
  const profileLoaded = profiles !== undefined
    ? /^\S*fusermount3\S* \((enforce|kill)\)/m.test(profiles)
    : await stat(at('/etc/apparmor.d/fusermount3')).then(() => true, () => false)
  return {
    helpers: findMountHelpers(sources.helpers),
    devFuse,
    userAllowOther: /^\s*user_allow_other\s*$/m.test(conf ?? ''),
    apparmorFusermount: enabled?.trim() === 'Y' && profileLoaded,
  }
}

async function devFuseState(file: string, filesystems: () => Promise<string | undefined>): Promise<DevFuse> {
  const st = await stat(file).catch(() => undefined)
  if (!st) return { state: 'missing', kernelHasFuse: /\sfuse$/m.test((await filesystems()) ?? '') }
  try {
    await (await open(file, 'r+')).close()
    return { state: 'ok' }
  } catch (err) {
    return { state: 'denied', code: (err as NodeJS.ErrnoException).code ?? 'error', mode: st.mode, uid: st.uid, gid: st.gid }
  }
}

/** The reason to show after a failed mount; never throws (a fact that cannot be read is taken as fine). */
export async function diagnoseMountFailure(ctx: FailureContext, sources?: FactSources): Promise<string> {
  try {
    return explainMountFailure(ctx, await gatherFacts(sources))
  } catch {
    return generic(ctx.error instanceof Error ? ctx.error.message : String(ctx.error), ctx.dir)
  }
}
