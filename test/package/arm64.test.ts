// The arm64 package, as a Raspberry Pi, an ARM laptop or an ARM server gets it, run here under
// emulation. `npm run release -- --arch arm64` publishes it into a signed repository (a test
// key, served over http://127.0.0.1) whose binary-arm64 index lists it. The arm64 .deb carries
// the Node.js project's arm64 build of this Node version and three FUSE addons cross-built for
// AArch64, each needing its library's soname; it depends on the packages the amd64 one does;
// lintian finds no error or warning in it. A clean Debian 12 arm64 root (mmdebstrap, kept as a
// tarball in the build cache), whose every program qemu-user runs through binfmt_misc
// (emulation.ts), adds the repository as the README says and installs transferfs with apt; a
// normal user runs the package's `transferfs serve --demo` (started from the .deb unpacked
// beside the system while apt installs), signs in to it, mounts, reads a file with the
// service's MD5, sends one that arrives once, and unmounts. Everything is judged from outside
// the user's processes: apt's word, the root's mount table, the daemon's mapped files, the
// service's records and MD5s. The time of each phase is printed.
//
// It runs in CI beside deb.test.ts, on the core npm-pack.test.ts leaves idle, so it is kept to
// little CPU: only the arm64 package is built (in a copy of the run's clean build, with the
// cross-built addons and the arm64 Node from the build cache), every command in the root costs
// an emulated Node start (several CPU-seconds), so the user's settings come from the
// environment (TRANSFERFS_API_URL, ...) rather than three `config set`s, and the service's
// records and mail are read from here.
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { withCleanBuildCopy } from '../support/clean-build.js'
import { lastCommitEpoch } from '../support/clean-copy.js'
import { removeTree } from '../support/fuse-cleanup.js'
import { explain, host, makeReleaseKey, releaseArchitectures, startRepositoryServer, stopAgent, type HostRun, type Released, type ReleaseKey, type RepositoryServer } from './apt-repository.js'
import { debianTarball, DebianRoot, missingHostTools, type RootRunOptions, type RootRunResult } from './debian-root.js'
import { ensureArm64Emulation, type Emulation } from './emulation.js'
import { startRootService, type RootService } from './root-service.js'

const USER = 'ada'
const HOME = `/home/${USER}`
const MOUNT = `${HOME}/Transfers`
const KEYRING = '/usr/share/keyrings/transferfs-archive-keyring.gpg'
const SOURCES = '/etc/apt/sources.list.d/transferfs.sources'
/** Inside the root: the arm64 .deb unpacked with dpkg-deb, which the local service runs from. */
const SERVICE_TREE = '/opt/transferfs-service'
const ADDONS = ['libfuse.so.2', 'libfuse3.so.3', 'libfuse3.so.4']
/** ms: every command in the root runs under emulation, several times slower than natively. */
const SLOW = 300_000

