// The vitest project libfuse3.17 runs the tests that mount with the libfuse 3.17 that
// scripts/build-libfuse3.sh built from Debian's source (soname libfuse3.so.4) on the loader's
// path; this file, which only that project runs, checks that they really mount with it: a
// daemon and the mount daemon of a test's own core map that prefix's libfuse3.so.4 and the prebuilt
// libfuse3.so.4 addon, and no other libfuse 3. The mount helper stays the system's setuid
// fusermount3, which may be older than the library (Debian 12's is 3.14): a normal user mounts
// through it as with the library of its own version; root mounts by itself.
import { chown, copyFile, mkdir, readFile, realpath } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { DEAD_MOUNT, isMounted, mountCore, REPO, run, startDaemon, tempDir, TS_REGISTER, useMounts, waitFor, waitForExit } from '../support/mount.js'
import { allowFuseDevice, ensureNormalUser, mountsUnder, normalUserSkipReason, removeUserFolders, runAs, userFolder, type NormalUser } from '../../scripts/support/normal-user.js'
import { AUTO_UNMOUNT_OPTION, fusermount3Version } from './fixtures/fusermount3.js'
import { memory } from './fixtures/cores.js'

useMounts()
afterAll(removeUserFolders, 60_000)

const DAEMON = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/daemon.ts')
/** The prefix vitest.config.ts put on this process's LD_LIBRARY_PATH (empty: not built). */
const PREFIX = process.env.TRANSFERFS_TEST_LIBFUSE3_17 ?? ''
const LIBDIR = path.join(PREFIX, 'lib')
const PREBUILT = path.join(REPO, 'prebuilds', `${process.platform}-${process.arch}`, 'libfuse3.so.4.node')

/** The files of libfuse 3 (the library, not an addon) and of FUSE addons mapped into a process. */
async function mapped(pid: number | 'self'): Promise<{ libfuse3: string[]; addons: string[] }> {
  const files = [...new Set((await readFile(`/proc/${pid}/maps`, 'utf8')).split('\n').map((line) => line.split(/\s+/)[5] ?? ''))]
  return { libfuse3: files.filter((f) => /\/libfuse3\.so[.\d]*$/.test(f)), addons: files.filter((f) => f.endsWith('.node') && /fuse/.test(path.basename(f))) }
}

