// NFS file handles alone: one handle per path, at most 64 bytes, resolved again by a new
// server from the table in the data folder; handles the server never made name nothing.
import fc from 'fast-check'
import { appendFile, readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { childPath, fileIdOf, FileHandles, HANDLE_TABLE_FILE, parentPath } from '../../src/nfs/handles.js'
import { tempDir } from '../support/mount.js'

const segment = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !s.includes('/') && !s.includes('\0') && s !== '.' && s !== '..')
const treePath = fc.array(segment, { maxLength: 6 }).map((names) => '/' + names.join('/'))

describe('file handles', () => {
  it('give each path one handle of at most 64 bytes, which names it back', async () => {
    const handles = await FileHandles.open(null)
    fc.assert(fc.property(treePath, (p) => {
      const h = handles.handleOf(p)
      expect(h.length).toBeLessThanOrEqual(64)
      expect(handles.handleOf(p).equals(h)).toBe(true)
      expect(handles.pathOf(h)).toBe(p)
    }))
  })

  it('are resolved by a new server from the table in the data folder, a torn last line skipped', async () => {
    const dir = await tempDir()
    const table = path.join(dir, HANDLE_TABLE_FILE)
    const long = `/inbox/${'a very long transfer folder name '.repeat(3)}(0123456789abcdef)/clip.mov`
    const first = await FileHandles.open(table)
    const h = first.handleOf(long)
    expect(h.length).toBe(25)
    await first.flush()
    await appendFile(table, '"/inbox/torn')
    const second = await FileHandles.open(table)
    expect(second.pathOf(h)).toBe(long)
    // Handed out again, a known path adds no line.
    second.handleOf(long)
    await second.flush()
    expect((await readFile(table, 'utf8')).split('\n').filter((l) => l.includes('clip.mov'))).toHaveLength(1)
    // Without the table, the digest names nothing: the client is told STALE.
    expect((await FileHandles.open(null)).pathOf(h)).toBeNull()
  })

  it('name nothing when the server did not make them', async () => {
    const handles = await FileHandles.open(null)
    for (const forged of [
      Buffer.alloc(0), Buffer.from([9, 1, 2]), Buffer.from([1, 0xff, 0xfe]), Buffer.from('\u0001inbox/../..'),
      Buffer.from('\u0001inbox//x'), Buffer.from('\u0001a\u0000b'), Buffer.alloc(65, 1), Buffer.from([2, 1, 2, 3]),
    ]) expect(handles.pathOf(forged)).toBeNull()
  })

  it('derive paths and file ids as the tree names them', () => {
    expect(childPath('/', 'inbox')).toBe('/inbox')
    expect(childPath('/inbox', 'x')).toBe('/inbox/x')
    expect(parentPath('/inbox/x')).toBe('/inbox')
    expect(parentPath('/inbox')).toBe('/')
    expect(parentPath('/')).toBe('/')
    expect(fileIdOf('/inbox')).not.toBe(fileIdOf('/sent'))
    expect(fileIdOf('/inbox')).toBe(fileIdOf('/inbox'))
  })
})
