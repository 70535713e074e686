// transferfs as a package: `npm pack` in a clean clone gives a tarball with the compiled code, the README,
// docs and contrib (no tests, no TypeScript sources); `npm install -g` of it into a fresh
// prefix gives a `transferfs` command that signs in, mounts the local service, reads a file
// right and unmounts. Installed with --ignore-scripts (no patched FUSE addon), the mount
// refuses and names the command to run. Installed with no compiler where the FUSE addon must
// be built (as on an Apple silicon Mac, for which fuse-native ships no prebuilt addon), the
// install still succeeds without it, and the macOS front (run here as test/macos/ does, with
// stand-ins for macOS's commands: this is not a Mac) mounts through NFS.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isMounted, REPO, run, tempDir, unmountAll, waitFor, type RunResult } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { withCleanBuild } from '../support/clean-build.js'
import { bytes, putTransfer } from '../cli/harness.js'
import { serviceClient } from '../mount/harness.js'

let service: TestService
let work = ''
let tarball = ''

/** A program run to its end in `env` (at most `timeoutMs`). */
function runIn(file: string, args: string[], env: NodeJS.ProcessEnv, opts: { cwd?: string; input?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { env, cwd: opts.cwd, timeout: opts.timeoutMs ?? 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }))
    if (opts.input !== undefined) child.stdin?.end(opts.input)
  })
}

/** The installed command, run with folders of its own and the service's settings (and `extraEnv`). */
function installed(prefix: string, home: string, args: string[], input?: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  const env = {
    ...process.env,
    TRANSFERFS_API_URL: service.baseUrl, TRANSFERFS_API_KEY: service.apiKey, TRANSFERFS_CA: service.ca,
    TRANSFERFS_CONFIG_DIR: path.join(home, 'config'), TRANSFERFS_CACHE_DIR: path.join(home, 'cache'), TRANSFERFS_DATA_DIR: path.join(home, 'data'),
    ...extraEnv,
  }
  return runIn(path.join(prefix, 'bin', 'transferfs'), args, env, { cwd: home, input })
}

beforeAll(async () => {
  service = await startTestService()
  work = await tempDir('transferfs-test-pack-')
  // As a clean clone builds it (the run's one clean build, shared with test/package/deb.test.ts).
  const pack = await withCleanBuild((clone) => run('npm', ['pack', '--pack-destination', work], { timeoutMs: 400_000, cwd: clone }))
  if (pack.code !== 0) throw new Error(`npm pack in a clean clone: ${pack.stderr}`)
  tarball = path.join(work, (await readdir(work)).find((n) => n.endsWith('.tgz'))!)
}, 600_000)

afterAll(async () => {
  await unmountAll()
  await service?.close()
})

