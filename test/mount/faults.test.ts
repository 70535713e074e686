// The read path through a real mount against a misbehaving service: damaged bodies are
// never handed out, a dead file server gives EIO in bounded time while the mount stays
// usable, and peeking at the start of files costs little (the service's byte counter).
import { readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { run } from '../support/mount.js'
import { filesBelow, login, md5OfFile, mount, transferFolder, useAccount, useDemoMount } from './harness.js'

const MiB = 1024 * 1024
const world = useDemoMount()

describe('reads against a misbehaving service', () => {
  // First: it needs files nobody has read yet in this mount.
  it('reading the first 4 KiB of 300 small files and of the 1 GiB file fetches far less than 50 MiB each', async () => {
    const logs = await transferFolder(world.account.mountDir, world.bySubject('Sensor logs').id)
    const small = await filesBelow(logs)
    expect(small.length).toBe(300)
    const bigT = world.bySubject('Disk image')
    const big = path.join(await transferFolder(world.account.mountDir, bigT.id), bigT.files[0]!.filename!)

    await world.service.controls.resetCounters()
    const peek = await run('bash', ['-c', 'for f in "$@"; do head -c 4096 "$f" > /dev/null || exit 1; done', 'bash', ...small.map((f) => f.abs)], { timeoutMs: 60_000 })
    expect(peek.code, peek.stderr).toBe(0)
    const smallBytes = (await world.service.controls.counters()).bytesServed
    await world.service.controls.resetCounters()
    const head = await run('head', ['-c', '4096', big])
    expect(head.code, head.stderr).toBe(0)
    expect(head.stdout.length).toBeGreaterThan(0)
    const bigBytes = (await world.service.controls.counters()).bytesServed
    console.log(`first 4 KiB: ${(smallBytes / 300 / 1024).toFixed(1)} KiB fetched per small file (${smallBytes} bytes for 300), ${(bigBytes / MiB).toFixed(2)} MiB for the 1 GiB file`)
    const smallTotal = world.bySubject('Sensor logs').files.reduce((n, f) => n + (f.filesize ?? 0), 0)
    // Small files are fetched whole at most once; the large one only around its head.
    expect(smallBytes).toBeLessThanOrEqual(smallTotal)
    expect(bigBytes).toBeGreaterThan(0)
    expect(bigBytes).toBeLessThan(8 * MiB)
  })

  it('with corrupted download bodies, reads return exactly the right bytes', async () => {
    const t = world.bySubject('Database export')
    const folder = await transferFolder(world.account.mountDir, t.id)
    await world.service.controls.resetCounters()
    await world.service.controls.fault({ route: 'download', kind: 'corrupt', probability: 0.5 })
    try {
      for (const f of t.files) expect(await md5OfFile(path.join(folder, f.filename!)), f.filename!).toBe(f.md5)
      // The large file's bytes past its head, against the service's own range hash.
      const bigT = world.bySubject('Disk image')
      const big = path.join(await transferFolder(world.account.mountDir, bigT.id), bigT.files[0]!.filename!)
      const start = 200 * MiB
      const length = 12 * MiB
      const r = await run('bash', ['-c', `dd if="$1" bs=1M skip=${start / MiB} count=${length / MiB} status=none | md5sum`, 'bash', big], { timeoutMs: 60_000 })
      expect(r.code, r.stderr).toBe(0)
      const expected = await world.client.download.rangeHash({ downloadUrl: bigT.files[0]!.downloadurl, transferId: bigT.id, fileName: bigT.files[0]!.filename!, position: start, length })
      expect(r.stdout.split(' ')[0]).toBe(expected)
    } finally {
      await world.service.controls.clearFaults()
    }
    // Damaged answers were really there and were fetched again.
    const downloads = (await world.service.controls.counters()).routes.download ?? 0
    expect(downloads).toBeGreaterThan(t.files.length + 1)
  })

  it('with every download failing, reads fail with EIO in bounded time and the mount stays usable', async () => {
    // A mount of its own, whose read deadline (what bounds the failing read) is short: the
    // shared one's is long enough to ride out the corrupt bodies above.
    const account = await useAccount(world.service, { TRANSFERFS_READ_TIMEOUT_MS: '5s' })
    await login(world.service)
    await mount(account)
    const t = world.bySubject('Quarterly report')
    const folder = await transferFolder(account.mountDir, t.id)
    const cached = path.join(folder, 'report.txt')
    const cachedBytes = await readFile(cached)
    const uncached = path.join(folder, 'summary.pdf')
    await world.service.controls.fault({ route: 'download', kind: 'status', status: 503, count: 1_000_000 })
    try {
      const r = await run('cat', [uncached], { timeoutMs: 60_000, encoding: 'latin1' })
      expect(r.code).not.toBe(0)
      expect(r.stderr).toMatch(/input\/output error/i)
      const ls = await run('ls', ['-l', path.join(account.mountDir, 'inbox'), folder])
      expect(ls.code, ls.stderr).toBe(0)
      expect(ls.stdout).toContain('summary.pdf')
      // A new reader of what was read before: served from the caches, not the service.
      const again = await run('md5sum', [cached])
      expect(again.code, again.stderr).toBe(0)
      expect(again.stdout.split(' ')[0]).toBe(t.files.find((f) => f.filename === 'report.txt')!.md5)
      expect(cachedBytes.length).toBe((await stat(cached)).size)
    } finally {
      await world.service.controls.clearFaults()
    }
    // Once the service is back, the same file reads.
    expect(await md5OfFile(uncached)).toBe(t.files.find((f) => f.filename === 'summary.pdf')!.md5)
  })
})
