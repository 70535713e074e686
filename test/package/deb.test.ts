// The .deb as a Debian 12 desktop user gets it. Built from a clean copy of the checkout by
// packaging/build-deb.mjs, it is installed with apt into a clean Debian 12 root (no Node, npm,
// compiler or git; apt fetches the dependencies from Debian's archive), where a normal user
// signs in to the local Transfer Service (run from the package's own files), mounts, reads the
// 1 GiB demo file byte for byte, sends one through outbox/ and unmounts; the manual renders and
// the systemd user unit passes `systemd-analyze verify`. Removing and purging the package leaves
// the user's config, cache and data folders byte for byte as they were (a remove keeps the one
// conffile, the apt source). Then as `npm run release` publishes it: a signed apt repository
// (a test key, served over http://127.0.0.1) that the root adds as the README says; apt
// verifies it and installs an older build of the same code (N), whose mount is left with a send
// it could not finish and a pin; the newer version (N+1) is released into the same repository
// and apt upgrades to it under that running mount, which leaves the user's folders as they were
// and goes on reading until it is mounted again; the next mount runs N+1, completes the send
// once and keeps the pin without fetching it again. A repository altered after signing is
// refused. In a clean Debian 13 root the same: from the repository (verified with sqv), on
// libfuse3.so.4, the 1 GiB read and a send, then the upgrade under a running mount. A build
// without the repository's URL ships no apt source; lintian finds no error in the package.
// Everything is judged from outside the user's processes: apt's and dpkg's word, the root's
// mount table, the daemons' /proc, the service's own records and MD5s.
import { createHash } from 'node:crypto'
import { chmod, copyFile, mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises'
import { gzipSync } from 'node:zlib'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_LARGE_FILE_SIZE } from '../../src/emulator/demo-content.js'
import { cleanBuildDeb, withCleanBuild, type CleanBuildDeb } from '../support/clean-build.js'
import { removeTree } from '../support/fuse-cleanup.js'
import { lastCommitEpoch } from '../support/clean-copy.js'
import { DEBIAN_RELEASES, debianTarball, DebianRoot, missingHostTools, type DebianRelease, type RootRunResult } from './debian-root.js'
import { explain, host, makeReleaseKey, release, startRepositoryServer, stopAgent, type HostRun, type Released, type ReleaseKey, type RepositoryServer } from './apt-repository.js'
import { startRootService, type RootService } from './root-service.js'
import { mountOwnFile, namespacePid, rootUser, runningImage, snapshot, waitFor, type RootUser, type StatusEntry, type TransferJson } from './root-user.js'

/** What the root gets on top of minbase: `man` (which `systemd-analyze verify` runs too, for Documentation=man:) and systemd-analyze. */
const INCLUDE = ['man-db', 'systemd']
const USER = 'ada'
const HOME = `/home/${USER}`
const MOUNT = `${HOME}/Transfers`
/** Inside the root: the built packages, readable by apt's own user. */
const DEBS = '/tmp/debs'
/** Inside the root: the current .deb unpacked with dpkg-deb, which the local service runs from, untouched by apt. */
const SERVICE_TREE = '/opt/transferfs-service'
/** What a clean Debian has none of, and the package must not bring: it carries its own Node. */
const TOOLCHAIN = ['node', 'nodejs', 'npm', 'npx', 'cc', 'gcc', 'c++', 'g++', 'make', 'git']

