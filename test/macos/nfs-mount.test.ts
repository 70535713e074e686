// `transferfs mount` and `unmount` on macOS, run on Linux: this is not a Mac. The platform is
// given through TRANSFERFS_PLATFORM=darwin, and the macOS commands the front runs (mount_nfs,
// mount, umount, diskutil) are stand-ins on PATH (test/support/macos-tools/): the stand-in
// mount_nfs checks its options and reaches the real server on the port they name with
// libnfs's nfs-ls and nfs-cat, a client we did not write. The commands run with a preload that
// fails any lookup of the FUSE addon, so the macOS front is shown to need none.
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { cli, login, useAccount, useOneFile, type Account } from '../mount/harness.js'
import { isAlive, REPO, run, waitFor, waitForExit } from '../support/mount.js'
import { libnfs, listedNames, nfsUrl } from '../nfs/harness.js'

const TOOLS = path.join(REPO, 'test/support/macos-tools')
const NO_FUSE = path.join(REPO, 'test/support/no-fuse-native.cjs')
const FILE = 'cut.mov'
const SIZE = 2 * 1024 * 1024 + 4321
const world = useOneFile(FILE, SIZE, 77, 'Grade for the Mac')

let account: Account
let state = ''
/** Daemons this file started: stopped at the end whatever happened. */
const daemons = new Set<number>()

beforeAll(async () => {
  account = await useAccount(world.service, {
    TRANSFERFS_PLATFORM: 'darwin',
    PATH: `${TOOLS}:${process.env.PATH ?? ''}`,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${NO_FUSE}`.trim(),
    MACOS_TOOLS_CAT: `/by-id/${world.transferId}/${FILE}`,
  })
  await login(world.service)
}, 120_000)

beforeEach(async () => {
  // Each test's own records of what the stand-ins were asked.
  state = await mkdtemp(path.join(os.tmpdir(), 'transferfs-test-macos-'))
  process.env.MACOS_TOOLS_STATE = state
  delete process.env.MACOS_TOOLS_FAIL
  delete process.env.MACOS_TOOLS_BUSY
})

afterEach(async () => {
  await rm(state, { recursive: true, force: true })
})

afterAll(async () => {
  for (const pid of daemons) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // Ended already.
    }
  }
})

const lines = async (name: string): Promise<string[]> => (await readFile(path.join(state, name), 'utf8').catch(() => '')).split('\n').filter(Boolean)

/** `transferfs mount DIR` as on a Mac; the daemon's pid and the port mount_nfs was given. */
async function mountMac(): Promise<{ pid: number; port: number }> {
  const r = await cli(['mount', account.mountDir])
  expect(r.code, r.stderr).toBe(0)
  const pid = Number(/\(process (\d+)/.exec(r.stdout)?.[1])
  daemons.add(pid)
  const call = (await lines('mount_nfs.calls'))[0] ?? ''
  return { pid, port: Number(/port=(\d+)/.exec(call)?.[1]) }
}

describe('transferfs mount on macOS (Linux, acting as macOS)', () => {
  it('serves the tree and runs mount_nfs with its options; unmount runs umount and the server ends', async () => {
    const { pid, port } = await mountMac()
    expect(await lines('mount_nfs.calls')).toEqual([
      `-o vers=3,tcp,port=${port},mountport=${port},resvport,nolocks,locallocks,rsize=1048576,wsize=1048576 127.0.0.1:/ ${account.mountDir}`,
    ])
    // What libnfs read through the server while mount_nfs ran.
    expect(listedNames(await readFile(path.join(state, 'ls'), 'utf8')).sort()).toEqual(['.status', 'by-id', 'inbox', 'outbox', 'search', 'sent'])
    expect(createHash('md5').update(await readFile(path.join(state, 'cat'))).digest('hex')).toBe(world.md5)
    // It serves on once mount has returned.
    const inbox = await libnfs('nfs-ls', nfsUrl(port, '/inbox'))
    expect(inbox.code, inbox.stderr).toBe(0)
    expect(inbox.stdout).toContain(`(${world.transferId})`)

    const u = await cli(['unmount', account.mountDir])
    expect(u.code, u.stderr).toBe(0)
    expect(await lines('umount.calls')).toEqual([account.mountDir])
    // unmount returns once the server has ended, as a FUSE mount's daemon does.
    expect(await isAlive(pid)).toBe(false)
    const log = await readFile(path.join(account.home, 'data', 'mount.log'), 'utf8')
    expect(log).toMatch(new RegExp(`was unmounted: stopping the NFS server of ${account.mountDir}`))
    expect((await libnfs('nfs-ls', nfsUrl(port, '/'), { timeoutMs: 10_000 })).code).not.toBe(0)
    expect(existsSync(path.join(state, 'fuse-native-loaded'))).toBe(false)
  })

  it('a busy mount stays mounted and served, and says so; an unmount by anyone else (an eject in Finder) then ends the server', async () => {
    const { pid, port } = await mountMac()
    process.env.MACOS_TOOLS_BUSY = '1'
    const busy = await cli(['unmount', account.mountDir])
    expect(busy.code).not.toBe(0)
    expect(busy.stderr).toMatch(/is busy: close the files/)
    expect(await lines('umount.calls')).toEqual([account.mountDir])
    expect(await lines('diskutil.calls')).toEqual([`unmount ${account.mountDir}`])
    expect(await isAlive(pid)).toBe(true)
    expect((await libnfs('nfs-ls', nfsUrl(port, '/'))).code).toBe(0)
    delete process.env.MACOS_TOOLS_BUSY
    const eject = await run(path.join(TOOLS, 'umount'), [account.mountDir])
    expect(eject.code, eject.stderr).toBe(0)
    expect(await waitForExit(pid, 20_000)).toBe(true)
  })

  it('when mount_nfs fails, mount says its words and leaves no server behind', async () => {
    process.env.MACOS_TOOLS_FAIL = 'Operation not permitted'
    const r = await cli(['mount', account.mountDir])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/cannot mount .*: mount_nfs: can't mount \/ from 127\.0\.0\.1 onto .*: Operation not permitted/)
    const left = async () => (await run('pgrep', ['-f', `mount ${account.mountDir} --foreground`])).stdout.trim() === ''
    expect(await waitFor(left, 10_000)).toBe(true)
    expect(existsSync(path.join(state, 'fuse-native-loaded'))).toBe(false)
  })
})
