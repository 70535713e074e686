// The .deb as a Debian 12 desktop user gets it. Built from a clean copy of the checkout by
// packaging/build-deb.mjs, it is installed with apt into a clean Debian 12 root (no Node, npm,
// compiler or git; apt fetches the dependencies from Debian's archive), where a normal user
// signs in to the local Transfer Service (run from the package's own files), mounts, reads a
// file byte for byte, sends one through outbox/ and unmounts; the manual renders and the systemd
// user unit passes `systemd-analyze verify`. Removing and purging the package leaves the
// user's config, cache and data folders byte for byte as they were (a remove keeps the one
// conffile, the apt source). Then as `npm run release` publishes it: a signed apt repository
// (a test key, served over http://127.0.0.1) that the root adds as the README says; apt
// verifies it, installs an older build of the same code, which is left with a send it could
// not finish; the newer version is released into the same repository, apt upgrades to it and
// the send completes, once. A repository altered after signing is refused. lintian finds no
// error in the package. Everything is judged from outside the user's processes: apt's and
// dpkg's word, the root's mount table, the service's own records and MD5s.
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { chmod, copyFile, lstat, mkdir, mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { gzipSync } from 'node:zlib'
import os from 'node:os'
import path from 'node:path'
import { Agent, request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ServiceAnnouncement } from '../../src/api/types.js'
import { withCleanBuild } from '../support/clean-build.js'
import { removeTree } from '../support/fuse-cleanup.js'
import { lastCommitEpoch } from '../support/clean-copy.js'
import { DEBIAN_RELEASES, debianTarball, DebianRoot, missingHostTools, type DebianRelease, type RootRunOptions, type RootRunResult } from './debian-root.js'
import { explain, host, makeReleaseKey, release, startRepositoryServer, stopAgent, type HostRun, type Released, type ReleaseKey, type RepositoryServer } from './apt-repository.js'

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

type Built = Released
/** What the package ships for apt, and what the repository's root publishes for the first-time steps. */
const KEYRING = '/usr/share/keyrings/transferfs-archive-keyring.gpg'
const SOURCES = '/etc/apt/sources.list.d/transferfs.sources'

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

interface PinEntry {
  name: string
  state: string
  bytesCached: number
  bytesTotal: number
}

interface TransferJson {
  id: string
  status?: string
  files?: Array<{ filename: string; filesize: number; md5: string }>
}

describe.skipIf(SKIP !== null)(`the .deb on a clean Debian 12${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let work = ''
  let root: DebianRoot | undefined
  /** A clean Debian 13 root: the package from the repository, on libfuse3.so.4. */
  let trixie: DebianRoot | undefined
  let current: Built
  let older: Built
  let lintian: HostRun
  let key: ReleaseKey | undefined
  let repo: RepositoryServer | undefined
  /** The repository after version N (older) was released into it, and the same after N+1 (current). */
  let repoN = ''
  let repoN1 = ''
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
  const status = async (): Promise<{ entries: StatusEntry[]; running: boolean; pins?: { entries: PinEntry[] } }> => json('transferfs status --json', await transferfs('status', '--json'))
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
    key = await makeReleaseKey(path.join(work, 'gnupg'))
    repoN = path.join(work, 'repo-n')
    repoN1 = path.join(work, 'repo-n1')
    const env = { SOURCE_DATE_EPOCH: await lastCommitEpoch() }
    // In the run's one clean build of the checkout (shared with test/package/npm-pack.test.ts).
    await withCleanBuild(async (clone) => {
      const version = (JSON.parse(await readFile(path.join(clone, 'package.json'), 'utf8')) as { version: string }).version
      // The same code under a lower version ("~" sorts before anything in Debian's ordering), to upgrade from.
      older = await release(clone, key!, repoN, repo!.url, `${version}~older`, env)
      // The next release goes into the same repository (a copy, so that N alone can be served first).
      const copied = await host('cp', ['-a', repoN, repoN1])
      if (copied.code !== 0) throw new Error(explain('cp -a', copied))
      current = await release(clone, key!, repoN1, repo!.url, version, env)
    })
    // lintian leaves files in its temporary folder: this run's own, removed with it.
    const lintianTmp = path.join(work, 'lintian-tmp')
    await mkdir(lintianTmp)
    lintian = await host('lintian', [current.file], { timeoutMs: 300_000, env: { TMPDIR: lintianTmp } })
  }

  /** A clean root of release with the user added, its package lists refreshed. */
  async function prepare(release: DebianRelease, include: string[]): Promise<DebianRoot> {
    const made = await DebianRoot.unpack(await debianTarball(release, include))
    const run = (command: string[]): Promise<RootRunResult> => made.run(command, { timeoutMs: 300_000 })
    // Refreshes the package lists the tarball was made with (a point release may have replaced
    // packages since); tried again, as a mirror caught mid-sync answers with mismatched hashes.
    let update = await run(['apt-get', 'update'])
    for (let attempt = 1; attempt < 3 && update.code !== 0; attempt++) {
      await new Promise((r) => setTimeout(r, 5000))
      update = await run(['apt-get', 'update'])
    }
    if (update.code !== 0) throw new Error(explain(`apt-get update in the Debian ${DEBIAN_RELEASES[release]} root`, update))
    const user = await run(['useradd', '--create-home', '--shell', '/bin/bash', USER])
    if (user.code !== 0) throw new Error(explain(`useradd in the Debian ${DEBIAN_RELEASES[release]} root`, user))
    return made
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
    // Its URL goes into the packages, so it listens before they are built.
    repo = await startRepositoryServer()
    // The build is CPU-bound, the root's preparation waits on disk and network: side by side.
    // Both are waited for even when one fails, so afterAll finds the root to take down.
    const failed = (await Promise.allSettled([
      buildDebs(),
      prepare('bookworm', INCLUDE).then((r) => { root = r }),
      prepare('trixie', []).then((r) => { trixie = r }),
    ])).find((r) => r.status === 'rejected')
    if (failed) throw failed.reason
  }, 900_000)

  afterAll(async () => {
    await trixie?.close()
    await root?.close()
    await repo?.close()
    if (key) await stopAgent(key)
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
    // Nothing of it is left but, after a remove, its one conffile (the apt source), as dpkg
    // keeps every package's; a purge takes that too. No maintainer script ran.
    expect(await dpkgStatus('transferfs')).toBe(action === 'remove' ? 'deinstall ok config-files' : '')
    const left = await asRoot(['sh', '-c', `ls -d /usr/bin/transferfs /usr/lib/transferfs /sbin/mount.transferfs /usr/lib/systemd/user/transferfs@.service /usr/share/doc/transferfs ${KEYRING} ${SOURCES} 2>/dev/null; true`])
    expect(left.stdout).toBe(action === 'remove' ? `${SOURCES}\n` : '')
    expect(await snapshot()).toEqual(before)
  }

  it('apt remove leaves the user\'s config, cache and data folders byte for byte', async () => {
    await removesOnlyThePackage('remove')
  }, 120_000)

  /** apt-get update: exit 0, the repository's InRelease fetched and verified, no warning. */
  const aptUpdate = async (): Promise<void> => {
    const update = await asRoot(['apt-get', 'update'])
    expect(update.code, explain('apt-get update', update)).toBe(0)
    expect(update.stdout).toContain(`${repo!.url.replace(/\/$/, '')} stable InRelease`)
    expect(`${update.stdout}\n${update.stderr}`).not.toMatch(/^(W|E|Err):/m)
  }

  it('from the signed repository, added as the README says: apt update verifies it, apt install transferfs installs N', async () => {
    repo!.serve(repoN)
    // The README's first-time steps: the key, then the source, from the repository's root
    // (fetched with apt's own HTTP client: a minbase root has no curl).
    for (const [name, dest] of [[path.basename(KEYRING), KEYRING], [path.basename(SOURCES), SOURCES]] as const) {
      const got = await asRoot(['/usr/lib/apt/apt-helper', 'download-file', `${repo!.url}${name}`, dest])
      expect(got.code, explain(`apt-helper download-file ${name}`, got)).toBe(0)
    }
    await aptUpdate()
    const policy = await asRoot(['apt-cache', 'policy', 'transferfs'])
    expect(policy.stdout, explain('apt-cache policy', policy)).toMatch(new RegExp(`Candidate: ${older.version.replace(/[.~+]/g, '\\$&')}\n`))
    const install = await asRoot(['apt', 'install', '-y', 'transferfs'])
    expect(install.code, explain('apt install transferfs', install)).toBe(0)
    expect(install.stdout).toContain(`Unpacking transferfs (${older.version})`)
    // The source the user wrote is the package's conffile byte for byte: dpkg takes it over without a question.
    expect(`${install.stdout}\n${install.stderr}`).not.toMatch(/Configuration file/)
    expect((await asRoot(['dpkg-query', '-W', '-f=${Conffiles}', 'transferfs'])).stdout).toContain(SOURCES)
    expect((await transferfs('--version')).stdout.trim()).toBe(older.version)
  }, 300_000)

  it('N left a send unfinished and a pin fetched; N+1 released into the same repository: apt update and upgrade install it, the send completes once, the pin stays with nothing fetched again', async () => {
    expect(await dpkgStatus('transferfs'), 'not installed from the repository (an earlier test failed)').toBe('install ok installed')
    // The session survived the removal, so no new login.
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

    // A pin, fetched in full by N: the smallest transfer of the inbox that has bytes.
    const inbox = await json<TransferJson[]>('transferfs inbox --json', await transferfs('inbox', '--json'))
    const smallest = inbox.map((x) => ({ id: x.id, size: (x.files ?? []).reduce((a, f) => a + f.filesize, 0) })).filter((x) => x.size > 0).sort((a, b) => a.size - b.size)[0]
    expect(smallest, 'a transfer with bytes in the demo inbox').toBeDefined()
    const pinnedFile = (await info(smallest!.id)).files!.find((f) => f.filesize > 0)!
    const pin = await transferfs('pin', `${MOUNT}/by-id/${smallest!.id}`)
    expect(pin.code, await explainMount('transferfs pin', pin)).toBe(0)
    const pinnedAll = async (): Promise<boolean> => {
      const pins = (await status()).pins?.entries ?? []
      return pins.length === 1 && pins[0]!.state === 'pinned' && pins[0]!.bytesCached === pins[0]!.bytesTotal
    }
    expect(await waitFor(pinnedAll, 90_000, 500), `the pin was not fetched within 90 s: ${JSON.stringify((await status()).pins)}${await mountLog()}`).toBe(true)
    await unmountAsUser()
    // Left unsent: not done, nothing mailed, the bytes kept in the data folder.
    expect((await status()).entries.find((e) => e.name === `${to}/held.bin`)?.state).not.toBe('done')
    expect(await recipientMail(to)).toEqual([])

    repo!.serve(repoN1)
    await aptUpdate()
    const upgradable = await asRoot(['apt', 'list', '--upgradable'])
    expect(upgradable.stdout, explain('apt list --upgradable', upgradable)).toContain(`transferfs/stable ${current.version} amd64 [upgradable from: ${older.version}]`)
    // What `apt upgrade` does for it, without the root's other packages (Debian's updates since its tarball was made).
    const upgrade = await asRoot(['apt-get', 'install', '--only-upgrade', '-y', 'transferfs'])
    expect(upgrade.code, explain('apt-get install --only-upgrade transferfs', upgrade)).toBe(0)
    expect(upgrade.stdout).toContain(`Unpacking transferfs (${current.version}) over (${older.version})`)
    expect(`${upgrade.stdout}\n${upgrade.stderr}`).not.toMatch(/Configuration file/)
    expect((await transferfs('--version')).stdout.trim()).toBe(current.version)

    await control('DELETE', '/faults')
    await control('POST', '/counters/reset')
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

    // N's pin is N+1's: still kept in full, and its file reads right without a byte fetched since the upgrade.
    expect(await pinnedAll(), `the pin after the upgrade: ${JSON.stringify((await status()).pins)}`).toBe(true)
    const sum = await asUser(['md5sum', `${MOUNT}/by-id/${smallest!.id}/${pinnedFile.filename}`])
    expect(sum.code, await explainMount('md5sum of the pinned file', sum)).toBe(0)
    expect(sum.stdout.split(' ')[0]).toBe(pinnedFile.md5)
    const counters = await control<{ bytesServed: number; routes: Record<string, number> }>('GET', '/counters')
    expect({ bytesServed: counters.bytesServed, downloads: counters.routes.download ?? 0 }).toEqual({ bytesServed: 0, downloads: 0 })
    await unmountAsUser()
  }, 400_000)

  it('a repository whose Packages was altered after signing: apt update refuses it', async () => {
    const altered = path.join(work, 'repo-altered')
    const copied = await host('cp', ['-a', repoN1, altered])
    expect(copied.code, explain('cp -a', copied)).toBe(0)
    // Another hash for the newest package, the index's size unchanged: only the signed hashes tell.
    const index = path.join(altered, 'dists', 'stable', 'main', 'binary-amd64')
    const text = await readFile(path.join(index, 'Packages'), 'utf8')
    const changed = text.replace(/^(SHA256: )(.)/m, (_m, field: string, c: string) => `${field}${c === '0' ? '1' : '0'}`)
    expect(changed).not.toBe(text)
    await writeFile(path.join(index, 'Packages'), changed)
    await writeFile(path.join(index, 'Packages.gz'), gzipSync(changed))
    repo!.serve(altered)
    // As a machine that has not fetched this repository yet: otherwise apt, finding InRelease
    // unchanged, would keep the lists it has and fetch no Packages at all.
    const forget = await asRoot(['sh', '-c', 'ls /var/lib/apt/lists/127.0.0.1[:_]*Packages* >/dev/null && rm /var/lib/apt/lists/127.0.0.1[:_]*'])
    expect(forget.code, explain('rm lists', forget)).toBe(0)
    try {
      const update = await asRoot(['apt-get', 'update'])
      expect(update.code, explain('apt-get update (altered)', update)).not.toBe(0)
      // The index is not the one the signed Release describes (its size, else its hashes): refused.
      expect(`${update.stdout}\n${update.stderr}`).toMatch(/^E: Failed to fetch http:\/\/127\.0\.0\.1:\d+\/dists\/stable\/main\/binary-amd64\/Packages(\.gz)? +(File has unexpected size|Hash Sum mismatch)/m)
    } finally {
      repo!.serve(repoN1)
    }
  }, 120_000)

  it('apt purge of the upgraded package leaves the user\'s config, cache and data folders byte for byte', async () => {
    expect(await dpkgStatus('transferfs'), 'not installed (an earlier test failed)').toBe('install ok installed')
    await removesOnlyThePackage('purge')
  }, 120_000)

  it('lintian reports no error and no warning in the package (docs/packaging.md explains its overrides)', async () => {
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
      '/usr/share/doc/transferfs/copyright', '/usr/share/doc/transferfs/changelog.gz', KEYRING, SOURCES,
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
    // No maintainer scripts: nothing runs at install, upgrade or removal; the apt source is a conffile.
    const control = await host('dpkg-deb', ['--info', current.file])
    expect(control.stdout.match(/^ +\d+ bytes, +\d+ lines +\S+/gm)?.map((l) => l.trim().split(/ +/).at(-1)).sort()).toEqual(['conffiles', 'control', 'md5sums'])
    expect((await host('dpkg-deb', ['--info', current.file, 'conffiles'])).stdout).toBe(`${SOURCES}\n`)
  })

  it('ships the repository\'s key and a deb822 source naming it, the same bytes the repository\'s root publishes; the key has no SHA-1 signature', async () => {
    const unpacked = path.join(work, 'unpacked')
    const x = await host('dpkg-deb', ['-x', current.file, unpacked])
    expect(x.code, explain('dpkg-deb -x', x)).toBe(0)
    const sources = await readFile(path.join(unpacked, SOURCES), 'utf8')
    expect(sources.split('\n').filter((l) => l && !l.startsWith('#'))).toEqual([
      'Types: deb', `URIs: ${repo!.url}`, 'Suites: stable', 'Components: main', `Signed-By: ${KEYRING}`,
    ])
    expect(sources).toBe(await readFile(path.join(repoN1, path.basename(SOURCES)), 'utf8'))
    const keyring = await readFile(path.join(unpacked, KEYRING))
    expect(keyring.equals(await readFile(path.join(repoN1, path.basename(KEYRING))))).toBe(true)
    // Binary OpenPGP (apt reads a *.gpg keyring so), the test's release key, every signature on it SHA-512.
    const packets = await host('gpg', ['--list-packets'], { input: keyring, env: { GNUPGHOME: key!.home } })
    expect(packets.code, explain('gpg --list-packets', packets)).toBe(0)
    expect(packets.stdout).toContain(`keyid ${key!.fingerprint.slice(-16)}`)
    const digests = [...packets.stdout.matchAll(/digest algo (\d+)/g)].map((m) => m[1])
    expect(digests.length).toBeGreaterThan(0)
    expect([...new Set(digests)]).toEqual(['10'])
    // The indices are signed with SHA-512 too.
    const signature = await host('gpg', ['--list-packets', path.join(repoN1, 'dists', 'stable', 'Release.gpg')], { env: { GNUPGHOME: key!.home } })
    expect([...signature.stdout.matchAll(/digest algo (\d+)/g)].map((m) => m[1])).toEqual(['10'])
  })

  it('the release refuses a key apt refuses or should: SHA-1 self-signatures, RSA under 3072 bits, two keys and none named', async () => {
    const weak = async (name: string, args: string[]): Promise<ReleaseKey> => {
      const home = path.join(work, `gnupg-${name}`)
      await mkdir(home, { recursive: true, mode: 0o700 })
      const made = await host('gpg', ['--batch', '--pinentry-mode', 'loopback', '--passphrase', '', ...args], { env: { GNUPGHOME: home } })
      expect(made.code, explain(`gpg ${args.join(' ')}`, made)).toBe(0)
      return { home, fingerprint: '' }
    }
    const [sha1, rsa, two] = await Promise.all([
      weak('sha1', ['--cert-digest-algo', 'SHA1', '--quick-gen-key', 'sha1 <sha1@transferfs.invalid>', 'ed25519', 'sign', '1d']),
      weak('rsa', ['--quick-gen-key', 'rsa <rsa@transferfs.invalid>', 'rsa2048', 'sign', '1d']),
      weak('two', ['--quick-gen-key', 'one <one@transferfs.invalid>', 'ed25519', 'sign', '1d']),
    ])
    await weak('two', ['--quick-gen-key', 'two <two@transferfs.invalid>', 'ed25519', 'sign', '1d'])
    const started = Date.now()
    const out = path.join(work, 'refused')
    try {
      // Each is refused before anything is built: the clean build is only where the command is.
      await withCleanBuild(async (clone) => {
        for (const [k, said] of [[sha1, /carries signatures made with SHA-1: Debian 13's apt \(sqv\) refuses/], [rsa, /RSA of 2048 bits \(3072 or more are wanted\)/], [two, /holds 2 secret keys/]] as const) {
          const r = await host(process.execPath, ['packaging/release.mjs', '--out', out, '--repo-url', repo!.url], { cwd: clone, env: { GNUPGHOME: k.home } })
          expect(r.code, explain('release.mjs', r)).toBe(2)
          expect(r.stderr).toMatch(said)
          expect(r.stderr).not.toContain('building the package')
        }
      })
    } finally {
      for (const k of [sha1, rsa, two]) await stopAgent(k)
    }
    expect(await stat(out).then(() => 'made', () => 'none')).toBe('none')
    console.log(`deb: the release's three refusals took ${seconds(Date.now() - started)}`)
  }, 120_000)
  it('Debian 13: from the same repository (apt verifies it with sqv), apt install transferfs; a normal user mounts on libfuse3.so.4 with its addon and reads a file right', async () => {
    const t = trixie!
    const asT = (command: string[], opts: RootRunOptions = {}): Promise<RootRunResult> => t.run(command, { timeoutMs: 300_000, ...opts })
    const asTUser = (command: string[], opts: Omit<RootRunOptions, 'user'> = {}): Promise<RootRunResult> => t.run(command, { timeoutMs: 120_000, ...opts, user: USER })
    expect(await readFile(t.host('/etc/debian_version'), 'utf8')).toMatch(/^13\./)
    // Debian 13's apt checks signatures with sqv, which refuses SHA-1 self-signatures; gpgv is not there to fall back on.
    expect((await asT(['sh', '-c', 'command -v sqv; command -v gpgv; true'])).stdout).toBe('/usr/bin/sqv\n')
    repo!.serve(repoN1)
    for (const [name, dest] of [[path.basename(KEYRING), KEYRING], [path.basename(SOURCES), SOURCES]] as const) {
      const got = await asT(['/usr/lib/apt/apt-helper', 'download-file', `${repo!.url}${name}`, dest])
      expect(got.code, explain(`apt-helper download-file ${name}`, got)).toBe(0)
    }
    const update = await asT(['apt-get', 'update'])
    expect(update.code, explain('apt-get update (Debian 13)', update)).toBe(0)
    expect(update.stdout).toContain(`${repo!.url.replace(/\/$/, '')} stable InRelease`)
    expect(`${update.stdout}\n${update.stderr}`).not.toMatch(/^(W|E|Err):/m)
    const installStarted = Date.now()
    const install = await asT(['apt', 'install', '-y', 'transferfs'])
    const installMs = Date.now() - installStarted
    expect(install.code, explain('apt install transferfs (Debian 13)', install)).toBe(0)
    expect(install.stdout).toContain(`Unpacking transferfs (${current.version})`)
    expect((await asT(['dpkg-query', '-W', '-f=${Status}', 'libfuse3-4'])).stdout).toBe('install ok installed')

    // Signed in to the service the Debian 12 root runs (the same machine's network), trusting its CA.
    const { baseUrl, apiKey, ca, user } = service!.announcement
    await copyFile(root!.host(ca), t.host('/tmp/service-ca.pem'))
    await chmod(t.host('/tmp/service-ca.pem'), 0o644)
    const signInStarted = Date.now()
    for (const [k, v] of [['apiUrl', baseUrl], ['apiKey', apiKey], ['ca', '/tmp/service-ca.pem']] as const) {
      const set = await asTUser(['transferfs', 'config', 'set', k, v])
      expect(set.code, explain(`transferfs config set ${k} (Debian 13)`, set)).toBe(0)
    }
    const login = await asTUser(['transferfs', 'login', '--email', user.email, '--password-stdin'], { input: `${user.password}\n` })
    expect(login.code, explain('transferfs login (Debian 13)', login)).toBe(0)
    // fusermount3 3.17 unmounts through /etc/mtab, which an installed Debian 13 has (systemd-tmpfiles
    // links it to /proc/self/mounts at boot) and a root that never booted lacks.
    const mtab = await asT(['sh', '-c', '[ -e /etc/mtab ] || ln -s ../proc/self/mounts /etc/mtab'])
    expect(mtab.code, explain('/etc/mtab', mtab)).toBe(0)
    const mount = await asTUser(['sh', '-c', 'mkdir -p "$1" && exec transferfs mount "$1"', 'sh', MOUNT])
    expect(mount.code, explain('transferfs mount (Debian 13)', mount)).toBe(0)
    const mountedMs = Date.now() - signInStarted
    expect((await t.mounts()).some((m) => m.mountPoint === MOUNT && m.fsType === 'fuse.transferfs')).toBe(true)
    const [daemon] = (await t.processes()).filter((p) => p.cmdline.includes(` mount ${MOUNT}`)).map((p) => p.pid)
    expect(daemon, 'no mount daemon in the Debian 13 root').toBeDefined()
    const maps = await readFile(`/proc/${daemon}/maps`, 'utf8')
    expect(maps).toMatch(/\/prebuilds\/linux-x64\/libfuse3\.so\.4\.node$/m)
    expect(maps).not.toMatch(/\/prebuilds\/linux-x64\/libfuse(3\.so\.3|\.so\.2)\.node$/m)
    // The system's libfuse 3 the daemon mapped: 3.17 keeps the file name libfuse3.so.3.17.x, its soname says libfuse3.so.4.
    const libraries = [...new Set([...maps.matchAll(/(\/usr\/lib\/x86_64-linux-gnu\/libfuse3?\.so\.[\d.]+)$/gm)].map((m) => m[1]!))]
    expect(libraries).toHaveLength(1)
    const elf = await host('readelf', ['-d', t.host(libraries[0]!)])
    expect(elf.stdout, explain(`readelf -d ${libraries[0]}`, elf)).toContain('Library soname: [libfuse3.so.4]')

    // A file of a few MiB, read through the mount: the service's MD5.
    const inbox = JSON.parse((await asTUser(['transferfs', 'inbox', '--json'])).stdout) as TransferJson[]
    const small = inbox.flatMap((x) => (x.files ?? []).map((f) => ({ id: x.id, ...f }))).filter((f) => f.filesize > 0 && f.filesize < 20 * 1024 * 1024).sort((a, b) => b.filesize - a.filesize)[0]
    expect(small, 'a file under 20 MiB in the demo inbox').toBeDefined()
    const details = JSON.parse((await asTUser(['transferfs', 'info', small!.id, '--files', '--json'])).stdout) as TransferJson
    const sum = await asTUser(['md5sum', `${MOUNT}/by-id/${small!.id}/${small!.filename}`])
    expect(sum.code, explain('md5sum through the mount (Debian 13)', sum)).toBe(0)
    expect(sum.stdout.split(' ')[0]).toBe(details.files?.find((f) => f.filename === small!.filename)?.md5)

    const unmount = await asTUser(['transferfs', 'unmount', MOUNT])
    expect(unmount.code, explain('transferfs unmount (Debian 13)', unmount)).toBe(0)
    expect((await t.mounts()).some((m) => m.mountPoint === MOUNT)).toBe(false)
    console.log(`deb: Debian 13: apt install → mounted: ${seconds(installMs + mountedMs)} (apt install ${seconds(installMs)}, then config set × 3 + login + mount ${seconds(mountedMs)})`)
  }, 400_000)
})
