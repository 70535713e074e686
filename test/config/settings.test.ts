import { mkdir, writeFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { mkdtemp } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import {
  DEFAULT_SETTINGS,
  displayValue,
  envName,
  flagName,
  loadSettings,
  resolveFolders,
  resolveSettings,
  SETTINGS,
  SettingsError,
} from '../../src/config/index.js'

const MiB = 1024 * 1024

describe('settings', () => {
  it('has the documented defaults', () => {
    expect(DEFAULT_SETTINGS).toMatchObject({
      apiUrl: null, apiKey: null, ca: null, proxy: null, allowOther: false, chunkSize: 50 * MiB, memoryCacheBytes: 512 * MiB,
      diskCacheBytes: 10 * 1024 * MiB, listingTtlMs: 30_000, maxConcurrentFetches: 4, settleMs: 3000,
      message: null, days: null, notify: null, confirmation: null, password: null, logLevel: 'info',
    })
    expect(DEFAULT_SETTINGS.readTimeoutMs).toBeGreaterThan(DEFAULT_SETTINGS.metadataTimeoutMs)
    for (const s of SETTINGS) expect(s.description.length).toBeGreaterThan(0)
  })

  it('derives the fixed flag and environment names', () => {
    expect(flagName('apiUrl')).toBe('--api-url')
    expect(envName('apiUrl')).toBe('TRANSFERFS_API_URL')
    expect(flagName('apiKey')).toBe('--api-key')
    expect(envName('apiKey')).toBe('TRANSFERFS_API_KEY')
    expect(flagName('ca')).toBe('--ca')
    expect(envName('ca')).toBe('TRANSFERFS_CA')
    expect(envName('memoryCacheBytes')).toBe('TRANSFERFS_MEMORY_CACHE_BYTES')
  })

  it('resolves flags over env over file over defaults, and says where each came from', () => {
    const { settings, sources } = resolveSettings({
      flags: { apiUrl: 'https://flag/api', settleMs: undefined },
      env: { TRANSFERFS_API_URL: 'https://env/api', TRANSFERFS_API_KEY: 'k-env', TRANSFERFS_SETTLE_MS: '5s' },
      file: { apiUrl: 'https://file/api', apiKey: 'k-file', chunkSize: '8MiB', notify: true },
    })
    expect(settings.apiUrl).toBe('https://flag/api')
    expect(settings.apiKey).toBe('k-env')
    expect(settings.settleMs).toBe(5000)
    expect(settings.chunkSize).toBe(8 * MiB)
    expect(settings.notify).toBe(true)
    expect(settings.days).toBeNull()
    expect(sources).toMatchObject({ apiUrl: 'flag', apiKey: 'env', settleMs: 'env', chunkSize: 'file', notify: 'file', days: 'default' })
  })

  it('parses units and rejects bad values with the source named', () => {
    const r = resolveSettings({ env: { TRANSFERFS_DISK_CACHE_BYTES: '1.5G', TRANSFERFS_LISTING_TTL_MS: '2m', TRANSFERFS_DAYS: '-1', TRANSFERFS_ALLOW_OTHER: 'yes', TRANSFERFS_LOG_LEVEL: 'DEBUG' } })
    expect(r.settings).toMatchObject({ diskCacheBytes: 1.5 * 1024 * MiB, listingTtlMs: 120_000, days: -1, allowOther: true, logLevel: 'debug' })
    expect(() => resolveSettings({ env: { TRANSFERFS_CHUNK_SIZE: 'lots' } })).toThrow(/TRANSFERFS_CHUNK_SIZE.*chunkSize/)
    expect(() => resolveSettings({ flags: { maxConcurrentFetches: '2.5' } })).toThrow(/--max-concurrent-fetches/)
    expect(() => resolveSettings({ file: { logLevel: 'loud' } })).toThrow(SettingsError)
    expect(() => resolveSettings({ file: { chunksize: 1 } })).toThrow(/unknown setting "chunksize"/)
    expect(() => resolveSettings({ file: [] })).toThrow(/JSON object/)
  })

  it('masks secrets when displayed', () => {
    expect(displayValue('apiKey', 'k-123')).toBe('********')
    expect(displayValue('password', 'p')).toBe('********')
    expect(displayValue('apiUrl', 'https://x/api')).toBe('https://x/api')
    expect(displayValue('days', null)).toBe('(not set)')
    // The proxy's address is worth seeing, its password never.
    expect(displayValue('proxy', 'http://ann:pw-1@proxy.corp:3128')).toBe('http://ann:********@proxy.corp:3128')
  })
})

describe('folders and the config file', () => {
  it('uses env-paths unless TRANSFERFS_*_DIR are set', () => {
    const home = resolveFolders({})
    expect(home.config).toMatch(/transferfs$/)
    expect(home.cache).toMatch(/transferfs$/)
    expect(home.config).not.toBe(home.cache)
    const f = resolveFolders({ TRANSFERFS_CONFIG_DIR: '/tmp/c', TRANSFERFS_CACHE_DIR: '/tmp/k', TRANSFERFS_DATA_DIR: 'rel/d' })
    expect(f).toEqual({ config: '/tmp/c', cache: '/tmp/k', data: path.resolve('rel/d') })
  })

  it('loads the config file from the config folder and puts the token file there', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'transferfs-config-'))
    const env = { TRANSFERFS_CONFIG_DIR: dir, TRANSFERFS_MESSAGE: 'from env' }
    const none = await loadSettings({}, env)
    expect(none.sources.apiUrl).toBe('default')
    expect(none.tokenFile).toBe(path.join(dir, 'tokens.json'))

    await mkdir(dir, { recursive: true })
    await writeFile(path.join(dir, 'config.json'), JSON.stringify({ apiUrl: 'https://file/api', message: 'from file', days: 7 }))
    const loaded = await loadSettings({ days: '3' }, env)
    expect(loaded.settings).toMatchObject({ apiUrl: 'https://file/api', message: 'from env', days: 3 })
    expect(loaded.sources).toMatchObject({ apiUrl: 'file', message: 'env', days: 'flag' })
    expect(loaded.configFile).toBe(path.join(dir, 'config.json'))

    await writeFile(path.join(dir, 'config.json'), '{ not json')
    await expect(loadSettings({}, env)).rejects.toThrow(/config\.json:1:3: not valid JSON/)
    await rm(dir, { recursive: true, force: true })
  })
})
