import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { EVERYONE, folderMode, OWNER_ONLY, readersOf, readOnlyFileMode } from '../../src/base/access-bits.js'

describe('readersOf: who besides the owner could read a file through its folders', () => {
  it('takes the file\'s group and other read bits where every folder lets that class search it', () => {
    expect(readersOf(0o644, [0o755])).toBe(EVERYONE)
    expect(readersOf(0o600, [0o755])).toBe(OWNER_ONLY)
    expect(readersOf(0o640, [0o755])).toBe(0o040)
    expect(readersOf(0o644, [0o700])).toBe(OWNER_ONLY)
    expect(readersOf(0o644, [0o755, 0o750])).toBe(0o040)
    // Search (x) is what reaching a known name takes; read on the folder is not.
    expect(readersOf(0o644, [0o711])).toBe(EVERYONE)
    expect(readersOf(0o644, [0o744])).toBe(OWNER_ONLY)
    expect(readersOf(0o444, [])).toBe(EVERYONE)
  })

  it('never widens: no class reads that could not read the file itself', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 0o777 }), fc.array(fc.integer({ min: 0, max: 0o777 }), { maxLength: 4 }), (file, folders) => {
      const readers = readersOf(file, folders)
      expect(readers & ~(file & EVERYONE)).toBe(0)
      for (const folder of folders) expect(readers & ~((folder & 0o011) << 2)).toBe(0)
    }))
  })
})

describe('the modes shown', () => {
  it('a read-only file: the owner reads, the readers too, no one writes', () => {
    expect(readOnlyFileMode(OWNER_ONLY)).toBe(0o400)
    expect(readOnlyFileMode(EVERYONE)).toBe(0o444)
    expect(readOnlyFileMode(0o040)).toBe(0o440)
  })

  it('a folder: the owner\'s bits as given, and r and x for the readers\' classes', () => {
    expect(folderMode(0o500, EVERYONE)).toBe(0o555)
    expect(folderMode(0o700, EVERYONE)).toBe(0o755)
    expect(folderMode(0o700, OWNER_ONLY)).toBe(0o700)
    expect(folderMode(0o500, 0o004)).toBe(0o505)
  })
})
