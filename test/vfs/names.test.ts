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

  it('shortens names over 255 bytes keeping the extension, cutting between characters', () => {
    const ascii = fitName(`${'x'.repeat(300)}.pdf`)
    expect(byteLength(ascii)).toBeLessThanOrEqual(NAME_MAX_BYTES)
    expect(ascii.endsWith('….pdf')).toBe(true)

    const wide = safeName(`${'日本'.repeat(100)}.txt`)
    expect(byteLength(wide)).toBeLessThanOrEqual(NAME_MAX_BYTES)
    expect(wide.endsWith('….txt')).toBe(true)
    expect(Buffer.from(wide, 'utf8').toString('utf8')).toBe(wide)
    expect(wide).not.toContain('\uFFFD')

    const emoji = safeName('😀'.repeat(100))
    expect(byteLength(emoji)).toBeLessThanOrEqual(NAME_MAX_BYTES)
    expect(emoji).toMatch(/^(😀)+…$/u)
  })

  it('numbers collisions before the extension, first holder and real names keep theirs', () => {
    expect(disambiguate(['a.txt', 'a.txt', 'a.txt'])).toEqual(['a.txt', 'a (2).txt', 'a (3).txt'])
    expect(disambiguate(['a.txt', 'a.txt', 'a (2).txt'])).toEqual(['a.txt', 'a (3).txt', 'a (2).txt'])
    expect(disambiguate(['.transfer.json', 'x'], ['.transfer.json'])).toEqual(['.transfer (2).json', 'x'])
    expect(disambiguate(['dir', 'dir'])).toEqual(['dir', 'dir (2)'])
  })

  it('keeps a numbered long name within 255 bytes', () => {
    const long = fitName(`${'y'.repeat(400)}.tar`)
    const second = withSuffix(long, 2)
    expect(byteLength(second)).toBeLessThanOrEqual(NAME_MAX_BYTES)
    expect(second.endsWith(' (2).tar')).toBe(true)
    expect(second).not.toBe(long)
  })

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

  it('folder names of any subject and id are safe (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 300 }), fc.integer({ min: 0, max: 4_102_444_800_000 }), (subject, id, sent) => {
        expect(isSafeName(transferFolderName(sent, subject, id))).toBe(true)
      }),
      { numRuns: 300 },
    )
  })
})
