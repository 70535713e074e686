// The .deb as a Debian 12 desktop user gets it. Built from a clean copy of the checkout by
// packaging/build-deb.mjs, it is installed with apt into a clean Debian 12 root (no Node, npm,
// compiler or git; apt fetches the dependencies from Debian's archive), where a normal user
// signs in to the local Transfer Service (run from the package's own files), mounts, reads a
// file byte for byte, sends one through outbox/ and unmounts; the manual renders and the systemd
// user unit passes `systemd-analyze verify`. Removing and purging the package leaves the
// user's config, cache and data folders byte for byte as they were. An older build of the same
// code, left with a send it could not finish, is upgraded in place and the send completes,
// once. lintian finds no error in the package. Everything is judged from outside the user's
// processes: apt's and dpkg's word, the root's mount table, the service's own records and MD5s.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { chmod, copyFile, lstat, mkdir, mkdtemp, readdir, readFile, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Agent, request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ServiceAnnouncement } from '../../src/api/types.js'
import { withCleanBuild } from '../support/clean-build.js'
import { removeTree } from '../support/fuse-cleanup.js'
import { lastCommitEpoch } from '../support/clean-copy.js'
import { bookwormTarball, DebianRoot, missingHostTools, type RootRunOptions, type RootRunResult } from './debian-root.js'

/** What the root gets on top of minbase: `man` (which `systemd-analyze verify` runs too, for Documentation=man:) and systemd-analyze. */
const INCLUDE = ['man-db', 'systemd']
const USER = 'ada'
const HOME = `/home/${USER}`
const MOUNT = `${HOME}/Transfers`
/** Inside the root: the built packages, readable by apt's own user. */
const DEBS = '/tmp/debs'
/** Inside the root: the current .deb unpacked with dpkg-deb, which the local service runs from, untouched by apt. */
const SERVICE_TREE = '/opt/transferfs-service'
/** The user's three folders, which removing or purging the package must leave as they are. */
const USER_FOLDERS = [`${HOME}/.config/transferfs`, `${HOME}/.cache/transferfs`, `${HOME}/.local/share/transferfs`]
/** What a clean Debian has none of, and the package must not bring: it carries its own Node. */
const TOOLCHAIN = ['node', 'nodejs', 'npm', 'npx', 'cc', 'gcc', 'c++', 'g++', 'make', 'git']

function skipReason(): string | null {
  if (process.platform !== 'linux') return `runs on Linux only (this is ${process.platform})`
  if (process.getuid?.() !== 0) return `needs root to unpack a Debian root, chroot into it and make its /dev/fuse (running as uid ${process.getuid?.()})`
  return null
}
const SKIP = skipReason()
if (SKIP) console.warn(`test/package/deb: skipped: ${SKIP}`)

interface HostRun {
  code: number
  stdout: string
  stderr: string
}

/** A program on this machine, to completion; never throws on a failing exit. */
function host(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {}): Promise<HostRun> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, timeout: opts.timeoutMs ?? 60_000, maxBuffer: 256 << 20, encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout: String(stdout), stderr: String(stderr || (err && typeof err.code !== 'number' ? err.message : '')) }))
  })
}

function explain(what: string, r: { code: number; stdout: string; stderr: string }): string {
  return `${what}: exit ${r.code}\nstdout: ${r.stdout.slice(-4000)}\nstderr: ${r.stderr.slice(-4000)}`
}

