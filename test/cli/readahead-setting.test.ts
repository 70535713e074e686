// The kernel readahead a mount sets is settled once its FUSE library is known, and the read
// path is tuned for that value: on libfuse 2 the default is the kernel's 128 KiB, not the
// 4 MiB libfuse 3 mounts get. Loads the libfuse 2 addon (once per test process); mounts nothing.
import { expect, it } from 'vitest'
import { readOptionsOf } from '../../src/cli/compose.js'
import { DEFAULT_SETTINGS, type Settings } from '../../src/config/settings.js'
import { mountReadAheadKb } from '../../src/fuse/mount.js'
import { DEFAULT_READ_OPTIONS } from '../../src/read/options.js'

const KiB = 1024
const loadedWith = (settings: Settings) => ({ settings, folders: { cache: '/tmp/c', data: '/tmp/d', config: '/tmp/x' } }) as never

it('on libfuse 2 the default readahead settles at 128 KiB, and the read path is tuned for that', () => {
  const settings: Settings = { ...DEFAULT_SETTINGS, fuseLibrary: 'libfuse2' }
  const kb = mountReadAheadKb(settings)
  expect(kb).toBe(128)
  // Twice the readahead, over the read path's own floor (8 MiB: twice libfuse 3's 4 MiB).
  expect(readOptionsOf(loadedWith(settings), kb).sequentialSlack).toBe(Math.max(DEFAULT_READ_OPTIONS.sequentialSlack, 2 * 128 * KiB))
})

it('a readahead set in the settings is the one the mount settles on, and the slack follows it past the floor', () => {
  const settings: Settings = { ...DEFAULT_SETTINGS, fuseLibrary: 'libfuse2', readAheadKb: 16 * 1024 }
  const kb = mountReadAheadKb(settings)
  expect(kb).toBe(16 * 1024)
  expect(readOptionsOf(loadedWith(settings), kb).sequentialSlack).toBe(32 * 1024 * KiB)
})
