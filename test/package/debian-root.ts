// A clean Debian 12 (bookworm) or 13 (trixie) to install the .deb into, as a user's machine has it and with
// nothing of this machine's: a minbase root made by mmdebstrap (kept as a tarball in the build
// cache and unpacked afresh for every run), entered with chroot inside a mount and PID
// namespace of its own. Its /proc and the FUSE mounts made in it live in that mount namespace
// only, so none of them reaches this machine's mount table; every process started in it is in
// that PID namespace, which the kernel empties when its first process ends. That first process
// ends when its stdin closes, so even a test process killed outright leaves nothing mounted or
// running behind; close() takes everything down in order and removes the root.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { chmod, copyFile, mkdir, mkdtemp, readFile, readlink, rename, rm, stat, unlink } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { parseMountInfo } from '../../src/fuse/mountinfo.js'
import { removeTree } from '../support/fuse-cleanup.js'
import { collectGroup, type GroupResult } from '../../scripts/support/process-group.js'

export type RootRunResult = GroupResult

export interface RootRunOptions {
  /** Run as this user of the root (its name; uid and gid as the root's passwd has them); default root. */
  user?: string
  /** Added to the clean environment (HOME, PATH, USER, LOGNAME, LANG; for root DEBIAN_FRONTEND too). */
  env?: Record<string, string>
  /** Folder inside the root to start in; default the user's home (/root for root). */
  cwd?: string
  input?: string
  /** ms; then the command and its process group get SIGKILL. Default 60 s. */
  timeoutMs?: number
}

/** Commands on this machine the root needs, each with the Debian package that has it. */
export const HOST_TOOLS: Record<string, string> = {
  mmdebstrap: 'mmdebstrap',
  unshare: 'util-linux',
  nsenter: 'util-linux',
  chroot: 'coreutils',
  mknod: 'coreutils',
  tar: 'tar',
}

const HOST_PATH = `${process.env.PATH ?? ''}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`

/** The tools of HOST_TOOLS this machine lacks, as "tool (package)". */
export function missingHostTools(): string[] {
  return Object.entries(HOST_TOOLS)
    .filter(([tool]) => !HOST_PATH.split(':').some((dir) => dir && existsSync(path.join(dir, tool))))
    .map(([tool, pkg]) => `${tool} (${pkg})`)
}

function exec(cmd: string, args: string[], timeoutMs = 60_000): Promise<RootRunResult> {
  return collectGroup(spawn(cmd, args, { env: { ...process.env, PATH: HOST_PATH }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] }), timeoutMs, undefined, cmd)
}

/** The Debian releases a root is made of, by their codename, with the major version /etc/debian_version starts with. */
export const DEBIAN_RELEASES = { bookworm: 12, trixie: 13 } as const
export type DebianRelease = keyof typeof DEBIAN_RELEASES

/**
 * The cached root tarball of a Debian release with these extra packages, made with
 * mmdebstrap when missing. Keyed by the release and the package list, so another gets a root
 * of its own. The package lists stay in it (apt then only refreshes them, as on an installed
 * system); apt's download cache does not. arch: another architecture than this machine's
 * (Debian's name), whose programs mmdebstrap, and later the root, run through qemu-user
 * (test/package/emulation.ts registers it).
 */
export async function debianTarball(release: DebianRelease, include: string[], arch?: string): Promise<string> {
  const cache = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'transferfs-build')
  const file = path.join(cache, `${release}${arch ? `-${arch}` : ''}-minbase${include.length > 0 ? `-${include.join(',')}` : ''}.tar`)
  if ((await stat(file).catch(() => null))?.isFile()) return file
  await mkdir(cache, { recursive: true })
  // Written under another name and renamed: a run killed halfway leaves no tarball that looks complete.
  const partial = `${file.slice(0, -'.tar'.length)}.partial-${process.pid}.tar`
  try {
    const r = await exec('mmdebstrap', ['--variant=minbase', ...(arch ? [`--architectures=${arch}`] : []), ...(include.length > 0 ? [`--include=${include.join(',')}`] : []),
      '--skip=cleanup/apt/lists', '--format=tar', release, partial], arch ? 1_800_000 : 900_000)
    if (r.code !== 0) throw new Error(`mmdebstrap could not make a Debian ${DEBIAN_RELEASES[release]} root (exit ${r.code}):\n${r.stderr.slice(-4000)}`)
    await rename(partial, file)
  } finally {
    await rm(partial, { force: true })
  }
  return file
}

