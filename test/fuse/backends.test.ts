// The mount on each FUSE library: the addon of the library asked for is the one loaded
// (its shared object is mapped into the daemon), max_background and congestion_threshold
// reach the kernel through the INIT reply, and what the JS side relies on holds on both:
// the real mtime from utimens, an overwrite arriving as a truncate, rename, many ops in flight.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { findMount } from '../../src/fuse/mountinfo.js'
import { mountCore, run, startDaemon, tempDir, TEST_MOUNT_SETTINGS, useMounts } from '../support/mount.js'
import { gathering } from './fixtures/cores.js'

useMounts()

const DAEMON = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/daemon.ts')
/** The shared object each library's addon links. */
const LIBRARY_FILE = { libfuse3: /\/libfuse3\.so\.\d/, libfuse2: /\/libfuse\.so\.2/ }

describe.each(['libfuse3', 'libfuse2'] as const)('on %s', (library) => {
  it('loads that library, gives the kernel max_background, and keeps times, truncates and renames', async () => {
    const dir = path.join(await tempDir(), 'mnt')
    const log = path.join(path.dirname(dir), 'daemon.log')
    const pid = await startDaemon(DAEMON, dir, log, { TRANSFERFS_FUSE_LIBRARY: library, TRANSFERFS_MAX_BACKGROUND: '40' })
    const maps = await readFile(`/proc/${pid}/maps`, 'utf8')
    expect(maps).toMatch(LIBRARY_FILE[library])
    expect(maps).not.toMatch(LIBRARY_FILE[library === 'libfuse3' ? 'libfuse2' : 'libfuse3'])
    expect(await readFile(log, 'utf8')).toContain(`(${library})`)

    // fusectl shows what the kernel took from the INIT reply; systemd mounts it at boot, a bare machine may not have it.
    if ((await run('mountpoint', ['-q', '/sys/fs/fuse/connections'])).code !== 0) {
      expect((await run('mount', ['-t', 'fusectl', 'none', '/sys/fs/fuse/connections'])).code).toBe(0)
    }
    const conn = `/sys/fs/fuse/connections/${(await findMount(dir))!.minor}`
    expect((await readFile(`${conn}/max_background`, 'utf8')).trim()).toBe('40')
    expect((await readFile(`${conn}/congestion_threshold`, 'utf8')).trim()).toBe('30')

    const file = path.join(dir, 'hello.txt')
    expect((await run('cat', [file])).stdout).toBe(`hello from ${pid}\n`)
    expect((await run('touch', ['-d', '@1577934245', file])).code).toBe(0)
    expect((await run('stat', ['-c', '%Y', file])).stdout.trim()).toBe('1577934245')
    // An overwrite through O_TRUNC must empty the file first on both (libfuse 3 would otherwise fold it into open).
    expect((await run('sh', ['-c', `printf x > '${file}'`])).code).toBe(0)
    expect((await run('cat', [file])).stdout).toBe('x')
    expect((await run('mv', [file, path.join(dir, 'moved.txt')])).code).toBe(0)
    expect((await run('cat', [path.join(dir, 'moved.txt')])).stdout).toBe('x')
  })
})

describe(`on ${TEST_MOUNT_SETTINGS.fuseLibrary} (this run's library)`, () => {
  it('keeps 30 reads in flight at once (each op waits for JS in a worker of its own)', async () => {
    const m = await mountCore(gathering(30, { files: Array.from({ length: 30 }, (_, i) => [`/f${i}`, `file ${i}`] as [string, string]) }))
    const cats = await Promise.all(Array.from({ length: 30 }, (_, i) => run('cat', [path.join(m.dir, `f${i}`)])))
    expect(cats.map((c) => c.stdout)).toEqual(Array.from({ length: 30 }, (_, i) => `file ${i}`))
    expect(await m.inspect('core.most')).toBe(30)
  })
})
