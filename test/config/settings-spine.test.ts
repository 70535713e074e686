// One source per default: a setting that sets a module's option is that option under the
// same name, with the module's own default, so the table and the module cannot drift.
import { expect, it } from 'vitest'
import { DEFAULT_SETTINGS, READ_AHEAD_KB_BY_LIBRARY, SETTINGS } from '../../src/config/settings.js'
import { DEFAULT_READ_OPTIONS } from '../../src/read/options.js'
import { DEFAULT_SEND_OPTIONS } from '../../src/send/options.js'
import { VFS_DEFAULTS } from '../../src/vfs/settings.js'
import { readOptionsOf, sendOptionsOf } from '../../src/cli/compose.js'

const MODULE_DEFAULTS: Record<string, object> = { read: DEFAULT_READ_OPTIONS, send: DEFAULT_SEND_OPTIONS, vfs: VFS_DEFAULTS }

it('every setting that sets a module option names one of its options and has its default', () => {
  const fed = SETTINGS.filter((s) => s.feeds)
  expect(fed.map((s) => s.key)).toEqual(expect.arrayContaining(['chunkSize', 'memoryCacheBytes', 'diskCacheBytes', 'maxConcurrentFetches', 'listingTtlMs', 'settleMs']))
  for (const s of fed) {
    const defaults = MODULE_DEFAULTS[s.feeds!]!
    expect(Object.keys(defaults), `${s.key} is an option of ${s.feeds}`).toContain(s.key)
    expect(s.default, `${s.key}'s default is ${s.feeds}'s`).toEqual((defaults as Record<string, unknown>)[s.key])
  }
})

it('the command line builds the modules\' options from the table', () => {
  const loaded = { settings: { ...DEFAULT_SETTINGS, memoryCacheBytes: 123, settleMs: 45, uploadWhileCopying: false, chunkSize: 8 * 1024 * 1024 }, folders: { cache: '/tmp/c', data: '/tmp/d', config: '/tmp/x' } }
  const read = readOptionsOf(loaded as never, READ_AHEAD_KB_BY_LIBRARY.libfuse3)
  expect(read).toMatchObject({ memoryCacheBytes: 123, chunkSize: 8 * 1024 * 1024, diskCacheBytes: DEFAULT_SETTINGS.diskCacheBytes })
  expect(sendOptionsOf(loaded as never)).toMatchObject({ settleMs: 45, uploadWhileCopying: false, message: null })
})