/** Roots not closed yet, for the exit hook. */
const open = new Set<DebianRoot>()

export class DebianRoot {
  private closed = false

  private constructor(
    /** The root's folder on this machine. */
    readonly dir: string,
    /** unshare, the parent of the namespace's first process. */
    private readonly holder: ChildProcess,
    /** The namespace's first process (PID 1 inside), as this machine numbers it. */
    readonly initPid: number,
  ) {}

  /**
   * Unpacks tarball into a fresh folder, gives it /dev/fuse (a device node of its own: nothing
   * of this machine's /dev is bound in) and this machine's resolv.conf (for apt), and starts
   * its namespaces with /proc mounted.
   */
  static async unpack(tarball: string): Promise<DebianRoot> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'transferfs-debian-'))
    try {
      return await DebianRoot.start(tarball, dir)
    } catch (err) {
      // Nothing was mounted or started yet, or start() took it down again.
      await rm(dir, { recursive: true, force: true })
      throw err
    }
  }

  private static async start(tarball: string, dir: string): Promise<DebianRoot> {
    // Numeric owners: the root's own users (_apt, man) are not this machine's.
    const tar = await exec('tar', ['-xf', tarball, '-C', dir, '--numeric-owner'], 300_000)
    if (tar.code !== 0) throw new Error(`unpacking ${tarball}: ${tar.stderr}`)
    // mkdtemp made it 0700: as the root's /, every user must be able to enter it.
    await chmod(dir, 0o755)
    const mknod = await exec('mknod', ['-m', '0666', path.join(dir, 'dev', 'fuse'), 'c', '10', '229'])
    if (mknod.code !== 0) throw new Error(`mknod /dev/fuse in the root: ${mknod.stderr}`)
    // Unlinked first: were the root's resolv.conf a symlink, copying onto it would write to this machine's file it points at.
    const resolv = path.join(dir, 'etc', 'resolv.conf')
    await unlink(resolv).catch(() => {})
    await copyFile('/etc/resolv.conf', resolv)

    // The namespaces' first process mounts /proc, says so, and then waits for its stdin to
    // close: when it ends, the kernel kills every other process of the PID namespace, and the
    // mount namespace (with /proc and any FUSE mount in it) goes with its last process.
    // --kill-child ends it too should unshare itself be killed.
    const holder = spawn('unshare', ['--mount', '--propagation', 'private', '--pid', '--fork', '--kill-child', '--', '/bin/sh', '-c',
      'mount -t proc proc "$1/proc" && echo ready && exec cat >/dev/null', 'sh', dir], { env: { ...process.env, PATH: HOST_PATH }, stdio: ['pipe', 'pipe', 'pipe'] })
    holder.stdin!.on('error', () => {})
    const stderr: Buffer[] = []
    holder.stderr!.on('data', (b: Buffer) => stderr.push(b))
    const ready = await new Promise<boolean>((resolve) => {
      let text = ''
      holder.stdout!.on('data', (b: Buffer) => {
        text += b.toString()
        if (text.includes('ready\n')) resolve(true)
      })
      holder.on('close', () => resolve(false))
      setTimeout(() => resolve(false), 30_000)
    })
    const initPid = ready ? childOf(holder.pid!) : undefined
    if (!ready || !initPid) {
      // --kill-child takes the namespaces' first process (and its /proc mount) with it.
      holder.kill('SIGKILL')
      await new Promise((resolve) => (holder.exitCode === null && holder.signalCode === null ? holder.once('close', resolve) : resolve(null)))
      throw new Error(`could not start the root's namespaces: ${Buffer.concat(stderr).toString()}`)
    }
    const root = new DebianRoot(dir, holder, initPid)
    open.add(root)
    return root
  }

  /** The argv that runs a command in the root, as root or as opts.user. */
  private argv(command: string[], opts: RootRunOptions): string[] {
    const user = opts.user
    const home = user ? `/home/${user}` : '/root'
    const env: Record<string, string> = {
      HOME: home,
      USER: user ?? 'root',
      LOGNAME: user ?? 'root',
      // Debian's own defaults (/etc/profile, /etc/login.defs) for a user and for root.
      PATH: user ? '/usr/local/bin:/usr/bin:/bin' : '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      LANG: 'C.UTF-8',
      ...(user ? {} : { DEBIAN_FRONTEND: 'noninteractive' }),
      ...opts.env,
    }
    return [
      '--target', String(this.initPid), '--mount', '--pid', '--',
      'chroot', ...(user ? [`--userspec=${user}:${user}`] : []), this.dir,
      '/usr/bin/env', '-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
      '/bin/sh', '-c', 'cd "$1" && shift && exec "$@"', 'sh', opts.cwd ?? home, ...command,
    ]
  }

  /** Runs command (argv, found on the root's PATH) in the root to completion; never throws on a failing exit. */
  run(command: string[], opts: RootRunOptions = {}): Promise<RootRunResult> {
    this.assertOpen()
    const child = spawn('nsenter', this.argv(command, opts), { env: { PATH: HOST_PATH }, detached: true, stdio: ['pipe', 'pipe', 'pipe'] })
    return collectGroup(child, opts.timeoutMs ?? 60_000, opts.input)
  }

  /** Starts command in the root and leaves it running (close() ends it). */
  start(command: string[], opts: RootRunOptions = {}): ChildProcess {
    this.assertOpen()
    const child = spawn('nsenter', this.argv(command, opts), { env: { PATH: HOST_PATH }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    child.on('error', () => {})
    return child
  }

  /** A path inside the root as this machine reaches it. */
  host(inside: string): string {
    return path.join(this.dir, inside)
  }

  /** The mounts of the root's namespace at or below the root, deepest first, with paths inside the root. */
  async mounts(): Promise<Array<{ mountPoint: string; fsType: string }>> {
    const text = await readFile(`/proc/${this.initPid}/mountinfo`, 'utf8').catch(() => '')
    return parseMountInfo(text)
      .filter((m) => m.mountPoint === this.dir || m.mountPoint.startsWith(this.dir + '/'))
      .map((m) => ({ mountPoint: m.mountPoint.slice(this.dir.length) || '/', fsType: m.fsType }))
      .sort((a, b) => b.mountPoint.length - a.mountPoint.length)
  }

  /** Pids (as this machine numbers them) of the processes in the root's PID namespace but its first. */
  async processes(): Promise<Array<{ pid: number; cmdline: string }>> {
    const ns = await readlink(`/proc/${this.initPid}/ns/pid`).catch(() => null)
    if (!ns) return []
    const out: Array<{ pid: number; cmdline: string }> = []
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name) || Number(name) === this.initPid) continue
      if ((await readlink(`/proc/${name}/ns/pid`).catch(() => null)) !== ns) continue
      const cmdline = (await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '')).split('\0').join(' ').trim()
      out.push({ pid: Number(name), cmdline })
    }
    return out
  }

  /**
   * Takes the root down, whatever state a test left it in: FUSE (and any other) mounts are
   * detached, every process started in it is killed, /proc is unmounted, the namespaces end,
   * and only then is the folder removed. Safe to call twice.
   */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    const inNs = (args: string[]): Promise<RootRunResult> => exec('nsenter', ['--target', String(this.initPid), '--mount', '--', ...args], 30_000)
    const alive = (): boolean => this.holder.exitCode === null && this.holder.signalCode === null
    if (alive()) {
      // FUSE mounts first (fusermount3 -uz, where this machine has it, detaches even a dead or
      // busy one), then anything else but /proc; umount -l is the last resort.
      for (const m of await this.mounts()) {
        if (m.mountPoint === '/proc') continue
        if (m.fsType.startsWith('fuse')) await inNs(['fusermount3', '-uz', this.host(m.mountPoint)])
        if ((await this.mounts()).some((x) => x.mountPoint === m.mountPoint)) await inNs(['umount', '-l', this.host(m.mountPoint)])
      }
      for (let round = 0; round < 50; round++) {
        const procs = await this.processes()
        if (procs.length === 0) break
        for (const p of procs) {
          try {
            process.kill(p.pid, 'SIGKILL')
          } catch {}
        }
        await new Promise((r) => setTimeout(r, 100))
      }
      if ((await inNs(['umount', this.host('/proc')])).code !== 0) await inNs(['umount', '-l', this.host('/proc')])
      // Its stdin closed, the first process ends, and with it both namespaces.
      this.holder.stdin?.end()
      const ended = await new Promise<boolean>((resolve) => {
        if (!alive()) return resolve(true)
        this.holder.once('close', () => resolve(true))
        setTimeout(() => resolve(false), 10_000)
      })
      if (!ended) {
        for (const pid of [this.initPid, this.holder.pid!]) {
          try {
            process.kill(pid, 'SIGKILL')
          } catch {}
        }
      }
    }
    // Anything still running with its root in the folder, or mounted in it as this machine sees
    // it, would outlive the run: there should be nothing, and if there is, it is ended and said.
    const problems: string[] = []
    for (const pid of processesRootedIn(this.dir)) {
      problems.push(`process ${pid} still ran in the root`)
      try {
        process.kill(pid, 'SIGKILL')
      } catch {}
    }
    const hostMounts = parseMountInfo(await readFile('/proc/self/mountinfo', 'utf8'))
      .map((m) => m.mountPoint)
      .filter((m) => m === this.dir || m.startsWith(this.dir + '/'))
      .sort((a, b) => b.length - a.length)
    for (const m of hostMounts) {
      problems.push(`${m} was mounted on this machine`)
      await exec('umount', ['-l', m])
    }
    open.delete(this)
    // Never into a mount: one that would not go leaves the folder, and says so.
    await removeTree(this.dir)
    if (problems.length > 0) throw new Error(`the Debian root left things behind (now cleaned): ${problems.join('; ')}`)
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the Debian root is closed')
  }

  /** For the exit hook: synchronous, no waiting. */
  killNow(): void {
    for (const pid of [this.initPid, this.holder.pid!]) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {}
    }
    for (const pid of processesRootedIn(this.dir)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {}
    }
    try {
      rmSync(this.dir, { recursive: true, force: true })
    } catch {}
  }
}

/** The pid of a child of parent (unshare's only child: the namespaces' first process). */
function childOf(parent: number): number | undefined {
  try {
    const children = readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)
    if (children.length > 0) return Number(children[0])
  } catch {}
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent) return Number(name)
    } catch {}
  }
  return undefined
}

/** Processes of this machine whose root folder is dir or below it. */
function processesRootedIn(dir: string): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const root = readlinkSync(`/proc/${name}/root`)
      if (root === dir || root.startsWith(dir + '/')) out.push(Number(name))
    } catch {}
  }
  return out
}

// The last resort when the test process ends without its afterAll: the namespaces' first
// process is killed (which kills every process in the root and frees its mounts), then the
// folder goes. Closing stdin would do the same, but only once this process is gone.
process.once('exit', () => {
  for (const root of open) root.killNow()
})
