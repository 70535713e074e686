// The package tests' user of a clean Debian root, as a person at that machine: their commands,
// their mount of the account and its daemon, and what the tests judge from outside their
// processes: the root's mount table, the daemon's /proc (which files it runs), and their
// config, cache and data folders file by file.
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { lstat, readdir, readFile, readlink, stat } from 'node:fs/promises'
import path from 'node:path'
import { expect } from 'vitest'
import { MOUNT_LOG_FILE } from '../../src/cli/compose.js'
import { STATUS_JSON_FILE } from '../../src/status/status-file.js'
import { explain } from './apt-repository.js'
import type { DebianRoot, RootRunOptions, RootRunResult } from './debian-root.js'

/** Where the package installs its runtime and its FUSE addons. */
const RUNTIME = '/usr/lib/transferfs/node/bin/node'
const ADDON = /^(\/usr\/lib\/transferfs\/prebuilds\/[^/]+\/lib[^/]*\.node)( \(deleted\))?$/

export interface StatusEntry {
  name: string
  state: string
  transferid: string | null
  lastError: string | null
}

export interface PinEntry {
  name: string
  state: string
  bytesCached: number
  bytesTotal: number
}

export interface Status {
  entries: StatusEntry[]
  running: boolean
  pins?: { entries: PinEntry[] }
}

export interface TransferJson {
  id: string
  status?: string
  files?: Array<{ filename: string; filesize: number; md5: string }>
}

export async function waitFor(cond: () => Promise<boolean>, timeoutMs: number, stepMs = 250): Promise<boolean> {
  const end = Date.now() + timeoutMs
  for (;;) {
    if (await cond()) return true
    if (Date.now() > end) return false
    await new Promise((r) => setTimeout(r, stepMs))
  }
}

/** A user of a root (made by useradd, home /home/NAME) whose account is mounted at mountPoint. */
export function rootUser(root: () => DebianRoot, name: string, mountPoint: string) {
  const home = `/home/${name}`
  const asRoot = (command: string[], opts: RootRunOptions = {}): Promise<RootRunResult> => root().run(command, { timeoutMs: 300_000, ...opts })
  const asUser = (command: string[], opts: Omit<RootRunOptions, 'user'> = {}): Promise<RootRunResult> => root().run(command, { timeoutMs: 120_000, ...opts, user: name })
  const transferfs = (...args: string[]): Promise<RootRunResult> => asUser(['transferfs', ...args])
  /** A shell command line as the user ($1.. are args). */
  const sh = (script: string, ...args: string[]): Promise<RootRunResult> => asUser(['sh', '-c', script, 'sh', ...args])
  /** The user's three folders, as the package's defaults place them. */
  const folders = { config: `${home}/.config/transferfs`, cache: `${home}/.cache/transferfs`, data: `${home}/.local/share/transferfs` }
  /** The mount daemon's log and its status file, in the data folder. */
  const mountLogFile = `${folders.data}/${MOUNT_LOG_FILE}`
  const statusFile = `${folders.data}/${STATUS_JSON_FILE}`

  const mountLog = async (): Promise<string> => {
    const text = await readFile(root().host(mountLogFile), 'utf8').catch((e: Error) => `(no ${MOUNT_LOG_FILE}: ${e.message})`)
    return `\n--- ${MOUNT_LOG_FILE} (end) ---\n${text.slice(-5000)}`
  }
  const explainMount = async (what: string, r: RootRunResult): Promise<string> => explain(what, r) + (await mountLog())

  const mounted = async (): Promise<boolean> => (await root().mounts()).some((m) => m.mountPoint === mountPoint && m.fsType === 'fuse.transferfs')
  /** The mount daemon of mountPoint, as this machine numbers it. */
  const daemons = async (): Promise<number[]> => (await root().processes()).filter((p) => p.cmdline.includes(` mount ${mountPoint}`)).map((p) => p.pid)

  const mount = async (): Promise<void> => {
    const r = await sh('mkdir -p "$1" && exec transferfs mount "$1"', mountPoint)
    expect(r.code, await explainMount('transferfs mount', r)).toBe(0)
    expect(await mounted(), await explainMount('the root\'s mount table after transferfs mount', r)).toBe(true)
  }
  const unmount = async (): Promise<void> => {
    const r = await transferfs('unmount', mountPoint)
    expect(r.code, await explainMount('transferfs unmount', r)).toBe(0)
    expect(await mounted()).toBe(false)
    expect(await waitFor(async () => (await daemons()).length === 0, 15_000), `the mount daemon outlived the unmount${await mountLog()}`).toBe(true)
  }

  const json = async <T>(what: string, r: RootRunResult): Promise<T> => {
    expect(r.code, explain(what, r)).toBe(0)
    return JSON.parse(r.stdout) as T
  }
  const status = async (): Promise<Status> => json('transferfs status --json', await transferfs('status', '--json'))
  const info = async (id: string): Promise<TransferJson> => json(`transferfs info ${id}`, await transferfs('info', id, '--files', '--json'))
  /** Every file of the inbox with its transfer, as the service lists them. */
  const inboxFiles = async (): Promise<Array<{ id: string; filename: string; filesize: number }>> =>
    (await json<TransferJson[]>('transferfs inbox --json', await transferfs('inbox', '--json'))).flatMap((t) => (t.files ?? []).map((f) => ({ id: t.id, ...f })))
  /** md5sum of a file of the inbox read through the mount, by the user. */
  const md5Through = async (id: string, filename: string): Promise<string> => {
    const sum = await asUser(['md5sum', `${mountPoint}/by-id/${id}/${filename}`], { timeoutMs: 240_000 })
    expect(sum.code, await explainMount(`md5sum ${filename} through the mount`, sum)).toBe(0)
    return sum.stdout.split(' ')[0]!
  }

  return { home, folders, mountLogFile, statusFile, host: (inside: string) => root().host(inside), asRoot, asUser, transferfs, sh, mountLog, explainMount, mounted, daemons, mount, unmount, json, status, info, inboxFiles, md5Through }
}

