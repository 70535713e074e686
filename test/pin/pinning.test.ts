// The pure parts of pinning transfers: what the pin attribute's value means, what
// the state attribute says, when two pins are the same, the pins file, the fetch rate.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { PinStore } from '../../src/pin/pin-store.js'
import { RateWindow } from '../../src/pin/rate-window.js'
import type { Transfer } from '../../src/api/types.js'
import type { RemoteFile } from '../../src/read/source.js'
import { FsError } from '../../src/vfs/core.js'
import { run, TS_REGISTER } from '../support/mount.js'
import { pinWanted, sameScope, type PinScope } from '../../src/vfs/pinning.js'
import { stateText } from '../../src/vfs/state-words.js'

const ref = (id: string) => ({ key: `id:${id}`, via: 'id' as const, token: id })

function file(name: string, size: number): RemoteFile {
  return { transferId: 't1', fileName: name, size, md5: null, downloadUrl: `https://x/${name}`, cacheKey: `t1:${name}:${size}:-` }
}

describe('the pin attribute', () => {
  it('pins for 1, yes, true, on or nothing; unpins for 0, no, false, off', () => {
    for (const v of ['1', 'yes', 'TRUE', 'on', '', ' 1\n']) expect(pinWanted(Buffer.from(v)), v).toBe(true)
    for (const v of ['0', 'no', 'false', 'OFF']) expect(pinWanted(Buffer.from(v)), v).toBe(false)
  })

  it('answers EINVAL, naming the value, for anything else', () => {
    let caught: unknown
    try {
      pinWanted(Buffer.from('maybe'))
    } catch (e) {
      caught = e
    }
    expect(caught).toBeInstanceOf(FsError)
    expect((caught as FsError).code).toBe('EINVAL')
    expect((caught as FsError).message).toContain('maybe')
  })
})

describe('the state attribute', () => {
  it('says online, partial, cached, pinned and fetching as the cache holds them', () => {
    expect(stateText(false, 0, 100)).toBe('online')
    expect(stateText(false, 37, 100)).toBe('partial 37%')
    expect(stateText(false, 100, 100)).toBe('cached')
    expect(stateText(true, 0, 100)).toBe('pinned, fetching 0%')
    expect(stateText(true, 999, 1000)).toBe('pinned, fetching 99%')
    expect(stateText(true, 1000, 1000)).toBe('pinned')
  })

  it('calls an empty file online until pinned, and pinned then', () => {
    expect(stateText(false, 0, 0)).toBe('online')
    expect(stateText(true, 0, 0)).toBe('pinned')
  })
})

describe('pin identity', () => {
  it('is the scope, not the name shown', () => {
    const a: PinScope = { kind: 'transfer', place: 'inbox', ref: ref('abc'), below: ['photos'] }
    expect(sameScope(a, { kind: 'transfer', place: 'by-id', ref: ref('abc'), below: ['photos'] })).toBe(true)
    expect(sameScope(a, { kind: 'transfer', place: 'inbox', ref: ref('abc'), below: [] })).toBe(false)
    expect(sameScope(a, { kind: 'transfer', place: 'inbox', ref: ref('abd'), below: ['photos'] })).toBe(false)
    expect(sameScope({ kind: 'search', words: 'a b' }, { kind: 'search', words: 'a b' })).toBe(true)
    expect(sameScope({ kind: 'search', words: 'a b' }, { kind: 'search', words: 'a' })).toBe(false)
    expect(sameScope({ kind: 'inbox' }, { kind: 'inbox' })).toBe(true)
    expect(sameScope({ kind: 'inbox' }, { kind: 'search', words: 'inbox' })).toBe(false)
  })
})

