// A buffered `cat` of a cold file through a real mount, at the default readahead and at the
// largest the mount takes. The kernel's readahead sends its requests several at a time, out
// of order and, on libfuse 3, cut at odd sizes; whatever it sends, each byte is fetched once
// and hashed once by the service, and the range streams reuse their connections. The
// service's counters tell. Readahead above the kernel's default is set under /sys: as root.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULT_SETTINGS, READ_AHEAD_KB_BY_LIBRARY } from '../../src/config/settings.js'
import { run, useMounts } from '../support/mount.js'
import { login, mount, useAccount, useOneFile } from '../mount/harness.js'

const MiB = 1024 * 1024
const SIZE = 300 * MiB

const world = useOneFile('big.bin', SIZE, 7, 'readahead')

useMounts()

const root = process.getuid?.() === 0
/**
 * KiB: the kernel takes any readahead written under /sys/class/bdi (it reads back as
 * written; 1 GiB was tried), so the largest here is 1 GiB, past any file it reads.
 */
const LARGEST_READ_AHEAD_KB = 1024 * 1024

describe('a buffered cold read at the kernel readahead the mount sets', () => {
  // What the default gives on either library, and the largest.
  const sizes = [...new Set([...Object.values(READ_AHEAD_KB_BY_LIBRARY), LARGEST_READ_AHEAD_KB])]
  it.runIf(root).each(sizes)('readAheadKb %i: every byte served once, hashed once, on few connections', async (kb) => {
    // A fresh account: a new mount (no page cache of the file) and an empty disk cache.
    const account = await useAccount(world.service, { TRANSFERFS_READ_AHEAD_KB: String(kb) })
    await login(world.service)
    await mount(account)
    const file = path.join(account.mountDir, 'by-id', world.transferId, 'big.bin')
    expect((await run('stat', [file])).code).toBe(0)
    // The readahead the kernel really uses for this mount, or the test would prove nothing.
    const dev = (await run('mountpoint', ['-d', account.mountDir])).stdout.trim()
    expect(Number((await readFile(`/sys/class/bdi/${dev}/read_ahead_kb`, 'utf8')).trim())).toBe(kb)

    await world.service.controls.resetCounters()
    const r = await run('bash', ['-c', 'cat "$1" | md5sum', 'bash', file], { timeoutMs: 120_000 })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.split(' ')[0]).toBe(world.md5)
    const c = await world.service.controls.counters()
    const figures = { served: c.bytesServed / SIZE, hashed: c.bytesHashed / SIZE, connections: c.fileConnections }
    expect(figures.served, JSON.stringify(c)).toBeLessThanOrEqual(1.02)
    expect(figures.hashed, JSON.stringify(c)).toBeLessThanOrEqual(1.02)
    expect(figures.connections, JSON.stringify(c)).toBeLessThanOrEqual(2 * DEFAULT_SETTINGS.maxConcurrentFetches)
  }, 240_000)
})