function skipReason(): string | null {
  if (process.platform !== 'linux') return `runs on Linux only (this is ${process.platform})`
  if (process.getuid?.() !== 0) return `needs root to unpack a Debian root, chroot into it and make its /dev/fuse (running as uid ${process.getuid?.()})`
  return null
}
const SKIP = skipReason()
if (SKIP) console.warn(`test/package/deb: skipped: ${SKIP}`)

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`
const md5 = (data: Buffer): string => createHash('md5').update(data).digest('hex')

type Built = Released
/** What the package ships for apt, and what the repository's root publishes for the first-time steps. */
const KEYRING = '/usr/share/keyrings/transferfs-archive-keyring.gpg'
const SOURCES = '/etc/apt/sources.list.d/transferfs.sources'
/** The FUSE addons the package ships, for Debian 12's libfuse3.so.3 and Debian 13's libfuse3.so.4. */
const ADDON_SO3 = '/usr/lib/transferfs/prebuilds/linux-x64/libfuse3.so.3.node'
const ADDON_SO4 = '/usr/lib/transferfs/prebuilds/linux-x64/libfuse3.so.4.node'

interface MailEntry {
  kind: string
  to: string
  transferid: string
}

describe.skipIf(SKIP !== null)(`the .deb on a clean Debian 12${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let work = ''
  let root: DebianRoot | undefined
  /** A clean Debian 13 root: the package from the repository, on libfuse3.so.4. */
  let trixie: DebianRoot | undefined
  let current: Built
  let older: Built
  /** `npm run package` (no --repo-url) in the same clean copy: its .deb, once built, and how long it took. */
  let plainBuild: Promise<{ built: CleanBuildDeb; ms: number }> | undefined
  let lintian: HostRun
  let key: ReleaseKey | undefined
  let repo: RepositoryServer | undefined
  /** The repository after version N (older) was released into it, and the same after N+1 (current). */
  let repoN = ''
  let repoN1 = ''
  let service: RootService | undefined

  const ada = rootUser(() => root!, USER, MOUNT)
  const { asRoot, asUser, transferfs, sh, mountLog, explainMount, mounted, daemons, json, status, info } = ada
  const mountAsUser = ada.mount
  const unmountAsUser = ada.unmount
  /** The same user on the Debian 13 root, mounting at the same place there. */
  const ada13 = rootUser(() => trixie!, USER, MOUNT)

  /** The service's test controls (docs/local-service.md), from this machine. */
  const control = <T>(method: 'GET' | 'POST' | 'DELETE', route: string, body?: unknown): Promise<T> => service!.control<T>(method, route, body)
  const recipientMail = async (to: string): Promise<MailEntry[]> => (await control<MailEntry[]>('GET', '/mail')).filter((m) => m.kind === 'recipient' && m.to === to)

  /** The pins (one): kept in full. */
  const pinnedAll = async (): Promise<boolean> => {
    const pins = (await status()).pins?.entries ?? []
    return pins.length === 1 && pins[0]!.state === 'pinned' && pins[0]!.bytesCached === pins[0]!.bytesTotal
  }

  /** What a user's folders hold once they have signed in, read and sent (paths in the root; a trailing / is a folder with something in it). */
  const USER_CONTENT = [`${ada.folders.config}/tokens.json`, `${ada.folders.config}/config.json`, `${ada.folders.cache}/chunks/`, `${ada.folders.data}/sent.jsonl`]
  /** The snapshot holds each of wants: evidence that comparing it says something. */
  const expectUserContent = (taken: Map<string, string>, wants: string[]): void => {
    const names = [...taken.keys()]
    for (const want of wants.map((w) => w.slice(1))) {
      expect(names.some((n) => (want.endsWith('/') ? n.startsWith(want) && n !== want.slice(0, -1) : n === want)), `${want} in\n${names.join('\n')}`).toBe(true)
    }
  }

  /**
   * The user's mount lists its folders and a transfer's files, and reads one it has not read
   * before (a file of a few MiB, not of the transfer skipped: the pinned one) with the service's
   * MD5. With sealed, the installed /usr/lib/transferfs is closed to the user meanwhile: a mount
   * that loaded a file of the installation late (after an upgrade, the new version's, into the
   * old version's code) fails there.
   */
  const listsAndReads = async (user: RootUser, opts: { skip?: string; sealed?: boolean } = {}): Promise<void> => {
    const file = (await user.inboxFiles()).filter((f) => f.id !== opts.skip && f.filesize > 0 && f.filesize < 20 * 1024 * 1024).sort((a, b) => b.filesize - a.filesize)[0]
    expect(file, 'a file under 20 MiB in the demo inbox').toBeDefined()
    const want = (await user.info(file!.id)).files?.find((f) => f.filename === file!.filename)?.md5
    expect(want).toMatch(/^[0-9a-f]{32}$/)
    const installed = user.host('/usr/lib/transferfs')
    const mode = (await stat(installed)).mode & 0o7777
    if (opts.sealed) await chmod(installed, 0o700)
    try {
      const ls = await user.sh('ls -1 "$1" && echo --- && ls -1 "$1/by-id/$2" && echo --- && stat -c %s "$1/by-id/$2/$3" && echo --- && md5sum "$1/by-id/$2/$3"', MOUNT, file!.id, file!.filename)
      expect(ls.code, await user.explainMount('ls, stat and md5sum through the mount', ls)).toBe(0)
      const [top, transfer, size, sum] = ls.stdout.split('---\n').map((part) => part.trim().split('\n'))
      expect(top).toEqual(expect.arrayContaining(['by-id', 'outbox', 'sent']))
      expect(transfer).toContain(file!.filename)
      expect(size).toEqual([String(file!.filesize)])
      expect(sum![0]!.split(' ')[0], await user.mountLog()).toBe(want)
    } finally {
      if (opts.sealed) await chmod(installed, mode)
    }
  }

  /** The user reads the inbox's biggest file, the demo's 1 GiB one, through their mount: md5sum there gives the service's MD5. */
  const readsTheLargeFile = async (user: RootUser, where: string): Promise<void> => {
    const biggest = (await user.inboxFiles()).reduce((a, b) => (b.filesize > a.filesize ? b : a))
    // Many chunks (50 MiB each), so the read goes through fetch, verify and the caches over and over.
    expect(biggest.filesize).toBe(DEMO_LARGE_FILE_SIZE)
    const want = (await user.info(biggest.id)).files?.find((f) => f.filename === biggest.filename)?.md5
    expect(want).toMatch(/^[0-9a-f]{32}$/)
    const started = Date.now()
    expect(await user.md5Through(biggest.id, biggest.filename), await user.mountLog()).toBe(want)
    console.log(`deb: ${where}: read ${(biggest.filesize / 1024 / 1024).toFixed(0)} MiB through the mount in ${seconds(Date.now() - started)}`)
  }

  /**
   * The user copies a file of random bytes into outbox/<to>/ of their mount: it moves to sent/,
   * and the service holds one transfer with the same bytes, mailed to the recipient once.
   */
  const sendsOnce = async (user: RootUser, to: string): Promise<void> => {
    const make = await user.sh('head -c 3000000 /dev/urandom > "$HOME/to-send.bin" && mkdir "$1/outbox/$2" && cp "$HOME/to-send.bin" "$1/outbox/$2/"', MOUNT, to)
    expect(make.code, await user.explainMount('cp into outbox/', make)).toBe(0)
    const data = await readFile(user.host(`${user.home}/to-send.bin`))

    let entry: StatusEntry | undefined
    const done = await waitFor(async () => {
      entry = (await user.status()).entries.find((e) => e.name === `${to}/to-send.bin`)
      return entry?.state === 'done' && !!entry.transferid
    }, 90_000, 500)
    expect(done, `not sent within 90 s: ${JSON.stringify(entry)}${await user.mountLog()}`).toBe(true)
    const id = entry!.transferid!

    const sent = await user.info(id)
    expect(sent.status).toBe('STATUS_COMPLETE')
    expect(sent.files?.map((f) => ({ name: f.filename, size: f.filesize, md5: f.md5 }))).toEqual([{ name: 'to-send.bin', size: data.length, md5: md5(data) }])
    expect((await recipientMail(to)).map((m) => m.transferid)).toEqual([id])

    const left = await user.sh('find "$1/outbox" -type f', MOUNT)
    expect({ code: left.code, files: left.stdout.trim() }).toEqual({ code: 0, files: '' })
    const sentList = await user.sh('ls -1 "$1/sent"', MOUNT)
    expect(sentList.stdout.split('\n').filter((n) => n.endsWith(`(${id})`)), explain('ls sent/', sentList)).toHaveLength(1)
  }

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
    // `npm run package` as whoever builds the .deb themselves runs it: no repository. Judged by
    // a test of its own, it runs beside lintian and the tests before that one. It is the clean
    // build's .deb (cleanBuildDeb): test/package/file-managers.test.ts installs the same file,
    // and may have built it already.
    const started = Date.now()
    plainBuild = cleanBuildDeb().then((built) => ({ built, ms: Date.now() - started }))
    plainBuild.catch(() => {})
    lintian = await lint(current.file)
    console.log(`deb: lintian took ${seconds(Date.now() - started)}, npm run package beside it`)
  }

  /** lintian on a package; it leaves files in its temporary folder: this run's own, removed with it. */
  async function lint(file: string): Promise<HostRun> {
    const lintianTmp = path.join(work, 'lintian-tmp')
    await mkdir(lintianTmp)
    return host('lintian', [file], { timeoutMs: 300_000, env: { TMPDIR: lintianTmp } })
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
    service = await startRootService(root!, [`${SERVICE_TREE}/usr/lib/transferfs/node/bin/node`, `${SERVICE_TREE}/usr/lib/transferfs/dist/src/cli/main.js`, 'serve', '--demo', '--controls'], USER)
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
    // It builds in the clean build, under its lock.
    await plainBuild?.catch(() => {})
    await trixie?.close()
    await root?.close()
    await repo?.close()
    if (key) await stopAgent(key)
    await service?.close()
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
      `deb: ${path.basename(current.file)}: ${(bytes / 1e6).toFixed(1)} MB (${bytes} bytes) compressed (xz -${process.env.DPKG_DEB_COMPRESSOR_LEVEL ?? 6}); Installed-Size ${installedKiB} KiB (${(installedKiB / 1024).toFixed(1)} MiB)`,
    ].join('\n'))
  }, 400_000)

  it('reads the 1 GiB demo file byte for byte (md5sum in the root = the service\'s MD5)', async () => {
    expect(await mounted(), 'no mount (an earlier test failed)').toBe(true)
    await readsTheLargeFile(ada, 'Debian 12')
  }, 300_000)

  it('sends a file copied into outbox/: it moves to sent/, and the service holds it with the same bytes', async () => {
    expect(await mounted(), 'no mount (an earlier test failed)').toBe(true)
    await sendsOnce(ada, `deb-send-${process.pid}@example.com`)
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
    const before = await snapshot(root!, Object.values(ada.folders))
    expectUserContent(before, USER_CONTENT)
    const r = await asRoot(['apt', action, '-y', 'transferfs'])
    expect(r.code, explain(`apt ${action}`, r)).toBe(0)
    expect(r.stdout).toMatch(/^Removing transferfs \(/m)
    // Nothing of it is left but, after a remove, its one conffile (the apt source), as dpkg
    // keeps every package's; a purge takes that too. No maintainer script ran.
    expect(await dpkgStatus('transferfs')).toBe(action === 'remove' ? 'deinstall ok config-files' : '')
    const left = await asRoot(['sh', '-c', `ls -d /usr/bin/transferfs /usr/lib/transferfs /sbin/mount.transferfs /usr/lib/systemd/user/transferfs@.service /usr/share/doc/transferfs ${KEYRING} ${SOURCES} 2>/dev/null; true`])
    expect(left.stdout).toBe(action === 'remove' ? `${SOURCES}\n` : '')
    expect(await snapshot(root!, Object.values(ada.folders))).toEqual(before)
  }

  it('apt remove leaves the user\'s config, cache and data folders byte for byte', async () => {
    await removesOnlyThePackage('remove')
  }, 120_000)

  /** apt-get update: exit 0, the repository's InRelease fetched and verified, no warning. */
  const aptUpdate = async (user: RootUser): Promise<void> => {
    const update = await user.asRoot(['apt-get', 'update'])
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
    await aptUpdate(ada)
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

  /** What the upgrade under a running mount (Debian 12) leaves for the test after it to judge. */
  let held: { to: string; id: string; data: Buffer } | undefined
  let pinned: { id: string; filename: string; md5: string } | undefined
  /** The mount daemon N started, as this machine numbers it. */
  let daemonN: number | undefined

  it('N, mounted, leaves a send unfinished and a pin fetched; N+1 released into the same repository: apt upgrade installs it under the running mount and leaves the user\'s config, cache and data folders as they were', async () => {
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
    held = { to, id: entry!.transferid!, data }

    // A pin, fetched in full by N: the smallest transfer of the inbox that has bytes.
    const inbox = await json<TransferJson[]>('transferfs inbox --json', await transferfs('inbox', '--json'))
    const smallest = inbox.map((x) => ({ id: x.id, size: (x.files ?? []).reduce((a, f) => a + f.filesize, 0) })).filter((x) => x.size > 0).sort((a, b) => a.size - b.size)[0]
    expect(smallest, 'a transfer with bytes in the demo inbox').toBeDefined()
    const pinnedFile = (await info(smallest!.id)).files!.find((f) => f.filesize > 0)!
    const pin = await transferfs('pin', `${MOUNT}/by-id/${smallest!.id}`)
    expect(pin.code, await explainMount('transferfs pin', pin)).toBe(0)
    expect(await waitFor(pinnedAll, 90_000, 500), `the pin was not fetched within 90 s: ${JSON.stringify((await status()).pins)}${await mountLog()}`).toBe(true)
    pinned = { id: smallest!.id, filename: pinnedFile.filename, md5: pinnedFile.md5 }
    expect(await recipientMail(to)).toEqual([])

    const running = await daemons()
    expect(running, 'one mount daemon').toHaveLength(1)
    daemonN = running[0]!
    expect(await runningImage(root!, daemonN)).toEqual({ runtime: 'installed', addons: { [ADDON_SO3]: 'installed' } })

    repo!.serve(repoN1)
    await aptUpdate(ada)
    const upgradable = await asRoot(['apt', 'list', '--upgradable'])
    expect(upgradable.stdout, explain('apt list --upgradable', upgradable)).toContain(`transferfs/stable ${current.version} amd64 [upgradable from: ${older.version}]`)
    // The user's folders just before and just after the upgrade, the mount running: the same,
    // file by file, but for what the mount itself writes as it runs, judged apart below.
    const ownFile = mountOwnFile(ada.folders.data)
    const before = await snapshot(root!, Object.values(ada.folders), ownFile)
    expectUserContent(before, [...USER_CONTENT, `${ada.folders.data}/journal/`, `${ada.folders.data}/outbox/${to}/held.bin`, `${ada.folders.data}/pins.json`])
    const logBefore = await readFile(root!.host(ada.mountLogFile))
    // What `apt upgrade` does for it, without the root's other packages (Debian's updates since its tarball was made).
    const upgrade = await asRoot(['apt-get', 'install', '--only-upgrade', '-y', 'transferfs'])
    const after = await snapshot(root!, Object.values(ada.folders), ownFile)
    expect(upgrade.code, explain('apt-get install --only-upgrade transferfs', upgrade)).toBe(0)
    expect(upgrade.stdout).toContain(`Unpacking transferfs (${current.version}) over (${older.version})`)
    expect(`${upgrade.stdout}\n${upgrade.stderr}`).not.toMatch(/Configuration file/)
    expect(after).toEqual(before)
    // The mount's own files: its log only grew, and the status file is still the one its daemon writes.
    const logAfter = await readFile(root!.host(ada.mountLogFile))
    expect(logAfter.subarray(0, logBefore.length).equals(logBefore), `${ada.mountLogFile} was rewritten, not appended to`).toBe(true)
    const written = JSON.parse(await readFile(root!.host(ada.statusFile), 'utf8')) as { pid?: number; running?: boolean }
    expect({ pid: written.pid, running: written.running }).toEqual({ pid: await namespacePid(daemonN), running: true })
    expect((await transferfs('--version')).stdout.trim()).toBe(current.version)
  }, 400_000)

  it('the mount N made goes on under N+1 (a listing, a read with the service\'s MD5) until it is mounted again; the next mount runs N+1: the send completes once, the pin stays with nothing fetched again', async () => {
    expect(held && pinned && daemonN, 'no upgrade under a running mount (the test before failed)').toBeTruthy()
    const { to, id: heldId, data } = held!
    // Still N's daemon, running N's runtime and addon, which dpkg has replaced under it.
    expect(await mounted(), `N's mount is gone after the upgrade${await mountLog()}`).toBe(true)
    expect(await daemons()).toEqual([daemonN])
    expect(await runningImage(root!, daemonN!)).toEqual({ runtime: 'replaced', addons: { [ADDON_SO3]: 'replaced' } })
    await listsAndReads(ada, { skip: pinned!.id, sealed: true })
    // Uploads are still refused: N has not sent it either.
    expect(await recipientMail(to)).toEqual([])
    await unmountAsUser()

    await control('DELETE', '/faults')
    await control('POST', '/counters/reset')
    await mountAsUser()
    const [daemon] = await daemons()
    expect(daemon).not.toBe(daemonN)
    expect(await runningImage(root!, daemon!)).toEqual({ runtime: 'installed', addons: { [ADDON_SO3]: 'installed' } })
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
    expect(await ada.md5Through(pinned!.id, pinned!.filename)).toBe(pinned!.md5)
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

  it('a build without --repo-url (`npm run package`) ships neither the repository\'s key nor its source, and has no conffile', async () => {
    const waited = Date.now()
    const { built, ms } = await plainBuild!
    console.log(`deb: npm run package took ${seconds(built.buildMs)}${built.buildMs === 0 ? ' (built already)' : ''}, ready after ${seconds(ms)} (this test waited ${seconds(Date.now() - waited)} for it)`)
    const plain = built.file
    expect(path.basename(plain)).toBe(`transferfs_${current.version}_amd64.deb`)
    const listing = await host('dpkg-deb', ['--contents', plain])
    expect(listing.code, explain('dpkg-deb --contents', listing)).toBe(0)
    const files = listing.stdout.split('\n').filter(Boolean).map((l) => l.replace(/^.* \.\//, '/').replace(/ -> .*$/, ''))
    expect(files).toContain('/usr/bin/transferfs')
    expect(files.filter((f) => f.startsWith('/etc/') || f.startsWith('/usr/share/keyrings/'))).toEqual([])
    // Its control part has no conffiles (the release build's one is its apt source, checked above), and no maintainer scripts.
    const control = await host('dpkg-deb', ['--info', plain])
    expect(control.stdout.match(/^ +\d+ bytes, +\d+ lines +\S+/gm)?.map((l) => l.trim().split(/ +/).at(-1)).sort()).toEqual(['control', 'md5sums'])
    // Nor the lintian override that only the source needs.
    const overrides = await host('sh', ['-c', 'dpkg-deb --fsys-tarfile "$1" | tar -xOf - ./usr/share/lintian/overrides/transferfs', 'sh', plain])
    expect(overrides.code, explain('the lintian overrides', overrides)).toBe(0)
    expect(overrides.stdout).not.toContain('package-installs-apt-sources')
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
  /** The mount daemon N started on Debian 13, as this machine numbers it. */
  let daemon13N: number | undefined
  /** ms: Debian 13's apt install of N, and then sign-in and mount. */
  let install13Ms = 0
  let mounted13Ms = 0

  /** On Debian 13 the daemon maps the libfuse3.so.4 addon, none other, and the system's libfuse 3, whose soname is libfuse3.so.4. */
  const runsOnLibfuse3so4 = async (pid: number, image: 'installed' | 'replaced'): Promise<void> => {
    expect(await runningImage(trixie!, pid)).toEqual({ runtime: image, addons: { [ADDON_SO4]: image } })
    // 3.17 keeps the file name libfuse3.so.3.17.x; its soname says libfuse3.so.4.
    const maps = await readFile(`/proc/${pid}/maps`, 'utf8')
    const libraries = [...new Set([...maps.matchAll(/(\/usr\/lib\/x86_64-linux-gnu\/libfuse3?\.so\.[\d.]+)$/gm)].map((m) => m[1]!))]
    expect(libraries).toHaveLength(1)
    const elf = await host('readelf', ['-d', trixie!.host(libraries[0]!)])
    expect(elf.stdout, explain(`readelf -d ${libraries[0]}`, elf)).toContain('Library soname: [libfuse3.so.4]')
  }

  it('Debian 13: from the same repository (apt verifies it with sqv), apt install transferfs installs N; a normal user mounts on libfuse3.so.4 with its addon, reads the 1 GiB demo file right and sends once', async () => {
    const t = trixie!
    const asT = ada13.asRoot
    expect(await readFile(t.host('/etc/debian_version'), 'utf8')).toMatch(/^13\./)
    // Debian 13's apt checks signatures with sqv, which refuses SHA-1 self-signatures; gpgv is not there to fall back on.
    expect((await asT(['sh', '-c', 'command -v sqv; command -v gpgv; true'])).stdout).toBe('/usr/bin/sqv\n')
    repo!.serve(repoN)
    for (const [name, dest] of [[path.basename(KEYRING), KEYRING], [path.basename(SOURCES), SOURCES]] as const) {
      const got = await asT(['/usr/lib/apt/apt-helper', 'download-file', `${repo!.url}${name}`, dest])
      expect(got.code, explain(`apt-helper download-file ${name}`, got)).toBe(0)
    }
    await aptUpdate(ada13)
    const installStarted = Date.now()
    const install = await asT(['apt', 'install', '-y', 'transferfs'])
    install13Ms = Date.now() - installStarted
    expect(install.code, explain('apt install transferfs (Debian 13)', install)).toBe(0)
    expect(install.stdout).toContain(`Unpacking transferfs (${older.version})`)
    expect((await asT(['dpkg-query', '-W', '-f=${Status}', 'libfuse3-4'])).stdout).toBe('install ok installed')

    // Signed in to the service the Debian 12 root runs (the same machine's network), trusting its CA.
    const { baseUrl, apiKey, ca, user } = service!.announcement
    await copyFile(root!.host(ca), t.host('/tmp/service-ca.pem'))
    await chmod(t.host('/tmp/service-ca.pem'), 0o644)
    const signInStarted = Date.now()
    for (const [k, v] of [['apiUrl', baseUrl], ['apiKey', apiKey], ['ca', '/tmp/service-ca.pem']] as const) {
      const set = await ada13.transferfs('config', 'set', k, v)
      expect(set.code, explain(`transferfs config set ${k} (Debian 13)`, set)).toBe(0)
    }
    const login = await ada13.asUser(['transferfs', 'login', '--email', user.email, '--password-stdin'], { input: `${user.password}\n` })
    expect(login.code, explain('transferfs login (Debian 13)', login)).toBe(0)
    // fusermount3 3.17 unmounts through /etc/mtab, which an installed Debian 13 has (systemd-tmpfiles
    // links it to /proc/self/mounts at boot) and a root that never booted lacks.
    const mtab = await asT(['sh', '-c', '[ -e /etc/mtab ] || ln -s ../proc/self/mounts /etc/mtab'])
    expect(mtab.code, explain('/etc/mtab', mtab)).toBe(0)
    await ada13.mount()
    mounted13Ms = Date.now() - signInStarted
    const running = await ada13.daemons()
    expect(running, 'one mount daemon in the Debian 13 root').toHaveLength(1)
    daemon13N = running[0]!
    await runsOnLibfuse3so4(daemon13N, 'installed')

    await readsTheLargeFile(ada13, 'Debian 13')
    await sendsOnce(ada13, `deb13-send-${process.pid}@example.com`)
  }, 600_000)

  it('Debian 13: N+1 released: apt upgrade installs it under the running mount, which lists and reads right until it is mounted again; the next mount runs N+1, on libfuse3.so.4', async () => {
    expect(daemon13N, 'no Debian 13 mount of N (the test before failed)').toBeDefined()
    repo!.serve(repoN1)
    await aptUpdate(ada13)
    const upgrade = await ada13.asRoot(['apt-get', 'install', '--only-upgrade', '-y', 'transferfs'])
    expect(upgrade.code, explain('apt-get install --only-upgrade transferfs (Debian 13)', upgrade)).toBe(0)
    expect(upgrade.stdout).toContain(`Unpacking transferfs (${current.version}) over (${older.version})`)
    expect(`${upgrade.stdout}\n${upgrade.stderr}`).not.toMatch(/Configuration file/)
    expect((await ada13.transferfs('--version')).stdout.trim()).toBe(current.version)

    // N's daemon, on the files dpkg replaced under it, goes on.
    expect(await ada13.mounted(), `N's mount is gone after the upgrade${await ada13.mountLog()}`).toBe(true)
    expect(await ada13.daemons()).toEqual([daemon13N])
    await runsOnLibfuse3so4(daemon13N!, 'replaced')
    await listsAndReads(ada13, { sealed: true })
    await ada13.unmount()

    await ada13.mount()
    const [daemon] = await ada13.daemons()
    expect(daemon).not.toBe(daemon13N)
    await runsOnLibfuse3so4(daemon!, 'installed')
    await ada13.unmount()
    console.log(`deb: Debian 13: apt install → mounted: ${seconds(install13Ms + mounted13Ms)} (apt install ${seconds(install13Ms)}, then config set × 3 + login + mount ${seconds(mounted13Ms)})`)
  }, 400_000)
})
