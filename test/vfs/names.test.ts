import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  byteLength, disambiguate, fitName, isSafeName, mapCharacters, NAME_MAX_BYTES, safeName,
  transferFolderName, utcDate, withSuffix,
} from '../../src/vfs/names.js'

describe('safe names', () => {
  it('maps slash, NUL, control characters, DEL and C1 to readable characters', () => {
    expect(mapCharacters('Q3/Q4')).toBe('Q3∕Q4')
    expect(safeName('a\u0000b')).toBe('a␀b')
    expect(safeName('line\nbreak\ttab')).toBe('line␊break␉tab')
    expect(safeName('del\u007f')).toBe('del␡')
    expect(safeName('c1\u0085')).toBe('c1\uFFFD')
    expect(safeName('half\uD800')).toBe('half\uFFFD')
  })

  it('never answers ".", ".." or an empty name', () => {
    expect(safeName('.')).toBe('．')
    expect(safeName('..')).toBe('．．')
    expect(safeName('')).toBe('(unnamed)')
    expect(safeName('...')).toBe('...')
  })

  it('keeps ordinary Unicode names as they are', () => {
    for (const name of ['Résumé.pdf', '日本語のファイル.txt', '😀 party.jpg', '.bashrc', 'a b  c']) {
      expect(safeName(name)).toBe(name)
    }
  })

  it('shortens names over 255 bytes keeping the extension, cutting between characters, marked with a hash of the whole name', () => {
    const long = `${'x'.repeat(300)}.pdf`
    const ascii = fitName(long)
    expect(byteLength(ascii)).toBe(NAME_MAX_BYTES)
    const hash = createHash('sha256').update(long).digest('hex').slice(0, 8)
    expect(ascii).toBe(`${'x'.repeat(NAME_MAX_BYTES - '…~'.length - 2 - 8 - 4)}…~${hash}.pdf`)

    const wide = safeName(`${'日本'.repeat(100)}.txt`)
    expect(byteLength(wide)).toBeLessThanOrEqual(NAME_MAX_BYTES)
    expect(wide).toMatch(/^(日本)+日?…~[0-9a-f]{8}\.txt$/u)
    expect(Buffer.from(wide, 'utf8').toString('utf8')).toBe(wide)
    expect(wide).not.toContain('\uFFFD')

    const emoji = safeName('😀'.repeat(100))
    expect(byteLength(emoji)).toBeLessThanOrEqual(NAME_MAX_BYTES)
    expect(emoji).toMatch(/^(😀)+…~[0-9a-f]{8}$/u)
  })

  it('keeps long names that differ only past the cut apart', () => {
    const start = 'é'.repeat(150)
    const names = ['a', 'b', 'c'].map((end) => safeName(`${start}${end}.txt`))
    expect(new Set(names).size).toBe(3)
    for (const name of names) expect(name.startsWith(start.slice(0, 100))).toBe(true)
    expect(safeName(`${start}a.txt`)).toBe(names[0])
  })

  it('numbers collisions before the extension, first holder and real names keep theirs', () => {
    expect(disambiguate(['a.txt', 'a.txt', 'a.txt'])).toEqual(['a.txt', 'a (2).txt', 'a (3).txt'])
    expect(disambiguate(['a.txt', 'a.txt', 'a (2).txt'])).toEqual(['a.txt', 'a (3).txt', 'a (2).txt'])
    expect(disambiguate(['.transfer.json', 'x'], ['.transfer.json'])).toEqual(['.transfer (2).json', 'x'])
    expect(disambiguate(['dir', 'dir'])).toEqual(['dir', 'dir (2)'])
  })

  it('keeps a numbered long name within 255 bytes, marked once', () => {
    const long = fitName(`${'y'.repeat(400)}.tar`)
    const second = withSuffix(long, 2)
    expect(byteLength(second)).toBeLessThanOrEqual(NAME_MAX_BYTES)
    expect(second).toMatch(/^y+…~[0-9a-f]{8} \(2\)\.tar$/u)
    expect(second).not.toBe(long)
    // Names of exactly 255 bytes that share their start: their numbered forms, cut, differ.
    const full = (end: string) => `${'z'.repeat(NAME_MAX_BYTES - 5)}${end}.txt`
    expect(withSuffix(full('a'), 2)).not.toBe(withSuffix(full('b'), 2))
  })

  it('tells 10,000 names equal in their first 300 bytes apart in one pass', () => {
    // Each numbered name used to be cut again for every number tried: hours for these.
    const start = 'q'.repeat(300)
    const same = Array.from({ length: 10_000 }, () => safeName(`${start}.dat`))
    const names = disambiguate(same)
    expect(new Set(names).size).toBe(10_000)
    expect(names[9_999]).toMatch(/…~[0-9a-f]{8} \(10000\)\.dat$/u)
    const differing = disambiguate(Array.from({ length: 10_000 }, (_, i) => safeName(`${start}-${i}.dat`)))
    expect(new Set(differing).size).toBe(10_000)
    for (const name of differing) expect(name).toMatch(/^q+…~[0-9a-f]{8}\.dat$/u)
  }, 20_000)

  it('names a transfer folder "<UTC date> <subject> (<id>)"', () => {
    const sent = Date.UTC(2026, 10, 20, 23, 59)
    expect(transferFolderName(sent, 'Quarterly report', 'a1b2c3')).toBe('2026-11-20 Quarterly report (a1b2c3)')
    expect(transferFolderName(sent, '   ', 'a1b2c3')).toBe('2026-11-20 (no subject) (a1b2c3)')
    expect(transferFolderName(sent, 'Q3/Q4 ../..', 'id')).toBe('2026-11-20 Q3∕Q4 ..∕.. (id)')
    expect(utcDate(0)).toBe('undated')
    const long = transferFolderName(sent, 'ü'.repeat(300), 'keepme')
    expect(byteLength(long)).toBeLessThanOrEqual(NAME_MAX_BYTES)
    expect(long.endsWith('… (keepme)')).toBe(true)
  })

  it('any list of service names becomes distinct safe names (property)', () => {
    const awkward = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ unit: 'grapheme', maxLength: 300 }),
      fc.constantFrom('.', '..', '', '/', '\u0000', 'a/b', '.transfer.json', 'x.txt', 'x (2).txt'),
      fc.string({ unit: 'binary', minLength: 200, maxLength: 400 }),
    )
    fc.assert(
      fc.property(fc.array(awkward, { maxLength: 30 }), (raw) => {
        const names = disambiguate(raw.map((name) => safeName(name)), ['.transfer.json'])
        expect(names).toHaveLength(raw.length)
        expect(new Set([...names, '.transfer.json']).size).toBe(names.length + 1)
        for (const name of names) expect(isSafeName(name), JSON.stringify(name)).toBe(true)
        // Deterministic: the same input gives the same names.
        expect(disambiguate(raw.map((name) => safeName(name)), ['.transfer.json'])).toEqual(names)
      }),
      { numRuns: 300 },
    )
  })

  it('any list, however hostile, gets distinct names of at most 255 bytes, the same for the same file (property)', () => {
    const prefix = fc.constantFrom('p'.repeat(250), 'ü'.repeat(125), '日'.repeat(84), '😀'.repeat(62), 'x'.repeat(NAME_MAX_BYTES - 9))
    const ending = fc.constantFrom('', '.txt', ' (2)', ' (2).txt', ' (3).txt', '…~00000000', '…~00000000.txt', '.tar.gz', '.', ' (2) (2).txt')
    const hostile = fc.oneof(
      fc.tuple(prefix, fc.string({ maxLength: 3 }), ending).map(([p, mid, end]) => p + mid + end),
      fc.tuple(fc.constantFrom('a', 'a.txt', 'a (2).txt', 'a (2)', 'a (10).txt'), ending).map(([a, end]) => a + end),
      fc.string({ unit: 'grapheme', minLength: 200, maxLength: 300 }),
      fc.string({ unit: 'binary', maxLength: 20 }),
    )
    // Files as a transfer holds them, each name often held by several: an id and a name, in
    // the order the service lists them, and the same files listed in another order.
    const files = fc.array(fc.tuple(hostile, fc.nat({ max: 3 })), { maxLength: 60 })
      .map((drafts) => drafts.flatMap(([name, copies]) => Array.from({ length: copies + 1 }, () => name)))
      .map((names) => names.map((name, i) => ({ id: `f${String(i).padStart(4, '0')}`, name })))
      .chain((list) => fc.tuple(fc.constant(list), fc.shuffledSubarray(list, { minLength: list.length })))
    const byFileId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
    fc.assert(
      fc.property(files, ([listed, relisted]) => {
        const namesOf = (order: typeof listed) => {
          // The caller's stable order (the file id), whatever order the files came in.
          const sorted = [...order].sort(byFileId)
          const names = disambiguate(sorted.map((f) => safeName(f.name)), ['.transfer.json'])
          return new Map(sorted.map((f, i) => [f.id, names[i]!]))
        }
        const byId = namesOf(listed)
        const names = [...byId.values()]
        expect(new Set([...names, '.transfer.json']).size).toBe(names.length + 1)
        for (const name of names) {
          expect(byteLength(name), name).toBeLessThanOrEqual(NAME_MAX_BYTES)
          expect(isSafeName(name), JSON.stringify(name)).toBe(true)
        }
        expect(namesOf(relisted)).toEqual(byId)
        expect(namesOf(listed)).toEqual(byId)
      }),
      { numRuns: 300 },
    )
  })

  it('folder names of any subject and id are safe (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 300 }), fc.integer({ min: 0, max: 4_102_444_800_000 }), (subject, id, sent) => {
        expect(isSafeName(transferFolderName(sent, subject, id))).toBe(true)
      }),
      { numRuns: 300 },
    )
  })
})