async function waitFor(cond: () => Promise<boolean>, timeoutMs: number, stepMs = 250): Promise<boolean> {
  const end = Date.now() + timeoutMs
  for (;;) {
    if (await cond()) return true
    if (Date.now() > end) return false
    await new Promise((r) => setTimeout(r, stepMs))
  }
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`
const md5 = (data: Buffer): string => createHash('md5').update(data).digest('hex')

interface Built {
  file: string
  version: string
}

interface MailEntry {
  kind: string
  to: string
  transferid: string
}

interface StatusEntry {
  name: string
  state: string
  transferid: string | null
  lastError: string | null
}

interface TransferJson {
  id: string
  status?: string
  files?: Array<{ filename: string; filesize: number; md5: string }>
}

describe.skipIf(SKIP !== null)(`the .deb on a clean Debian 12${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let work = ''
  let root: DebianRoot | undefined
  let current: Built
  let older: Built
  let lintian: HostRun
  let service: { announcement: ServiceAnnouncement; dispatcher: Agent; log: () => string } | undefined

  const asRoot = (command: string[], opts: RootRunOptions = {}): Promise<RootRunResult> => root!.run(command, { timeoutMs: 300_000, ...opts })
  const asUser = (command: string[], opts: Omit<RootRunOptions, 'user'> = {}): Promise<RootRunResult> => root!.run(command, { timeoutMs: 120_000, ...opts, user: USER })
  const transferfs = (...args: string[]): Promise<RootRunResult> => asUser(['transferfs', ...args])
  /** A shell command line as the user ($1.. are args). */
  const sh = (script: string, ...args: string[]): Promise<RootRunResult> => asUser(['sh', '-c', script, 'sh', ...args])

  const mountLog = async (): Promise<string> => {
    const text = await readFile(root!.host(`${HOME}/.local/share/transferfs/mount.log`), 'utf8').catch((e: Error) => `(no mount.log: ${e.message})`)
    return `\n--- mount.log (end) ---\n${text.slice(-5000)}`
  }
  const explainMount = async (what: string, r: RootRunResult): Promise<string> => explain(what, r) + (await mountLog())

  const mounted = async (): Promise<boolean> => (await root!.mounts()).some((m) => m.mountPoint === MOUNT && m.fsType === 'fuse.transferfs')
  /** The mount daemon of MOUNT, as this machine numbers it. */
  const daemons = async (): Promise<number[]> => (await root!.processes()).filter((p) => p.cmdline.includes(` mount ${MOUNT}`)).map((p) => p.pid)

  const mountAsUser = async (): Promise<void> => {
    const r = await sh('mkdir -p "$1" && exec transferfs mount "$1"', MOUNT)
    expect(r.code, await explainMount('transferfs mount', r)).toBe(0)
    expect(await mounted(), await explainMount('the root\'s mount table after transferfs mount', r)).toBe(true)
  }
  const unmountAsUser = async (): Promise<void> => {
    const r = await transferfs('unmount', MOUNT)
    expect(r.code, await explainMount('transferfs unmount', r)).toBe(0)
    expect(await mounted()).toBe(false)
    expect(await waitFor(async () => (await daemons()).length === 0, 15_000), `the mount daemon outlived the unmount${await mountLog()}`).toBe(true)
  }

  const json = async <T>(what: string, r: RootRunResult): Promise<T> => {
    expect(r.code, explain(what, r)).toBe(0)
    return JSON.parse(r.stdout) as T
  }
  const status = async (): Promise<{ entries: StatusEntry[]; running: boolean }> => json('transferfs status --json', await transferfs('status', '--json'))
  const info = async (id: string): Promise<TransferJson> => json(`transferfs info ${id}`, await transferfs('info', id, '--files', '--json'))

  /** The service's test controls (docs/local-service.md), from this machine. */
  async function control<T>(method: 'GET' | 'POST' | 'DELETE', route: string, body?: unknown): Promise<T> {
    const s = service!
    const res = await request(`${new URL(s.announcement.baseUrl).origin}/_emulator${route}`, {
      method,
      dispatcher: s.dispatcher,
      headers: { 'x-api-key': s.announcement.apiKey, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    })
    const text = await res.body.text()
    if (res.statusCode !== 200) throw new Error(`test control ${method} ${route} answered ${res.statusCode}: ${text}\n--- the service's log (end) ---\n${s.log().slice(-4000)}`)
    return JSON.parse(text) as T
  }
  const recipientMail = async (to: string): Promise<MailEntry[]> => (await control<MailEntry[]>('GET', '/mail')).filter((m) => m.kind === 'recipient' && m.to === to)

  /** Which of TOOLCHAIN the root's PATH (root's, the widest) finds, as "has X" / "no X" lines. */
  const toolchain = async (): Promise<string[]> => {
    const r = await asRoot(['sh', '-c', 'for t in "$@"; do if command -v "$t" >/dev/null; then echo "has $t"; else echo "no $t"; fi; done', 'sh', ...TOOLCHAIN])
    expect(r.code, explain('command -v', r)).toBe(0)
    return r.stdout.split('\n').filter(Boolean)
  }

  /** dpkg's status of a package in the root ("install ok installed"), or "" when it is not there at all. */
  const dpkgStatus = async (pkg: string): Promise<string> => {
    const r = await asRoot(['dpkg-query', '-W', '-f=${Status}', pkg])
    const s = r.code === 0 ? r.stdout.trim() : ''
    return s.endsWith(' not-installed') ? '' : s
  }

  /** apt install of a built .deb, from the folder holding it, as a user types it. */
  const aptInstall = (deb: Built): Promise<RootRunResult> => asRoot(['apt', 'install', '-y', `./${path.basename(deb.file)}`], { cwd: DEBS })

  /**
   * Every file, folder and link under the user's folders (as root sees them from outside):
   * type, mode, owner, size, modification time and, for files, a SHA-256 of the bytes.
   */
  async function snapshot(): Promise<Map<string, string>> {
    const out = new Map<string, string>()
    const walk = async (dir: string): Promise<void> => {
      for (const name of (await readdir(dir)).sort()) {
        const file = path.join(dir, name)
        const st = await lstat(file)
        const rel = path.relative(root!.dir, file)
        let what = `${(st.mode & 0o170000).toString(8)} ${(st.mode & 0o7777).toString(8)} ${st.uid}:${st.gid} ${st.size} ${st.mtimeMs}`
        if (st.isFile()) {
          const hash = createHash('sha256')
          for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
          what += ` ${hash.digest('hex')}`
        }
        out.set(rel, what)
        if (st.isDirectory()) await walk(file)
      }
    }
    for (const dir of USER_FOLDERS) {
      out.set(dir.slice(1), (await stat(root!.host(dir)).then((s) => `folder ${(s.mode & 0o7777).toString(8)}`, () => 'missing')))
      if (out.get(dir.slice(1)) !== 'missing') await walk(root!.host(dir))
    }
    return out
  }

  async function buildDebs(): Promise<void> {
    const out = path.join(work, 'debs')
    const env = { SOURCE_DATE_EPOCH: await lastCommitEpoch() }
    // In the run's one clean build of the checkout (shared with test/package/npm-pack.test.ts).
    await withCleanBuild(async (clone) => {
      const version = (JSON.parse(await readFile(path.join(clone, 'package.json'), 'utf8')) as { version: string }).version
      const build = async (v: string): Promise<Built> => {
        const r = await host(process.execPath, ['packaging/build-deb.mjs', '--out', out, ...(v === version ? [] : ['--version', v])], { cwd: clone, env, timeoutMs: 600_000 })
        if (r.code !== 0) throw new Error(explain(`node packaging/build-deb.mjs (version ${v}) in a clean copy of the checkout`, r))
        const file = r.stdout.trim().split('\n').at(-1) ?? ''
        if (path.basename(file) !== `transferfs_${v}_amd64.deb`) throw new Error(`build-deb.mjs's last line is not the .deb: ${JSON.stringify(file)}`)
        return { file, version: v }
      }
      current = await build(version)
      // The same code under a lower version ("~" sorts before anything in Debian's ordering), to upgrade from.
      older = await build(`${version}~older`)
    })
    // lintian leaves files in its temporary folder: this run's own, removed with it.
    const lintianTmp = path.join(work, 'lintian-tmp')
    await mkdir(lintianTmp)
    lintian = await host('lintian', [current.file], { timeoutMs: 300_000, env: { TMPDIR: lintianTmp } })
  }

  async function prepareRoot(): Promise<void> {
    root = await DebianRoot.unpack(await bookwormTarball(INCLUDE))
    // Refreshes the package lists the tarball was made with (a point release may have replaced
    // packages since); tried again, as a mirror caught mid-sync answers with mismatched hashes.
    let update = await asRoot(['apt-get', 'update'])
    for (let attempt = 1; attempt < 3 && update.code !== 0; attempt++) {
      await new Promise((r) => setTimeout(r, 5000))
      update = await asRoot(['apt-get', 'update'])
    }
    if (update.code !== 0) throw new Error(explain('apt-get update in the Debian root', update))
    const user = await asRoot(['useradd', '--create-home', '--shell', '/bin/bash', USER])
    if (user.code !== 0) throw new Error(explain('useradd in the Debian root', user))
  }

  /** Starts `transferfs serve --demo --controls` as the user, from the package's files; resolves with its announcement. */
  async function startService(): Promise<void> {
    const node = `${SERVICE_TREE}/usr/lib/transferfs/node/bin/node`
    const main = `${SERVICE_TREE}/usr/lib/transferfs/dist/src/cli/main.js`
    const child = root!.start([node, main, 'serve', '--demo', '--controls'], { user: USER })
    let stderr = ''
    child.stderr!.on('data', (b: Buffer) => { stderr = (stderr + b.toString()).slice(-20_000) })
    const line = await new Promise<string>((resolve, reject) => {
      let stdout = ''
      const timer = setTimeout(() => reject(new Error(`transferfs serve printed no announcement within 180 s:\n${stderr}`)), 180_000)
      child.stdout!.on('data', (b: Buffer) => {
        stdout += b.toString()
        const nl = stdout.indexOf('\n')
        if (nl >= 0) {
          clearTimeout(timer)
          resolve(stdout.slice(0, nl))
        }
      })
      child.on('close', (code) => {
        clearTimeout(timer)
        reject(new Error(`transferfs serve ended (exit ${code}) before its announcement:\n${stderr}`))
      })
    })
    const announcement = JSON.parse(line) as ServiceAnnouncement
    const ca = await readFile(root!.host(announcement.ca), 'utf8')
    service = { announcement, dispatcher: new Agent({ connect: { ca } }), log: () => stderr }
  }

  beforeAll(async () => {
    const missing = missingHostTools()
    for (const [tool, pkg] of [['lintian', 'lintian'], ['dpkg-deb', 'dpkg'], ['dpkg-shlibdeps', 'dpkg-dev'], ['strip', 'binutils']]) {
      if ((await host('sh', ['-c', `command -v ${tool}`])).code !== 0) missing.push(`${tool} (${pkg})`)
    }
    if (missing.length > 0) throw new Error(`this test needs, on this machine: ${missing.join(', ')}`)
    work = await mkdtemp(path.join(os.tmpdir(), 'transferfs-test-deb-'))
    // The build is CPU-bound, the root's preparation waits on disk and network: side by side.
    // Both are waited for even when one fails, so afterAll finds the root to take down.
    const failed = (await Promise.allSettled([buildDebs(), prepareRoot()])).find((r) => r.status === 'rejected')
    if (failed) throw failed.reason
  }, 900_000)

  afterAll(async () => {
    await root?.close()
    await service?.dispatcher.close()
    if (work) await removeTree(work)
  }, 120_000)

  it('the clean root is Debian 12 with no Node, npm, compiler or git, and no transferfs', async () => {
    expect(await readFile(root!.host('/etc/debian_version'), 'utf8')).toMatch(/^12\./)
    expect(await toolchain()).toEqual(TOOLCHAIN.map((t) => `no ${t}`))
    expect(await dpkgStatus('transferfs')).toBe('')
  })

  it('apt installs it with its dependencies from Debian; a normal user signs in and mounts', async () => {
    await mkdir(root!.host(DEBS), { recursive: true, mode: 0o755 })
    for (const deb of [current, older]) {
      await copyFile(deb.file, root!.host(`${DEBS}/${path.basename(deb.file)}`))
      await chmod(root!.host(`${DEBS}/${path.basename(deb.file)}`), 0o644)
    }
    // The service the user signs in to: the package's own code, unpacked beside the system
    // (the root has no Node of its own), so removing and upgrading the package leave it running.
    const unpack = await asRoot(['dpkg-deb', '-x', `${DEBS}/${path.basename(current.file)}`, SERVICE_TREE])
    expect(unpack.code, explain('dpkg-deb -x', unpack)).toBe(0)
    const serviceStarted = Date.now()
    await startService()
    const serviceMs = Date.now() - serviceStarted
    const { baseUrl, apiKey, ca, user } = service!.announcement

    const installStarted = Date.now()
    const install = await aptInstall(current)
    const installMs = Date.now() - installStarted
    expect(install.code, explain('apt install', install)).toBe(0)
    expect(await dpkgStatus('transferfs')).toBe('install ok installed')
    // fuse3 (the setuid helper) and a libfuse 3 came from Debian; never `fuse`, which would remove fuse3.
    expect(await dpkgStatus('fuse3')).toBe('install ok installed')
    expect(await dpkgStatus('libfuse3-3')).toBe('install ok installed')
    expect(await dpkgStatus('fuse')).toBe('')
    // Its Node is its own, off the PATH, and it brought no toolchain.
    expect(await toolchain()).toEqual(TOOLCHAIN.map((t) => `no ${t}`))
    const version = await transferfs('--version')
    expect(version.stdout.trim(), explain('transferfs --version', version)).toBe(current.version)

    const signInStarted = Date.now()
    for (const [key, value] of [['apiUrl', baseUrl], ['apiKey', apiKey], ['ca', ca]] as const) {
      const set = await transferfs('config', 'set', key, value)
      expect(set.code, explain(`transferfs config set ${key}`, set)).toBe(0)
    }
    const login = await asUser(['transferfs', 'login', '--email', user.email, '--password-stdin'], { input: `${user.password}\n` })
    expect(login.code, explain('transferfs login', login)).toBe(0)
    await mountAsUser()
    const mountedAt = Date.now()
    // Debian 12's libfuse 3 is libfuse3.so.3: the mount runs on it, through the addon built for it.
    const [daemon] = await daemons()
    expect(daemon, 'no mount daemon in the root').toBeDefined()
    expect(await readFile(`/proc/${daemon}/maps`, 'utf8')).toMatch(/\/libfuse3\.so\.3/)

    // The mount lives in the root's mount namespace only: this machine's mount table never sees it.
    expect((await readFile('/proc/self/mountinfo', 'utf8')).includes(root!.dir)).toBe(false)

    const fetched = /^Need to get (.*) of archives\.$/m.exec(install.stdout)?.[1] ?? '?'
    const installedKiB = Number((await host('dpkg-deb', ['-f', current.file, 'Installed-Size'])).stdout.trim())
    const bytes = (await stat(current.file)).size
    // The user's steps only: the checks this test makes between them are left out.
    const signInMs = mountedAt - signInStarted
    console.log([
      `deb: apt install → mounted: ${seconds(installMs + signInMs)} (apt install ${seconds(installMs)}, then config set × 3 + login + mount ${seconds(signInMs)});`,
      `     apt fetched ${fetched} (dependencies from Debian / everything); the local service started before it, in ${seconds(serviceMs)} (not counted)`,
      `deb: ${path.basename(current.file)}: ${(bytes / 1e6).toFixed(1)} MB (${bytes} bytes) compressed; Installed-Size ${installedKiB} KiB (${(installedKiB / 1024).toFixed(1)} MiB)`,
    ].join('\n'))
  }, 400_000)

  it('reads the biggest file of the inbox byte for byte (md5sum in the root = the service\'s MD5)', async () => {
    expect(await mounted(), 'no mount (an earlier test failed)').toBe(true)
    const inbox = await json<TransferJson[]>('transferfs inbox --json', await transferfs('inbox', '--json'))
    const biggest = inbox.flatMap((t) => (t.files ?? []).map((f) => ({ id: t.id, ...f }))).reduce((a, b) => (b.filesize > a.filesize ? b : a))
    // Several chunks (50 MiB each), so the read goes through fetch, verify and the caches more than once.
    expect(biggest.filesize).toBeGreaterThan(200 * 1024 * 1024)
    const details = await info(biggest.id)
    const file = details.files?.find((f) => f.filename === biggest.filename)
    expect(file?.md5).toMatch(/^[0-9a-f]{32}$/)
    const started = Date.now()
    const sum = await asUser(['md5sum', `${MOUNT}/by-id/${biggest.id}/${biggest.filename}`], { timeoutMs: 240_000 })
    expect(sum.code, await explainMount('md5sum through the mount', sum)).toBe(0)
    expect(sum.stdout.split(' ')[0], await mountLog()).toBe(file!.md5)
    console.log(`deb: read ${(biggest.filesize / 1024 / 1024).toFixed(0)} MiB through the mount in ${seconds(Date.now() - started)}`)
  }, 300_000)

  it('sends a file copied into outbox/: it moves to sent/, and the service holds it with the same bytes', async () => {
    expect(await mounted(), 'no mount (an earlier test failed)').toBe(true)
    const to = `deb-send-${process.pid}@example.com`
    const make = await sh('head -c 3000000 /dev/urandom > "$HOME/to-send.bin" && mkdir "$1/outbox/$2" && cp "$HOME/to-send.bin" "$1/outbox/$2/"', MOUNT, to)
    expect(make.code, await explainMount('cp into outbox/', make)).toBe(0)
    const data = await readFile(root!.host(`${HOME}/to-send.bin`))

    let entry: StatusEntry | undefined
    const done = await waitFor(async () => {
      entry = (await status()).entries.find((e) => e.name === `${to}/to-send.bin`)
      return entry?.state === 'done' && !!entry.transferid
    }, 90_000, 500)
    expect(done, `not sent within 90 s: ${JSON.stringify(entry)}${await mountLog()}`).toBe(true)
    const id = entry!.transferid!

    const sent = await info(id)
    expect(sent.status).toBe('STATUS_COMPLETE')
    expect(sent.files?.map((f) => ({ name: f.filename, size: f.filesize, md5: f.md5 }))).toEqual([{ name: 'to-send.bin', size: data.length, md5: md5(data) }])
    expect((await recipientMail(to)).map((m) => m.transferid)).toEqual([id])

    const left = await sh('find "$1/outbox" -type f', MOUNT)
    expect({ code: left.code, files: left.stdout.trim() }).toEqual({ code: 0, files: '' })
    const sentList = await sh('ls -1 "$1/sent"', MOUNT)
    expect(sentList.stdout.split('\n').filter((n) => n.endsWith(`(${id})`)), explain('ls sent/', sentList)).toHaveLength(1)
  }, 180_000)

  it('`transferfs unmount` ends the mount and its daemon', async () => {
    expect(await mounted(), 'no mount (an earlier test failed)').toBe(true)
    await unmountAsUser()
    const ls = await sh('ls -1A "$1"', MOUNT)
    expect({ code: ls.code, out: ls.stdout }).toEqual({ code: 0, out: '' })
  }, 60_000)

  it('`man transferfs` renders the manual', async () => {
    const man = await asUser(['man', 'transferfs'], { env: { MANPAGER: 'cat', MANWIDTH: '80' } })
    expect(man.code, explain('man transferfs', man)).toBe(0)
    expect(man.stdout).toMatch(/^NAME\n\s+transferfs\b.* - /m)
    expect(man.stdout).toMatch(/^SYNOPSIS$/m)
    // groff says nothing: no warnings about the page's markup.
    expect(man.stderr).toBe('')
    // mount(8) finds the helper's page by the helper's name.
    const helper = await asUser(['man', '-w', '8', 'mount.transferfs'])
    expect(helper.code, explain('man -w 8 mount.transferfs', helper)).toBe(0)
  }, 60_000)

  it('the systemd user unit passes `systemd-analyze verify`, its Documentation= page found', async () => {
    const escaped = await asUser(['systemd-escape', MOUNT])
    expect(escaped.code, explain('systemd-escape', escaped)).toBe(0)
    const instance = `transferfs@${escaped.stdout.trim()}.service`
    expect(instance).toBe(`transferfs@-home-${USER}-Transfers.service`)
    // The template's instance as a unit file of its own; a second one naming a page that does
    // not exist shows the man page check runs (systemd-analyze runs `man` for each man: entry).
    const script = [
      'set -e',
      'mkdir -p -m 0700 "$HOME/run" "$HOME/units"',
      'cp /usr/lib/systemd/user/transferfs@.service "$HOME/units/$1"',
      'sed "s/^Documentation=man:transferfs(1)$/Documentation=man:transferfs-no-such-page(1)/" /usr/lib/systemd/user/transferfs@.service > "$HOME/units/transferfs-nopage@-x.service"',
    ].join('\n')
    const made = await sh(script, instance)
    expect(made.code, explain('copying the unit', made)).toBe(0)
    const verify = (unit: string): Promise<RootRunResult> =>
      asUser(['systemd-analyze', '--user', 'verify', `${HOME}/units/${unit}`], { env: { XDG_RUNTIME_DIR: `${HOME}/run` } })

    const good = await verify(instance)
    expect(good.code, explain(`systemd-analyze --user verify ${instance}`, good)).toBe(0)
    expect(good.stdout + good.stderr).toBe('')
    const control = await verify('transferfs-nopage@-x.service')
    expect(control.code).not.toBe(0)
    expect(control.stdout + control.stderr).toMatch(/man transferfs-no-such-page\(1\)/)
  }, 60_000)

  /**
   * The user's folders before and after `apt <action> transferfs`: the same files with the same
   * bytes, and the package gone. Checked on real content: the session, the settings, cached
   * chunks and the send records are there.
   */
  async function removesOnlyThePackage(action: 'remove' | 'purge'): Promise<void> {
    expect(await mounted()).toBe(false)
    const before = await snapshot()
    const names = [...before.keys()]
    const home = HOME.slice(1)
    for (const want of [`${home}/.config/transferfs/tokens.json`, `${home}/.config/transferfs/config.json`, `${home}/.cache/transferfs/chunks/`, `${home}/.local/share/transferfs/sent.jsonl`]) {
      expect(names.some((n) => (want.endsWith('/') ? n.startsWith(want) && n !== want.slice(0, -1) : n === want)), `${want} in\n${names.join('\n')}`).toBe(true)
    }
    const r = await asRoot(['apt', action, '-y', 'transferfs'])
    expect(r.code, explain(`apt ${action}`, r)).toBe(0)
    expect(r.stdout).toMatch(/^Removing transferfs \(/m)
    // Nothing of it is left, not even for a later purge: it has no conffiles and no maintainer scripts.
    expect(await dpkgStatus('transferfs')).toBe('')
    const left = await asRoot(['sh', '-c', 'ls -d /usr/bin/transferfs /usr/lib/transferfs /sbin/mount.transferfs /usr/lib/systemd/user/transferfs@.service /usr/share/doc/transferfs 2>/dev/null; true'])
    expect(left.stdout).toBe('')
    expect(await snapshot()).toEqual(before)
  }

  it('apt remove leaves the user\'s config, cache and data folders byte for byte', async () => {
    await removesOnlyThePackage('remove')
  }, 120_000)

  it('upgrading an older version that left a send unfinished: after the upgrade the send completes, once', async () => {
    // A fresh install of the older build; the session survived the removal, so no new login.
    const install = await aptInstall(older)
    expect(install.code, explain('apt install (older)', install)).toBe(0)
    expect((await transferfs('--version')).stdout.trim()).toBe(older.version)
    // Every upload of file bytes is refused: the transfer is created, its file cannot be sent.
    await control('POST', '/faults', { route: 'savefile', kind: 'status', status: 503, probability: 1 })
    await mountAsUser()
    await control('POST', '/counters/reset')

    const to = `deb-upgrade-${process.pid}@example.com`
    const make = await sh('head -c 2000000 /dev/urandom > "$HOME/held.bin" && mkdir "$1/outbox/$2" && cp "$HOME/held.bin" "$1/outbox/$2/"', MOUNT, to)
    expect(make.code, await explainMount('cp into outbox/', make)).toBe(0)
    const data = await readFile(root!.host(`${HOME}/held.bin`))
    let entry: StatusEntry | undefined
    const refused = await waitFor(async () => {
      entry = (await status()).entries.find((e) => e.name === `${to}/held.bin`)
      const counters = await control<{ routes: Record<string, number> }>('GET', '/counters')
      return !!entry?.transferid && (counters.routes.savefile ?? 0) >= 1
    }, 60_000, 500)
    expect(refused, `the send did not start: ${JSON.stringify(entry)}${await mountLog()}`).toBe(true)
    const heldId = entry!.transferid!
    await unmountAsUser()
    // Left unsent: not done, nothing mailed, the bytes kept in the data folder.
    expect((await status()).entries.find((e) => e.name === `${to}/held.bin`)?.state).not.toBe('done')
    expect(await recipientMail(to)).toEqual([])

    const upgrade = await aptInstall(current)
    expect(upgrade.code, explain('apt install (upgrade)', upgrade)).toBe(0)
    expect(upgrade.stdout).toContain(`Unpacking transferfs (${current.version}) over (${older.version})`)
    expect((await transferfs('--version')).stdout.trim()).toBe(current.version)

    await control('DELETE', '/faults')
    await mountAsUser()
    const mailed = await waitFor(async () => (await recipientMail(to)).length > 0, 90_000, 500)
    expect(mailed, `not sent within 90 s of the upgrade's mount: ${JSON.stringify((await status()).entries)}${await mountLog()}`).toBe(true)
    expect(await waitFor(async () => (await status()).entries.find((e) => e.name === `${to}/held.bin`)?.state === 'done', 30_000, 500), await mountLog()).toBe(true)
    // Longer than the outbox's settle time and a retry: a second send would have shown by now.
    await new Promise((r) => setTimeout(r, 6000))
    const mails = await recipientMail(to)
    expect(mails.map((m) => m.transferid), 'one transfer, the one started before the upgrade').toEqual([heldId])
    const sent = await info(heldId)
    expect(sent.status).toBe('STATUS_COMPLETE')
    expect(sent.files?.map((f) => ({ name: f.filename, size: f.filesize, md5: f.md5 }))).toEqual([{ name: 'held.bin', size: data.length, md5: md5(data) }])
    const left = await sh('find "$1/outbox" -type f', MOUNT)
    expect({ code: left.code, files: left.stdout.trim() }).toEqual({ code: 0, files: '' })
    await unmountAsUser()
  }, 300_000)

  it('apt purge of the upgraded package leaves the user\'s config, cache and data folders byte for byte', async () => {
    expect(await dpkgStatus('transferfs'), 'not installed (an earlier test failed)').toBe('install ok installed')
    await removesOnlyThePackage('purge')
  }, 120_000)

  it('lintian reports no error and no warning in the package (docs/packaging.md explains its two overrides)', async () => {
    console.log(`deb: lintian ${path.basename(current.file)} (exit ${lintian.code}):\n${(lintian.stdout + lintian.stderr).trim() || '(no output)'}`)
    expect(lintian.stdout.split('\n').filter((l) => /^[EW]: /.test(l))).toEqual([])
    expect(lintian.code, explain('lintian', lintian)).toBe(0)
  })

  it('holds the runtime, the code, the three addons and the desktop files, and nothing of the build; depends on fuse3, never fuse', async () => {
    const listing = await host('dpkg-deb', ['--contents', current.file])
    expect(listing.code, explain('dpkg-deb --contents', listing)).toBe(0)
    const files = listing.stdout.split('\n').filter(Boolean).map((l) => l.replace(/^.* \.\//, '/').replace(/ -> .*$/, ''))
    for (const file of [
      '/usr/bin/transferfs', '/sbin/mount.transferfs', '/usr/lib/systemd/user/transferfs@.service',
      '/usr/lib/transferfs/node/bin/node', '/usr/lib/transferfs/node/LICENSE', '/usr/lib/transferfs/dist/src/cli/main.js',
      '/usr/lib/transferfs/prebuilds/linux-x64/libfuse3.so.3.node', '/usr/lib/transferfs/prebuilds/linux-x64/libfuse3.so.4.node',
      '/usr/lib/transferfs/prebuilds/linux-x64/libfuse.so.2.node',
      '/usr/share/bash-completion/completions/transferfs', '/usr/share/zsh/vendor-completions/_transferfs',
      '/usr/share/man/man1/transferfs.1.gz', '/usr/share/man/man8/mount.transferfs.8.gz',
      '/usr/share/doc/transferfs/copyright', '/usr/share/doc/transferfs/changelog.gz',
    ]) expect(files).toContain(file)
    // Nothing of the build: no TypeScript, tests, source maps, dev tools or fuse-native's sources and builds.
    expect(files.filter((f) => /\.(ts|map)$/.test(f) || /\/test\//.test(f) || /node_modules\/(typescript|vitest|fast-check|patch-package|@types)\//.test(f) ||
      /fuse-native\/(build|prebuilds)\/|fuse-native\.c$/.test(f))).toEqual([])
    // The runtime is the one this build ran on (run from the copy the service runs from: by now the package is purged).
    const runtime = await asRoot([`${SERVICE_TREE}/usr/lib/transferfs/node/bin/node`, '--version'])
    expect(runtime.stdout.trim()).toBe(process.version)

    const field = async (name: string): Promise<string> => (await host('dpkg-deb', ['--field', current.file, name])).stdout.trim()
    const depends = (await field('Depends')).split(', ')
    expect(depends).toContain('fuse3')
    expect(depends.some((d) => /^libfuse3-3 \(>= [\d.]+\) \| libfuse3-4$/.test(d)), depends.join(', ')).toBe(true)
    expect(depends.filter((d) => d.split(' | ').some((alt) => /^fuse( |$)/.test(alt)))).toEqual([])
    expect(await field('Recommends')).toBe('libnotify-bin')
    // No maintainer scripts: nothing runs at install, upgrade or removal.
    const control = await host('dpkg-deb', ['--info', current.file])
    expect(control.stdout.match(/^ +\d+ bytes, +\d+ lines +\S+/gm)?.map((l) => l.trim().split(/ +/).at(-1)).sort()).toEqual(['control', 'md5sums'])
  })
})
