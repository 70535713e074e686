// A reader that stops takes its prefetch with it: after `head -c 94M` of a large cold file
// exits, the file's last handle is released and its fetches ahead of what was read end,
// their connections closed, so the service serves no more than a chunk's worth past what was
// read. Through the local service's emulated slow link, where a prefetch running on would
// still be streaming long after the reader has gone; the service's byte counters tell. The
// read ends 6 MiB before a chunk's end, so the prefetch of the next whole chunk is under way
// when head exits: run on, it would serve more than a chunk past the read.
import { createHash } from 'node:crypto'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULT_SETTINGS } from '../../src/config/settings.js'
import { DEFAULT_READ_OPTIONS } from '../../src/read/options.js'
import { bytes } from '../cli/harness.js'
import { run, useMounts } from '../support/mount.js'
import type { Counters } from '../support/service.js'
import { login, mount, useAccount, useOneFile } from './harness.js'

const MiB = 1024 * 1024
/**
 * Past the read and all a prefetch may keep ahead of it (prefetchBytes, in whole chunks), so the
 * file's end is never within reach: more would only make the set-up longer.
 */
const SIZE = 256 * MiB
const READ = 94 * MiB
const SEED = 13
/** The link the figures were measured through: 12.5 MB/s shared, a 256 KiB burst, 20 ms per request. */
const LINK = { bytesPerSecond: 12.5e6, burstBytes: 256 * 1024, latencyMs: 20 }

const world = useOneFile('large.bin', SIZE, SEED, 'prefetch stop')

useMounts()

const root = process.getuid?.() === 0

/**
 * The service's counters once no byte has been served for two seconds. A prefetch running on
 * keeps them moving, so this waits it out (up to a bound well past the time the link needs
 * for everything a reader may keep ahead). Not by requests in flight: the service counts a
 * request given up during its added latency as in flight for good.
 */
async function settled(boundMs = 40_000): Promise<Counters> {
  const until = Date.now() + boundMs
  let last = await world.service.controls.counters()
  let still = 0
  while (Date.now() < until && still < 8) {
    await new Promise((r) => setTimeout(r, 250))
    const now = await world.service.controls.counters()
    still = now.bytesServed === last.bytesServed ? still + 1 : 0
    last = now
  }
  return last
}

describe('a reader that stops', () => {
  // The kernel's own readahead (a normal user's mount) and the one a root mount sets.
  const readaheads = [0, DEFAULT_SETTINGS.readAheadKb].filter((kb) => kb === 0 || root)
  it.each(readaheads)('readAheadKb %i: after head -c 94M exits, at most a chunk more is served, through a slow link', async (kb) => {
    // The chunk holding the furthest byte a prefetch may reach lies inside the file.
    expect(SIZE).toBeGreaterThanOrEqual(READ + DEFAULT_READ_OPTIONS.prefetchBytes + DEFAULT_READ_OPTIONS.chunkSize)
    // A fresh account: a new mount (no page cache of the file) and an empty disk cache.
    const account = await useAccount(world.service, { TRANSFERFS_READ_AHEAD_KB: String(kb) })
    await login(world.service)
    await mount(account)
    const file = path.join(account.mountDir, 'by-id', world.transferId, 'large.bin')
    expect((await run('stat', [file])).code).toBe(0)

    await world.service.controls.throttle(LINK)
    try {
      await world.service.controls.resetCounters()
      const head = await run('bash', ['-c', 'head -c "$2" "$1" | md5sum', 'bash', file, String(READ)], { timeoutMs: 120_000 })
      expect(head.code, head.stderr).toBe(0)
      expect(head.stdout.split(' ')[0]).toBe(createHash('md5').update(bytes(READ, SEED)).digest('hex'))
      const c = await settled()
      expect(c.bytesServed, JSON.stringify(c)).toBeGreaterThanOrEqual(READ)
      // The kernel's readahead past the read and the pieces in flight when the handle went:
      // well within one chunk. A prefetch that ran on would serve the next chunk whole.
      expect(c.bytesServed, JSON.stringify(c)).toBeLessThanOrEqual(READ + DEFAULT_READ_OPTIONS.chunkSize)
    } finally {
      await world.service.controls.clearFaults()
    }
  }, 240_000)
})
