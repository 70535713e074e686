// The mount on each FUSE library: the addon of the library asked for is the one loaded
// (its shared object is mapped into the daemon), max_background and congestion_threshold
// reach the kernel through the INIT reply, and what the JS side relies on holds on both:
// the real mtime from utimens, an overwrite arriving as a truncate, rename, many ops in flight.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { Bytes } from '../../src/read/bytes.js'
import { findMount } from '../../src/fuse/mountinfo.js'
import { mountCore, run, startDaemon, tempDir, TEST_MOUNT_SETTINGS, useMounts } from '../support/mount.js'
import { MemoryCore } from './fixtures/memory-core.js'

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

/** Holds every read until `want` are waiting at once (or a second has passed), and counts the most seen. */
class GatheringCore extends MemoryCore {
  waiting = 0
  most = 0
  private readonly wakers: Array<() => void> = []

  constructor(private readonly want: number) {
    super()
  }

  override async read(path: string, fh: number, position: number, length: number): Promise<Bytes> {
    this.most = Math.max(this.most, ++this.waiting)
    if (this.waiting >= this.want) for (const wake of this.wakers.splice(0)) wake()
    else await new Promise<void>((resolve) => (this.wakers.push(resolve), setTimeout(resolve, 1000)))
    this.waiting--
    return super.read(path, fh, position, length)
  }
}

describe(`on ${TEST_MOUNT_SETTINGS.fuseLibrary} (this run's library)`, () => {
  it('keeps 30 reads in flight at once (each op waits for JS in a worker of its own)', async () => {
    const core = new GatheringCore(30)
    for (let i = 0; i < 30; i++) core.addFile(`/f${i}`, `file ${i}`)
    const m = await mountCore(core)
    const cats = await Promise.all(Array.from({ length: 30 }, (_, i) => run('cat', [path.join(m.dir, `f${i}`)])))
    expect(cats.map((c) => c.stdout)).toEqual(Array.from({ length: 30 }, (_, i) => `file ${i}`))
    expect(core.most).toBe(30)
  })
})