describe('the package', () => {
  it('holds the compiled code, README, docs and contrib, and neither tests nor TypeScript sources', async () => {
    const list = (await run('tar', ['tzf', tarball])).stdout.split('\n').filter(Boolean).map((l) => l.replace(/^package\//, ''))
    expect(list).toContain('dist/src/cli/main.js')
    expect(list).toContain('README.md')
    expect(list.some((l) => l.startsWith('docs/'))).toBe(true)
    expect(list.some((l) => l.startsWith('contrib/'))).toBe(true)
    expect(list).toContain('scripts/build-fuse-addon.mjs')
    expect(list).toContain('patches/fuse-native+2.2.6.patch')
    expect(list).toContain('prebuilds/linux-x64/libfuse.so.2.node')
    expect(list).toContain('prebuilds/linux-x64/libfuse3.so.3.node')
    expect(list).toContain('prebuilds/linux-x64/libfuse3.so.4.node')
    expect(list.filter((l) => l.startsWith('test/'))).toEqual([])
    expect(list.filter((l) => l.endsWith('.ts') && !l.endsWith('.d.ts'))).toEqual([])
  })

  it('installs into a fresh prefix, and the installed command signs in, mounts, reads and unmounts', async () => {
    const prefix = path.join(work, 'prefix')
    const install = await run('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', tarball], { timeoutMs: 400_000 })
    expect(install.code, install.stderr).toBe(0)
    const help = await run(path.join(prefix, 'bin', 'transferfs'), ['--help'])
    expect(help.code, help.stderr).toBe(0)
    expect(help.stdout).toMatch(/mount/)

    const client = await serviceClient(service)
    const data = bytes(3 * 1024 * 1024, 5)
    const t = await putTransfer(client, [{ name: 'packed.bin', data }], { to: [service.user.email] })
    await client.close()
    const home = path.join(work, 'home')
    await mkdir(home, { recursive: true })
    const login = await installed(prefix, home, ['login', '--email', service.user.email, '--password-stdin'], `${service.user.password}\n`)
    expect(login.code, login.stderr).toBe(0)
    const mnt = path.join(home, 'mnt')
    try {
      const mounted = await installed(prefix, home, ['mount', mnt])
      expect(mounted.code, mounted.stderr).toBe(0)
      expect(await isMounted(mnt)).toBe(true)
      const sum = await run('md5sum', [path.join(mnt, 'by-id', t.id, 'packed.bin')])
      expect(sum.stdout.split(' ')[0], sum.stderr).toBe(createHash('md5').update(data).digest('hex'))
      const unmounted = await installed(prefix, home, ['unmount', mnt])
      expect(unmounted.code, unmounted.stderr).toBe(0)
      expect(await waitFor(async () => !(await isMounted(mnt)), 10_000)).toBe(true)
    } finally {
      if (await isMounted(mnt)) await run('fusermount', ['-uz', mnt])
    }
  })

  it('installed without its install scripts, mount refuses and names the command that patches the addon', async () => {
    const prefix = path.join(work, 'prefix-no-scripts')
    const install = await run('npm', ['install', '-g', '--ignore-scripts', '--prefix', prefix, '--no-audit', '--no-fund', tarball], { timeoutMs: 400_000 })
    expect(install.code, install.stderr).toBe(0)
    const home = path.join(work, 'home2')
    await mkdir(home, { recursive: true })
    const mnt = path.join(home, 'mnt')
    const r = await installed(prefix, home, ['mount', mnt])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/build-fuse-addon\.mjs/)
    expect(await isMounted(mnt)).toBe(false)
  })

  it('installs with no compiler where the FUSE addon must be built: fuse-native is left out, and the macOS front mounts without it', async () => {
    // What a Mac without Xcode's command line tools has: make and python3 that only ask to install them.
    const noCompiler = path.join(work, 'no-compiler')
    await mkdir(noCompiler, { recursive: true })
    for (const tool of ['make', 'cc', 'gcc', 'g++', 'c++', 'python3', 'python']) {
      await writeFile(path.join(noCompiler, tool), '#!/bin/sh\necho "xcode-select: note: No developer tools were found, requesting install." >&2\nexit 1\n', { mode: 0o755 })
    }
    const prefix = path.join(work, 'prefix-no-compiler')
    // build_from_source: fuse-native builds its addon, as where it ships none for the machine.
    const { PYTHON: _python, npm_config_python: _npmPython, ...env } = process.env
    const install = await runIn('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', tarball],
      { ...env, PATH: `${noCompiler}:${process.env.PATH ?? ''}`, npm_config_build_from_source: 'true' }, { timeoutMs: 400_000 })
    expect(install.code, install.stderr).toBe(0)
    expect(existsSync(path.join(prefix, 'lib', 'node_modules', 'transferfs', 'node_modules', 'fuse-native'))).toBe(false)

    const client = await serviceClient(service)
    const data = bytes(1024 * 1024 + 99, 6)
    const t = await putTransfer(client, [{ name: 'mac.bin', data }], { to: [service.user.email] })
    await client.close()
    const home = path.join(work, 'home3')
    await mkdir(home, { recursive: true })
    const login = await installed(prefix, home, ['login', '--email', service.user.email, '--password-stdin'], `${service.user.password}\n`)
    expect(login.code, login.stderr).toBe(0)
    const mnt = path.join(home, 'mnt')
    const linux = await installed(prefix, home, ['mount', mnt])
    expect(linux.code).not.toBe(0)
    expect(linux.stderr).toMatch(/the optional package fuse-native\) is not installed/)

    const state = await mkdtemp(path.join(work, 'macos-tools-'))
    const mac = {
      TRANSFERFS_PLATFORM: 'darwin', PATH: `${path.join(REPO, 'test/support/macos-tools')}:${process.env.PATH ?? ''}`,
      MACOS_TOOLS_STATE: state, MACOS_TOOLS_CAT: `/by-id/${t.id}/mac.bin`,
    }
    const mounted = await installed(prefix, home, ['mount', mnt], undefined, mac)
    expect(mounted.code, mounted.stderr).toBe(0)
    try {
      expect(createHash('md5').update(await readFile(path.join(state, 'cat'))).digest('hex')).toBe(createHash('md5').update(data).digest('hex'))
    } finally {
      const unmounted = await installed(prefix, home, ['unmount', mnt], undefined, mac)
      expect(unmounted.code, unmounted.stderr).toBe(0)
    }
  })
})
