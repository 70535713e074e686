// Calls on paths longer than the kernel takes at once: a tree 10,000 bytes deep is made,
// written, read, renamed and removed through longPathFs, with no folder handle left open.
import { promises as fsp } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { LONGEST_PATH, longPathFs as disk, removeTree, withShortPath } from '../../src/base/long-paths.js'

const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'long-paths-'))
afterAll(() => fsp.rm(root, { recursive: true, force: true }))
const openFds = async () => (await fsp.readdir('/proc/self/fd')).length

describe('longPathFs', () => {
  it('makes, writes, reads, renames and removes a tree deeper than one call takes', async () => {
    const fdsBefore = await openFds()
    let dir = path.join(root, 'tree')
    await disk.mkdir(dir, 0o700)
    while (Buffer.byteLength(dir) < 10_000) {
      dir = path.join(dir, 'd'.repeat(250))
      await disk.mkdir(dir, 0o700)
    }
    const file = path.join(dir, 'f.txt')
    await expect(fsp.lstat(file)).rejects.toMatchObject({ code: 'ENAMETOOLONG' })
    const h = await disk.open(file, 'w', 0o600)
    await h.writeFile('deep\n')
    await h.close()
    expect((await disk.lstat(file)).size).toBe(5)
    await disk.rename(file, path.join(dir, 'g.txt'))
    expect(await disk.readdir(dir)).toEqual(['g.txt'])
    expect(await withShortPath(path.join(dir, 'g.txt'), async (s) => {
      expect(Buffer.byteLength(s)).toBeLessThanOrEqual(LONGEST_PATH)
      return fsp.readFile(s, 'utf8')
    })).toBe('deep\n')
    await disk.symlink('g.txt', path.join(dir, 'link'))
    expect(await disk.readlink(path.join(dir, 'link'))).toBe('g.txt')
    await removeTree(path.join(root, 'tree'))
    expect(await fsp.readdir(root)).toEqual([])
    expect(await openFds()).toBe(fdsBefore)
  })

  it('a missing folder on the way is ENOENT, as for a short path; a short path goes straight through', async () => {
    const missing = path.join(root, 'gone', ...Array.from({ length: 20 }, () => 'x'.repeat(250)), 'f')
    await expect(disk.lstat(missing)).rejects.toMatchObject({ code: 'ENOENT' })
    expect(await withShortPath('/tmp/a', async (s) => s)).toBe('/tmp/a')
    await removeTree(path.join(root, 'never-was'))
  })
})
