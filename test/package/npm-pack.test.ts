// transferfs as a package: `npm pack` in a clean clone gives a tarball with the compiled code, the README,
// docs and contrib (no tests, no TypeScript sources); `npm install -g` of it into a fresh
// prefix gives a `transferfs` command that signs in, mounts the local service, reads a file
// right and unmounts. Installed with --ignore-scripts (no patched FUSE addon), the mount
// refuses and names the command to run.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, readdir } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isMounted, run, tempDir, unmountAll, waitFor, type RunResult } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { withCleanBuild } from '../support/clean-build.js'
import { bytes, putTransfer } from '../cli/harness.js'
import { serviceClient } from '../mount/harness.js'

let service: TestService
let work = ''
let tarball = ''

/** The installed command, run with folders of its own and the service's settings. */
function installed(prefix: string, home: string, args: string[], input?: string): Promise<RunResult> {
  const env = {
    ...process.env,
    TRANSFERFS_API_URL: service.baseUrl, TRANSFERFS_API_KEY: service.apiKey, TRANSFERFS_CA: service.ca,
    TRANSFERFS_CONFIG_DIR: path.join(home, 'config'), TRANSFERFS_CACHE_DIR: path.join(home, 'cache'), TRANSFERFS_DATA_DIR: path.join(home, 'data'),
  }
  return new Promise((resolve) => {
    const child = execFile(path.join(prefix, 'bin', 'transferfs'), args, { env, cwd: home, timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }))
    if (input !== undefined) child.stdin?.end(input)
  })
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
})