export type RootUser = ReturnType<typeof rootUser>

/**
 * Every file, folder and link under the folders (as root sees them from outside): type,
 * mode, owner, size, modification time and, for files, a SHA-256 of the bytes. Paths for
 * which skip is true (relative to the root, like the keys) are left out unread: files a
 * running process replaces may come and go between listing and reading.
 */
export async function snapshot(root: DebianRoot, folders: string[], skip: (rel: string) => boolean = () => false): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  const walk = async (dir: string): Promise<void> => {
    for (const name of (await readdir(dir)).sort()) {
      const file = path.join(dir, name)
      const rel = path.relative(root.dir, file)
      if (skip(rel)) continue
      const st = await lstat(file)
      let what = `${(st.mode & 0o170000).toString(8)} ${(st.mode & 0o7777).toString(8)} ${st.uid}:${st.gid} ${st.size} ${st.mtimeMs}`
      if (st.isFile()) {
        const hash = createHash('sha256')
        // In large reads: the cache folder holds a GiB of chunks.
        for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer)
        what += ` ${hash.digest('hex')}`
      }
      out.set(rel, what)
      if (st.isDirectory()) await walk(file)
    }
  }
  for (const dir of folders) {
    out.set(dir.slice(1), (await stat(root.host(dir)).then((s) => `folder ${(s.mode & 0o7777).toString(8)}`, () => 'missing')))
    if (out.get(dir.slice(1)) !== 'missing') await walk(root.host(dir))
  }
  return out
}

/**
 * What a running mount writes in the data folder by itself: status.json (replaced through a
 * temporary file beside it every few seconds, with the time) and its log. A check that the
 * user's folders were left alone leaves these out, and judges them apart.
 */
export function mountOwnFile(dataFolder: string): (rel: string) => boolean {
  const data = dataFolder.slice(1)
  return (rel) => rel === `${data}/${MOUNT_LOG_FILE}` || rel === `${data}/${STATUS_JSON_FILE}` || rel.startsWith(`${data}/${STATUS_JSON_FILE}.tmp-`)
}

/** A process's pid in the PID namespace it lives in (what the process itself calls process.pid). */
export async function namespacePid(pid: number): Promise<number> {
  const line = /^NSpid:\s+(.*)$/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1]
  return Number(line?.trim().split(/\s+/).at(-1))
}

/** Whether a file a process runs is the one installed at its path now, or one since replaced (unlinked, its inode still held). */
export type ImageState = 'installed' | 'replaced'

/**
 * Which of the package's files a process of the root runs: its runtime (/proc/PID/exe) and
 * the FUSE addon(s) it mapped, each by inode against the file at the same path now. dpkg
 * unpacks every file of a package under a new name and renames it over the old, so after an
 * upgrade a process started before it still maps the old inodes (shown as "(deleted)").
 */
export async function runningImage(root: DebianRoot, pid: number): Promise<{ runtime: ImageState; addons: Record<string, ImageState> }> {
  const inode = async (file: string): Promise<number | null> => (await stat(file).catch(() => null))?.ino ?? null
  const exe = await readlink(`/proc/${pid}/exe`)
  const runtimeIno = await inode(`/proc/${pid}/exe`)
  expect(exe.replace(/ \(deleted\)$/, ''), `the process ${pid} runs ${exe}`).toBe(root.host(RUNTIME))
  const runtime: ImageState = runtimeIno !== null && runtimeIno === (await inode(root.host(RUNTIME))) && !exe.endsWith(' (deleted)') ? 'installed' : 'replaced'
  const addons: Record<string, ImageState> = {}
  for (const line of (await readFile(`/proc/${pid}/maps`, 'utf8')).split('\n')) {
    // address perms offset dev inode path
    const fields = /^\S+ \S+ \S+ \S+ (\d+) +(.*)$/.exec(line)
    if (!fields || !fields[2]!.startsWith(root.dir + '/')) continue
    const mapped = ADDON.exec(fields[2]!.slice(root.dir.length))
    if (!mapped) continue
    const installed = await inode(root.host(mapped[1]!))
    addons[mapped[1]!] = !mapped[2] && installed === Number(fields[1]) ? 'installed' : 'replaced'
  }
  return { runtime, addons }
}