function skipReason(): string | null {
  if (process.platform !== 'linux' || process.arch !== 'x64') return `cross-builds and emulates arm64 on Linux amd64 only (this is ${process.platform} ${process.arch})`
  if (process.getuid?.() !== 0) return `needs root to register qemu with binfmt_misc, unpack a Debian root and chroot into it (running as uid ${process.getuid?.()})`
  // Without qemu this machine cannot run an arm64 program at all (the bootstrap of npm test installs it on Debian).
  const dirs = `${process.env.PATH ?? ''}:/usr/bin:/usr/local/bin`.split(':').filter(Boolean)
  if (!dirs.some((dir) => existsSync(path.join(dir, 'qemu-aarch64-static')))) return 'no qemu-aarch64-static (package qemu-user-static) to run arm64 programs with'
  return null
}
const SKIP = skipReason()
if (SKIP) console.warn(`test/package/arm64: skipped: ${SKIP}`)

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`
const md5 = (data: Buffer): string => createHash('md5').update(data).digest('hex')

async function waitFor(cond: () => Promise<boolean>, timeoutMs: number, stepMs = 500): Promise<boolean> {
  const end = Date.now() + timeoutMs
  for (;;) {
    if (await cond()) return true
    if (Date.now() > end) return false
    await new Promise((r) => setTimeout(r, stepMs))
  }
}

interface TransferJson {
  id: string
  status?: string
  files?: Array<{ filename: string; filesize: number; md5: string }>
}

describe.skipIf(SKIP !== null)(`the arm64 package, on a clean Debian 12 arm64 under qemu${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let work = ''
  let emulation: Emulation
  let key: ReleaseKey | undefined
  let repo: RepositoryServer | undefined
  let published = ''
  let arm64: Released
  /** The amd64 package's Depends, as build-deb.mjs computes them for this machine's Node and addon. */
  let amd64Depends = ''
  /** lintian of the arm64 .deb, running while the root's tests run. */
  let lintian: Promise<HostRun>
  let root: DebianRoot | undefined
  let service: RootService | undefined
  /** The user's settings, from the environment as the settings table names them: the service `serve --demo` runs. */
  let settingsEnv: Record<string, string> = {}
  const timings: string[] = []
  const phase = (what: string, started: number): void => {
    timings.push(`${what} ${seconds(Date.now() - started)}`)
  }

  const asRoot = (command: string[], opts: RootRunOptions = {}): Promise<RootRunResult> => root!.run(command, { timeoutMs: SLOW, ...opts })
  const asUser = (command: string[], opts: Omit<RootRunOptions, 'user'> = {}): Promise<RootRunResult> =>
    root!.run(command, { timeoutMs: SLOW, ...opts, env: { ...settingsEnv, ...opts.env }, user: USER })
  const transferfs = (...args: string[]): Promise<RootRunResult> => asUser(['transferfs', ...args])
  const sh = (script: string, ...args: string[]): Promise<RootRunResult> => asUser(['sh', '-c', script, 'sh', ...args])

  const mountLog = async (): Promise<string> => {
    const text = await readFile(root!.host(`${HOME}/.local/share/transferfs/mount.log`), 'utf8').catch((e: Error) => `(no mount.log: ${e.message})`)
    return `\n--- mount.log (end) ---\n${text.slice(-5000)}`
  }
  const mounted = async (): Promise<boolean> => (await root!.mounts()).some((m) => m.mountPoint === MOUNT && m.fsType === 'fuse.transferfs')
  const daemons = async (): Promise<Array<{ pid: number; cmdline: string }>> => (await root!.processes()).filter((p) => p.cmdline.includes(` mount ${MOUNT}`))
  const json = <T>(what: string, r: RootRunResult): T => {
    expect(r.code, explain(what, r)).toBe(0)
    return JSON.parse(r.stdout) as T
  }

  async function build(): Promise<void> {
    key = await makeReleaseKey(path.join(work, 'gnupg'))
    published = path.join(work, 'repo')
    const env = { SOURCE_DATE_EPOCH: await lastCommitEpoch() }
    const started = Date.now()
    // A copy of the run's one clean build of the checkout, so that the other package tests need
    // not wait for this build; the amd64 package is deb.test.ts's to build.
    await withCleanBuildCopy(async (clone) => {
      phase('clean build copied', started)
      const version = (JSON.parse(await readFile(path.join(clone, 'package.json'), 'utf8')) as { version: string }).version
      const released = Date.now();
      [arm64] = await releaseArchitectures(clone, key!, published, repo!.url, version, env, ['arm64']) as [Released]
      phase('npm run release -- --arch arm64', released)
      // What build-deb.mjs makes the amd64 package's Depends of: dpkg-shlibdeps over this Node and the clean build's libfuse3.so.3 addon.
      const stage = path.join(work, 'amd64-shlibdeps')
      await mkdir(stage)
      const depends = await host(process.execPath, ['--input-type=module', '-e', [
        "import { runtimeDependencies } from './packaging/metadata.mjs'",
        "import { hostArchitecture } from './scripts/architectures.mjs'",
        'process.stdout.write(runtimeDependencies(process.argv[1], [process.execPath, process.argv[2]], hostArchitecture()))',
      ].join('\n'), stage, path.join(clone, 'prebuilds', 'linux-x64', 'libfuse3.so.3.node')], { cwd: clone })
      if (depends.code !== 0) throw new Error(explain('the amd64 package\'s Depends (dpkg-shlibdeps)', depends))
      amd64Depends = depends.stdout.trim()
    })
    phase('build, all told', started)
    const lintianTmp = path.join(work, 'lintian-tmp')
    await mkdir(lintianTmp)
    const linted = Date.now()
    lintian = host('lintian', [arm64.file], { timeoutMs: 600_000, env: { TMPDIR: lintianTmp } }).then((r) => {
      phase('lintian (beside the root\'s tests)', linted)
      return r
    })
  }

  /** The clean arm64 root with the user added. */
  async function prepare(): Promise<void> {
    const started = Date.now()
    root = await DebianRoot.unpack(await debianTarball('bookworm', [], 'arm64'))
    phase('arm64 root (tarball made or cached, unpacked)', started)
    // dpkg syncs every file it unpacks, each sync a wait on this machine's disk that a test of
    // what the package installs does not need: as in a container image, it does not here.
    await writeFile(root.host('/etc/dpkg/dpkg.cfg.d/transferfs-test-unsafe-io'), 'force-unsafe-io\n')
    const user = await asRoot(['useradd', '--create-home', '--shell', '/bin/bash', USER])
    if (user.code !== 0) throw new Error(explain('useradd in the arm64 root', user))
    // fusermount3 unmounts through /etc/mtab, which an installed Debian has (systemd links it to
    // /proc/self/mounts) and a minbase root that never booted lacks.
    const mtab = await asRoot(['ln', '-s', '../proc/self/mounts', '/etc/mtab'])
    if (mtab.code !== 0) throw new Error(explain('/etc/mtab in the arm64 root', mtab))
    phase('arm64 root ready (useradd)', started)
  }

  beforeAll(async () => {
    const missing = missingHostTools()
    for (const [tool, pkg] of [['lintian', 'lintian'], ['readelf', 'binutils'], ['qemu-aarch64-static', 'qemu-user-static'], ['update-binfmts', 'binfmt-support'], ['arch-test', 'arch-test'],
      ['aarch64-linux-gnu-gcc', 'crossbuild-essential-arm64']]) {
      if ((await host('sh', ['-c', `command -v ${tool}`])).code !== 0) missing.push(`${tool} (${pkg})`)
    }
    if (missing.length > 0) throw new Error(`this test needs, on this machine: ${missing.join(', ')} (the bootstrap of npm test installs them)`)
    emulation = await ensureArm64Emulation()
    work = await mkdtemp(path.join(os.tmpdir(), 'transferfs-test-arm64-'))
    // Its URL goes into the package, so it listens before it is built.
    repo = await startRepositoryServer()
    // The build is CPU-bound, the root's preparation waits on the disk and the emulator: side
    // by side; both waited for even when one fails, so that afterAll finds the root to take down.
    const failed = (await Promise.allSettled([build(), prepare()])).find((r) => r.status === 'rejected')
    if (failed) throw failed.reason
    repo.serve(published)
  }, 2_400_000)

  afterAll(async () => {
    console.log(`arm64: timings: ${timings.join('; ')}`)
    await root?.close()
    await service?.close()
    // lintian is done before its folder goes (it never fails: host() resolves with its exit).
    await lintian
    await repo?.close()
    if (key) await stopAgent(key)
    if (work) await removeTree(work)
  }, 120_000)

  it('npm run release -- --arch arm64 publishes it: binary-arm64 indexes its .deb, and Release names arm64', async () => {
    const release = await readFile(path.join(published, 'dists', 'stable', 'Release'), 'utf8')
    expect(release).toMatch(/^Architectures: arm64$/m)
    const index = await readFile(path.join(published, 'dists', 'stable', 'main', 'binary-arm64', 'Packages'), 'utf8')
    const stanzas = index.trim().split(/\n\n/)
    expect(stanzas.map((s) => [/^Architecture: (.*)$/m.exec(s)?.[1], /^Filename: (.*)$/m.exec(s)?.[1]])).toEqual([['arm64', `pool/main/t/transferfs/${path.basename(arm64.file)}`]])
    expect(release).toContain(' main/binary-arm64/Packages\n')
  })

  const field = async (deb: Released, name: string): Promise<string> => (await host('dpkg-deb', ['--field', deb.file, name])).stdout.trim()

  it('the arm64 .deb: Architecture arm64 and the same dependencies as amd64\'s, the Node.js project\'s arm64 Node of the same version, three AArch64 addons each needing its soname', async () => {
    expect(await field(arm64, 'Architecture')).toBe('arm64')
    expect(await field(arm64, 'Version')).toBe(arm64.version)
    // The same packages; the lowest versions follow each architecture's symbols (libgcc-s1's differ).
    const names = (depends: string): string[] => depends.split(', ').map((d) => d.replace(/ \([^)]*\)/g, ''))
    expect(names(await field(arm64, 'Depends'))).toEqual(names(amd64Depends))
    expect(await field(arm64, 'Depends')).toMatch(/(^|, )libfuse3-3 \(>= 3\.12\.0\) \| libfuse3-4(, |$)/)

    const unpacked = path.join(work, 'arm64-unpacked')
    const x = await host('dpkg-deb', ['-x', arm64.file, unpacked])
    expect(x.code, explain('dpkg-deb -x', x)).toBe(0)
    const lib = path.join(unpacked, 'usr', 'lib', 'transferfs')
    const header = async (file: string): Promise<string> => {
      const r = await host('readelf', ['-h', file])
      expect(r.code, explain(`readelf -h ${file}`, r)).toBe(0)
      return /^\s*Machine:\s+(.*)$/m.exec(r.stdout)?.[1] ?? ''
    }
    expect(await header(path.join(lib, 'node', 'bin', 'node'))).toBe('AArch64')
    // Run here through qemu (binfmt_misc): the same Node version as the amd64 package's, which is this one.
    const version = await host(path.join(lib, 'node', 'bin', 'node'), ['--version'], { timeoutMs: 60_000 })
    expect(version.stdout.trim(), explain('the arm64 node --version', version)).toBe(process.version)
    for (const soname of ADDONS) {
      const addon = path.join(lib, 'prebuilds', 'linux-arm64', `${soname}.node`)
      expect(await header(addon)).toBe('AArch64')
      const dynamic = await host('readelf', ['-d', addon])
      const needed = [...dynamic.stdout.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1])
      expect(needed.filter((n) => n!.startsWith('libfuse')), `${soname}.node needs ${needed.join(', ')}`).toEqual([soname])
    }
    // Nothing of this machine's architecture inside.
    const listing = await host('dpkg-deb', ['--contents', arm64.file])
    expect(listing.stdout).not.toContain('linux-x64')
    console.log(`arm64: ${path.basename(arm64.file)} ${(await host('stat', ['-c', '%s', arm64.file])).stdout.trim()} bytes, Installed-Size ${await field(arm64, 'Installed-Size')} KiB`)
  }, 120_000)

  it('in the arm64 root: added as the README says, apt installs transferfs from the repository; a normal user runs transferfs serve --demo, signs in and mounts', async () => {
    expect(await readFile(root!.host('/etc/debian_version'), 'utf8')).toMatch(/^12\./)
    expect((await asRoot(['dpkg', '--print-architecture'])).stdout.trim()).toBe('arm64')
    // The service, from the package's own files, starts while apt works.
    const unpack = await host('dpkg-deb', ['-x', arm64.file, root!.host(SERVICE_TREE)])
    expect(unpack.code, explain('dpkg-deb -x', unpack)).toBe(0)
    const serviceStarted = Date.now()
    const starting = startRootService(root!, [`${SERVICE_TREE}/usr/lib/transferfs/node/bin/node`, `${SERVICE_TREE}/usr/lib/transferfs/dist/src/cli/main.js`, 'serve', '--demo', '--controls'], USER, 900_000)
      .then((s) => {
        service = s
        phase('transferfs serve --demo announced (emulated)', serviceStarted)
        return Date.now() - serviceStarted
      })
    // Awaited below; a failure before then must not go unhandled meanwhile.
    starting.catch(() => {})
    const added = Date.now()
    for (const [name, dest] of [[path.basename(KEYRING), KEYRING], [path.basename(SOURCES), SOURCES]] as const) {
      const got = await asRoot(['/usr/lib/apt/apt-helper', 'download-file', `${repo!.url}${name}`, dest])
      expect(got.code, explain(`apt-helper download-file ${name}`, got)).toBe(0)
    }
    // Debian's lists too (the tarball's may be older than a point release): tried again, as a
    // mirror caught mid-sync answers with mismatched hashes.
    let update = await asRoot(['apt-get', 'update'])
    for (let attempt = 1; attempt < 3 && update.code !== 0; attempt++) {
      await new Promise((r) => setTimeout(r, 5000))
      update = await asRoot(['apt-get', 'update'])
    }
    expect(update.code, explain('apt-get update', update)).toBe(0)
    expect(`${update.stdout}\n${update.stderr}`).not.toMatch(/^(W|E|Err):/m)
    phase('repository added, apt-get update (emulated)', added)

    const installStarted = Date.now()
    const install = await asRoot(['apt', 'install', '-y', 'transferfs'])
    const installMs = Date.now() - installStarted
    phase('apt install (emulated)', installStarted)
    expect(install.code, explain('apt install transferfs', install)).toBe(0)
    expect(install.stdout).toContain(`Unpacking transferfs (${arm64.version})`)
    expect((await asRoot(['dpkg-query', '-W', '-f=${Architecture} ${Version} ${Status}', 'transferfs'])).stdout).toBe(`arm64 ${arm64.version} install ok installed`)

    const serviceMs = await starting
    const waitedMs = Date.now() - installStarted - installMs
    const { baseUrl, apiKey, ca, user } = service!.announcement
    settingsEnv = { TRANSFERFS_API_URL: baseUrl, TRANSFERFS_API_KEY: apiKey, TRANSFERFS_CA: ca }

    const signInStarted = Date.now()
    const login = await asUser(['transferfs', 'login', '--email', user.email, '--password-stdin'], { input: `${user.password}\n` })
    expect(login.code, explain('transferfs login', login)).toBe(0)
    phase('transferfs login (emulated)', signInStarted)
    const mountStarted = Date.now()
    const mount = await sh('mkdir -p "$1" && exec transferfs mount "$1"', MOUNT)
    expect(mount.code, explain('transferfs mount', mount) + await mountLog()).toBe(0)
    phase('transferfs mount (emulated)', mountStarted)
    const signInMs = Date.now() - signInStarted
    expect(await mounted(), `not in the root's mount table${await mountLog()}`).toBe(true)

    // Debian 12's libfuse3.so.3, through the arm64 addon built for it (qemu maps the program's files as they are).
    const [daemon] = await daemons()
    expect(daemon, 'no mount daemon in the root').toBeDefined()
    const maps = await readFile(`/proc/${daemon!.pid}/maps`, 'utf8')
    expect(maps).toMatch(/\/usr\/lib\/transferfs\/prebuilds\/linux-arm64\/libfuse3\.so\.3\.node$/m)
    expect(maps).toMatch(/\/usr\/lib\/aarch64-linux-gnu\/libfuse3\.so\.3[\d.]*$/m)
    const fetched = /^Need to get (.*) of archives\.$/m.exec(install.stdout)?.[1] ?? '?'
    console.log([
      `arm64: apt install → mounted (emulated): ${seconds(installMs + signInMs)} (apt install ${seconds(installMs)}, fetching ${fetched}; then login + mount ${seconds(signInMs)});`,
      `       transferfs serve --demo announced itself ${seconds(serviceMs)} after its start, begun before the repository was added (${seconds(waitedMs)} waited for it after apt install, not counted);`,
      `       qemu: ${emulation.interpreter} (flags ${emulation.flags})`,
    ].join('\n'))
  }, 1_200_000)

  it('reads a file through the mount: md5sum in the root is the service\'s MD5', async () => {
    expect(await mounted(), 'no mount (an earlier test failed)').toBe(true)
    const listed = Date.now()
    const inbox = json<TransferJson[]>('transferfs inbox --json', await transferfs('inbox', '--json'))
    phase('transferfs inbox (emulated)', listed)
    // A smaller file is enough under emulation: the biggest demo file under 20 MiB (not the 1 GiB one).
    const file = inbox.flatMap((x) => (x.files ?? []).map((f) => ({ id: x.id, ...f }))).filter((f) => f.filesize > 0 && f.filesize < 20 * 1024 * 1024).sort((a, b) => b.filesize - a.filesize)[0]
    expect(file, 'a demo file under 20 MiB').toBeDefined()
    // The inbox lists each file with the service's MD5 (one command fewer: each takes seconds under emulation).
    const want = file!.md5
    expect(want).toMatch(/^[0-9a-f]{32}$/)
    const started = Date.now()
    const sum = await asUser(['md5sum', `${MOUNT}/by-id/${file!.id}/${file!.filename}`])
    expect(sum.code, explain('md5sum through the mount', sum) + await mountLog()).toBe(0)
    expect(sum.stdout.split(' ')[0]).toBe(want)
    phase(`md5sum of ${file!.filename} (${file!.filesize} bytes) through the mount (emulated)`, started)
  }, SLOW)

  it('sends a file copied into outbox/: it arrives once, with the same bytes', async () => {
    expect(await mounted(), 'no mount (an earlier test failed)').toBe(true)
    const to = `arm64-send-${process.pid}@example.com`
    const make = await sh('head -c 1000000 /dev/urandom > "$HOME/to-send.bin" && mkdir "$1/outbox/$2" && cp "$HOME/to-send.bin" "$1/outbox/$2/"', MOUNT, to)
    expect(make.code, explain('cp into outbox/', make) + await mountLog()).toBe(0)
    const data = await readFile(root!.host(`${HOME}/to-send.bin`))
    const started = Date.now()
    // Watched from here, through the service's mail (each command in the root takes seconds under emulation).
    const mails = async (): Promise<string[]> => (await service!.control<Array<{ kind: string; to: string; transferid: string }>>('GET', '/mail'))
      .filter((m) => m.kind === 'recipient' && m.to === to).map((m) => m.transferid)
    const arrived = await waitFor(async () => (await mails()).length > 0, 240_000, 1000)
    phase('the send, from the copy to its mail (emulated)', started)
    expect(arrived, `no mail to ${to} within 240 s${await mountLog()}`).toBe(true)
    const [id] = await mails()
    const sent = json<TransferJson>('transferfs info', await transferfs('info', id!, '--files', '--json'))
    expect(sent.status).toBe('STATUS_COMPLETE')
    expect(sent.files?.map((f) => ({ name: f.filename, size: f.filesize, md5: f.md5 }))).toEqual([{ name: 'to-send.bin', size: data.length, md5: md5(data) }])
    // Once: one mail to the recipient, for this transfer, and still one after the outbox's settle
    // time and a retry would have passed; the outbox let the file go once it was sent.
    await new Promise((r) => setTimeout(r, 6000))
    expect(await mails()).toEqual([id])
    expect(await waitFor(async () => {
      const left = await sh('find "$1/outbox" -type f', MOUNT)
      return left.code === 0 && left.stdout.trim() === ''
    }, 60_000, 2000), `the outbox still holds the sent file${await mountLog()}`).toBe(true)
  }, SLOW)

  it('`transferfs unmount` ends the mount and its daemon', async () => {
    expect(await mounted(), 'no mount (an earlier test failed)').toBe(true)
    const started = Date.now()
    const r = await transferfs('unmount', MOUNT)
    expect(r.code, explain('transferfs unmount', r) + await mountLog()).toBe(0)
    expect(await mounted()).toBe(false)
    expect(await waitFor(async () => (await daemons()).length === 0, 30_000), `the mount daemon outlived the unmount${await mountLog()}`).toBe(true)
    phase('transferfs unmount (emulated)', started)
  }, SLOW)

  it('lintian reports no error and no warning in the arm64 package (the same overrides as amd64\'s, docs/packaging.md)', async () => {
    const r = await lintian
    console.log(`arm64: lintian ${path.basename(arm64.file)} (exit ${r.code}):\n${(r.stdout + r.stderr).trim() || '(no output)'}`)
    expect(r.stdout.split('\n').filter((l) => /^[EW]: /.test(l))).toEqual([])
    expect(r.code, explain('lintian', r)).toBe(0)
  }, 600_000)
})