describe('libfuse 3.17 (libfuse3.so.4) from its own prefix', () => {
  it('was on the loader\'s path when this process started, and is 3.17 or later', async () => {
    expect(PREFIX, 'libfuse 3.17 is not built: run `bash scripts/build-libfuse3.sh` (the bootstrap of npm test does)').not.toBe('')
    // /proc/self/environ is the environment this process was started with, which the loader read.
    const environ = (await readFile('/proc/self/environ', 'latin1')).split('\0')
    expect(environ.find((v) => v.startsWith('LD_LIBRARY_PATH='))?.slice('LD_LIBRARY_PATH='.length).split(':')[0]).toBe(LIBDIR)
    const version = /^Version: (\d+)\.(\d+)/m.exec(await readFile(path.join(LIBDIR, 'pkgconfig', 'fuse3.pc'), 'utf8'))
    expect(Number(version?.[1]) * 100 + Number(version?.[2])).toBeGreaterThanOrEqual(317)
  })

  it('the prebuilt libfuse3.so.4 addon links it by soname, with no run path', async () => {
    const r = await run('readelf', ['-d', PREBUILT])
    expect(r.code, r.stderr).toBe(0)
    const needed = [...r.stdout.matchAll(/\(NEEDED\).*\[(.+)\]/g)].map((m) => m[1])
    expect(needed).toContain('libfuse3.so.4')
    expect(needed).not.toContain('libfuse3.so.3')
    expect(r.stdout).not.toMatch(/\((RPATH|RUNPATH)\)/)
  })

  it('a mount daemon maps it and the .so.4 addon, and serves files', async () => {
    const dir = path.join(await tempDir(), 'mnt')
    const log = path.join(path.dirname(dir), 'daemon.log')
    const pid = await startDaemon(DAEMON, dir, log, { TRANSFERFS_FUSE_LIBRARY: 'libfuse3' })
    expect(await mapped(pid)).toEqual({ libfuse3: [await realpath(path.join(LIBDIR, 'libfuse3.so.4'))], addons: [PREBUILT] })
    expect(await readFile(log, 'utf8')).toContain('(libfuse3)')
    expect((await run('cat', [path.join(dir, 'hello.txt')])).stdout).toBe(`hello from ${pid}\n`)
  })

  it('a mount of a test\'s own core (as the other tests of this project make) uses the same', async () => {
    const m = await mountCore(memory({ files: [['/a.txt', 'a']] }))
    expect((await run('cat', [path.join(m.dir, 'a.txt')])).stdout).toBe('a')
    expect(await mapped(m.pid)).toEqual({ libfuse3: [await realpath(path.join(LIBDIR, 'libfuse3.so.4'))], addons: [PREBUILT] })
  })

  it('without it on the loader\'s path, the .so.4 addon does not load and the system\'s libfuse 3 mounts', async () => {
    const dir = path.join(await tempDir(), 'mnt')
    const pid = await startDaemon(DAEMON, dir, undefined, { TRANSFERFS_FUSE_LIBRARY: 'libfuse3', LD_LIBRARY_PATH: '' })
    const maps = await mapped(pid)
    expect(maps.libfuse3).toHaveLength(1)
    expect(maps.libfuse3[0]).not.toContain(PREFIX)
    expect(maps.addons).toHaveLength(1)
    expect(maps.addons[0]).not.toBe(PREBUILT)
    expect((await run('cat', [path.join(dir, 'hello.txt')])).stdout).toBe(`hello from ${pid}\n`)
  })

  // libfuse 3.17 run as root mounts by itself and starts the helper only to unmount when the
  // process dies, as `fusermount3 --auto-unmount -- DIR`; fuse 3.14's helper refuses that option
  // and exits, so the mount of a killed daemon stays behind dead (fuse 3.14's libfuse mounted
  // through the helper instead, auto_unmount among its options). The next mount there cleans it
  // (`force`). Debian 13 ships the library with a helper of its own version.
  it('as root, after kill -9 the mount goes where the helper knows --auto-unmount, else stays dead until the next mount', async () => {
    const dir = path.join(await tempDir(), 'mnt')
    const pid = await startDaemon(DAEMON, dir, undefined, { TRANSFERFS_FUSE_LIBRARY: 'libfuse3' })
    const knowsOption = (await fusermount3Version()) >= AUTO_UNMOUNT_OPTION
    process.kill(pid, 'SIGKILL')
    expect(await waitForExit(pid)).toBe(true)
    if (knowsOption) {
      expect(await waitFor(async () => !(await isMounted(dir)), 5000)).toBe(true)
    } else {
      expect((await run('ls', [dir])).stderr).toMatch(DEAD_MOUNT)
    }
    const m = await mountCore(memory({ files: [['/again.txt', 'again']] }), { dir })
    expect((await run('cat', [path.join(m.dir, 'again.txt')])).stdout).toBe('again')
  })

  // Not root, libfuse 3.17 mounts through the helper as 3.14's own library does, auto_unmount
  // among its options: the old helper serves it.
  const skip = normalUserSkipReason()
  it.skipIf(skip !== null)(`a normal user mounts with it through the system's setuid fusermount3, also again after kill -9${skip ? ` (skipped: ${skip})` : ''}`, async (ctx) => {
    const user = await ensureNormalUser()
    const cannot = await allowFuseDevice(user)
    if (cannot) ctx.skip(`the test user cannot mount here: ${cannot}`)
    // The user cannot enter root's cache: the library goes into a folder of the user's.
    const home = await userFolder(user)
    const libdir = path.join(home, 'lib')
    await mkdir(libdir)
    await copyFile(path.join(LIBDIR, 'libfuse3.so.4'), path.join(libdir, 'libfuse3.so.4'))
    await chown(libdir, user.uid, user.gid)
    const dir = path.join(home, 'mnt')

    const first = await startUserDaemon(user, home, libdir, dir)
    expect(await mapped(first)).toEqual({ libfuse3: [path.join(libdir, 'libfuse3.so.4')], addons: [PREBUILT] })
    // Not root, so the setuid helper made the mount, as the user's.
    const line = (await readFile('/proc/self/mountinfo', 'utf8')).split('\n').find((l) => l.split(' ')[4] === dir)
    expect(line).toContain(`user_id=${user.uid}`)

    // auto_unmount: the mount goes with the process, or stays dead where the helper checks it
    // as root (before fuse 3.15), whom the kernel keeps out of the user's mount.
    process.kill(first, 'SIGKILL')
    expect(await waitForExit(first)).toBe(true)
    if ((await fusermount3Version()) >= AUTO_UNMOUNT_OPTION) {
      expect(await waitFor(async () => !(await mountsUnder(dir)).includes(dir), 5000)).toBe(true)
    } else {
      expect((await runAs(user, 'ls', [dir])).stderr).toMatch(DEAD_MOUNT)
    }
    // The next mount of the folder cleans what is left and mounts.
    const second = await startUserDaemon(user, home, libdir, dir)
    expect(second).not.toBe(first)
  })
})

/** The test daemon as the user, in the background, with libdir on its loader's path; its pid once it serves. */
async function startUserDaemon(user: NormalUser, home: string, libdir: string, dir: string): Promise<number> {
  const log = path.join(home, 'daemon.log')
  const start = await runAs(user, 'sh', ['-c', '"$1" --import "$2" "$3" "$4" > "$5" 2>&1 & echo $!', 'sh', process.execPath, TS_REGISTER, DAEMON, dir, log], {
    env: { LD_LIBRARY_PATH: libdir, TRANSFERFS_FUSE_LIBRARY: 'libfuse3' },
  })
  const pid = Number(start.stdout.trim())
  expect(pid, start.stderr).toBeGreaterThan(0)
  const serves = async () => (await runAs(user, 'cat', [path.join(dir, 'hello.txt')])).stdout === `hello from ${pid}\n`
  expect(await waitFor(serves, 60_000, 250), await readFile(log, 'utf8').catch(() => '(no log)')).toBe(true)
  return pid
}