describe('the pins file', () => {
  it('keeps pins and the files they covered across opens, once per scope', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'pins-'))
    const at = path.join(dir, 'pins.json')
    const store = await PinStore.open(at)
    expect(store.list()).toEqual([])
    const pin = await store.add({ scope: { kind: 'inbox' }, label: 'inbox', since: 1, files: [file('a', 10)], transfers: [] })
    await store.add({ scope: { kind: 'inbox' }, label: 'inbox again', since: 2, files: [], transfers: [] })
    const transfer = { id: 't1', subject: 'Report', key: 'secret-key' } as unknown as Transfer
    await store.cover(pin, [file('a', 10), file('b', 20)], [transfer])
    await store.add({ scope: { kind: 'search', words: 'x' }, label: 'search/x', since: 3, files: [], transfers: [] })

    const again = await PinStore.open(at)
    expect(again.list().map((p) => p.label)).toEqual(['inbox', 'search/x'])
    expect(again.find({ kind: 'inbox' })!.files.map((f) => f.fileName)).toEqual(['a', 'b'])
    // The transfer is kept to be shown offline, without its key: a sender's secret is never written there.
    expect(again.find({ kind: 'inbox' })!.transfers).toEqual([{ id: 't1', subject: 'Report' }])
    expect(await readFile(at, 'utf8')).not.toContain('secret-key')
    await again.remove({ kind: 'inbox' })
    expect((await PinStore.open(at)).list().map((p) => p.label)).toEqual(['search/x'])
    expect(JSON.parse(await readFile(at, 'utf8')).version).toBe(1)
  })

  it('refuses a file it cannot read, or of another version, rather than taking it for no pins', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'pins-'))
    const at = path.join(dir, 'pins.json')
    await writeFile(at, JSON.stringify({ version: 99, pins: [] }))
    await expect(PinStore.open(at)).rejects.toThrow(/version 99/)
    await rm(at)
    await mkdir(at)
    await expect(PinStore.open(at)).rejects.toThrow(/EISDIR/)
  })

  it('sets a damaged file aside, keeps the pins that validate and says what it dropped', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'pins-'))
    const at = path.join(dir, 'pins.json')
    const pin = (label: string, size: unknown) => ({
      scope: { kind: 'search', words: label }, label, since: 1, transfers: [],
      files: [{ transferId: 't', fileName: 'f', size, md5: null, downloadUrl: 'u', cacheKey: `k-${label}` }],
    })
    await writeFile(at, JSON.stringify({ version: 1, pins: [pin('a', 10), null, pin('b', 'NaN'), pin('c', -1), pin('d', 0)] }))
    const store = await PinStore.open(at)
    expect(store.list().map((p) => p.label)).toEqual(['a', 'd'])
    expect(store.damage).toMatchObject({ why: `${at}: 3 of 5 entries are not pins`, kept: 2, dropped: 3 })
    expect(store.damage!.movedTo).toMatch(/pins\.json\.damaged-\d{8}T\d{6}Z$/)
    // The pins kept are saved again, and read back whole.
    expect((await PinStore.open(at)).list().map((p) => p.label)).toEqual(['a', 'd'])
    expect((await PinStore.open(at)).damage).toBeNull()

    // Cut short: the pins on the lines before the cut are kept; nothing of the file is quoted.
    const text = await readFile(at, 'utf8')
    await writeFile(at, text.slice(0, text.indexOf('"d"') + 2))
    const cut = await PinStore.open(at)
    expect(cut.list().map((p) => p.label)).toEqual(['a'])
    expect(cut.damage!.why).toMatch(new RegExp(`^${at}:3:\\d+: not valid JSON \\(`))
    expect(cut.damage!.why).not.toContain('search')
    expect(cut.damage).toMatchObject({ kept: 1, dropped: 1 })
  })
})

describe('a pinned file whose saved size does not match its bytes', () => {
  // Run in a process of its own: a pinner whose fetching loop never yields would stop this
  // one too, timers and test timeouts included.
  const script = fileURLToPath(new URL('./fixtures/pinner-start.ts', import.meta.url))
  const start = (mode: string) => run(process.execPath, ['--import', TS_REGISTER, script, mode], { timeoutMs: 30_000 })

  it('a size that is not a number: the pin is dropped, and the pinner goes on', async () => {
    const r = await start('string+1')
    expect(r.stdout, r.stderr).toBe('yielded []\n')
  }, 40_000)

  it('a whole number more than its blocks hold: the file is marked failed, not fetched again and again', async () => {
    const r = await start('number+1')
    expect(r.stdout, r.stderr).toBe('yielded ["failed"]\n')
  }, 40_000)
})

describe('the fetch rate', () => {
  it('is bytes per second over the last samples, and nothing once they stop', () => {
    let now = 0
    const rate = new RateWindow(() => now)
    expect(rate.perSecond()).toBeNull()
    rate.add(0)
    now = 1000
    rate.add(5_000_000)
    now = 2000
    rate.add(10_000_000)
    expect(rate.perSecond()).toBe(5_000_000)
    now = 60_000
    expect(rate.perSecond()).toBeNull()
  })
})
