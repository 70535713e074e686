// The mount's life as a process: ready signal, SIGTERM, SIGKILL then remount,
// external unmount, a failed background start; and a mounted core's tuning and clean
// unmount (the mount's own unmount, asked of its daemon).
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { DEFAULT_SETTINGS, READ_AHEAD_KB_BY_LIBRARY } from '../../src/config/settings.js'
import { startBackgroundMount } from '../../src/fuse/background.js'
import { findMount } from '../../src/fuse/mountinfo.js'
import { unmountWithHelper } from '../../src/fuse/mount-helper.js'
import { autoUnmountHelpers, DEAD_MOUNT, isMounted, mountCore, run, startDaemon, tempDir, TS_REGISTER, useMounts, waitForExit } from '../support/mount.js'
import { AUTO_UNMOUNT_OPTION, fusermount3Version } from './fixtures/fusermount3.js'
import { memory } from './fixtures/cores.js'

useMounts()

const DAEMON = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/daemon.ts')

describe('mount daemon', () => {
  it('is ready when started, and SIGTERM unmounts it and ends it', async () => {
    const dir = path.join(await tempDir(), 'mnt')
    const log = path.join(path.dirname(dir), 'daemon.log')
    const pid = await startDaemon(DAEMON, dir, log)
    expect((await run('cat', [path.join(dir, 'hello.txt')])).stdout).toBe(`hello from ${pid}\n`)
    expect((await findMount(dir))?.fsType).toBe('fuse.transferfs')

    process.kill(pid, 'SIGTERM')
    expect(await waitForExit(pid, 15_000)).toBe(true)
    expect(await isMounted(dir)).toBe(false)
    expect(await readFile(log, 'utf8')).toContain(`SIGTERM: unmounting ${dir}`)
  })

  it('after a SIGKILL, the same folder mounts again', async () => {
    const dir = path.join(await tempDir(), 'mnt')
    const first = await startDaemon(DAEMON, dir)
    process.kill(first, 'SIGKILL')
    expect(await waitForExit(first)).toBe(true)

    const second = await startDaemon(DAEMON, dir)
    expect(second).not.toBe(first)
    const cat = await run('cat', [path.join(dir, 'hello.txt')])
    expect(cat).toMatchObject({ code: 0, stdout: `hello from ${second}\n` })
  })

  it('a stale mount (daemon and its auto_unmount helper both killed) is cleaned before mounting', async () => {
    const dir = path.join(await tempDir(), 'mnt')
    const pid = await startDaemon(DAEMON, dir)
    const helper = (await autoUnmountHelpers(dir))[0] ?? 0
    // libfuse 3.17 run as root mounts by itself and starts the helper only to watch, with an
    // option fusermount3 before 3.15 refuses: with such a helper (the project libfuse3.17 on
    // Debian 12) there is none to kill, and the mount is left behind all the same.
    if (!(process.env.TRANSFERFS_TEST_LIBFUSE3_17 && (await fusermount3Version()) < AUTO_UNMOUNT_OPTION)) {
      expect(helper).toBeGreaterThan(0)
      process.kill(helper, 'SIGKILL')
      await waitForExit(helper)
    }
    process.kill(pid, 'SIGKILL')
    await waitForExit(pid)
    const stale = await run('ls', [dir])
    expect(stale.stderr).toMatch(DEAD_MOUNT)

    const m = await mountCore(memory({ files: [['/again.txt', 'again']] }), { dir })
    expect((await run('cat', [path.join(m.dir, 'again.txt')])).stdout).toBe('again')
  })

  it('ends itself when someone else unmounts it', async () => {
    const dir = path.join(await tempDir(), 'mnt')
    const log = path.join(path.dirname(dir), 'daemon.log')
    const pid = await startDaemon(DAEMON, dir, log)
    expect((await unmountWithHelper(dir)).ok).toBe(true)
    expect(await waitForExit(pid, 15_000)).toBe(true)
    expect(await readFile(log, 'utf8')).toContain('unmounted by someone else')
  })

  it('a background start reports the mount error', async () => {
    const file = path.join(await tempDir(), 'not-a-folder')
    await writeFile(file, 'x')
    await expect(startBackgroundMount({ args: [DAEMON, file], execArgv: ['--import', TS_REGISTER], readyTimeoutMs: 30_000 })).rejects.toThrow(
      /cannot mount .*not a directory/i,
    )
    expect(await isMounted(file)).toBe(false)
  })
})

describe('a mounted core', () => {
  it('unmount waits for the core shutdown and leaves no mount behind', async () => {
    const m = await mountCore(memory({ files: [['/a.txt', 'a']] }))
    expect((await run('cat', [path.join(m.dir, 'a.txt')])).stdout).toBe('a')
    await m.unmount()
    expect(await m.inspect('core.shutdownCalled')).toBe(true)
    expect(await isMounted(m.dir)).toBe(false)
    expect(await m.inspect('ended')).toBe('unmounted')
  })

  it('raises the kernel readahead when root', async () => {
    if (process.getuid?.() !== 0) return
    const m = await mountCore(memory(), { settings: { readAheadKb: 2048 } })
    const entry = await findMount(m.dir)
    const kb = await readFile(`/sys/class/bdi/${entry!.major}:${entry!.minor}/read_ahead_kb`, 'utf8')
    expect(kb.trim()).toBe('2048')
  })

  it('by default gives a root mount the readahead of its library', async () => {
    if (process.getuid?.() !== 0) return
    expect(DEFAULT_SETTINGS.readAheadKb).toBe(-1)
    const m = await mountCore(memory(), { settings: { readAheadKb: DEFAULT_SETTINGS.readAheadKb } })
    const entry = await findMount(m.dir)
    const kb = await readFile(`/sys/class/bdi/${entry!.major}:${entry!.minor}/read_ahead_kb`, 'utf8')
    expect(Number(kb.trim())).toBe(READ_AHEAD_KB_BY_LIBRARY[m.backend as keyof typeof READ_AHEAD_KB_BY_LIBRARY])
  })

  it('a second mount on a live mount fails and leaves the first one working', async () => {
    const m = await mountCore(memory({ files: [['/a.txt', 'a']] }))
    await expect(mountCore(memory(), { dir: m.dir })).rejects.toThrow(/cannot mount/)
    expect((await run('cat', [path.join(m.dir, 'a.txt')])).stdout).toBe('a')
  })
})
