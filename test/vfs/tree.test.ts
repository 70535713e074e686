import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FsError } from '../../src/vfs/core.js'
import { TransferFileSystem } from '../../src/vfs/filesystem.js'
import { byteLength, isSafeName } from '../../src/vfs/names.js'
import { FakeCatalog, FakeClock, FakeContent, makeFile, makeTransfer, readAll } from './fakes.js'

const S_IFDIR = 0o040000

function setup() {
  const catalog = new FakeCatalog()
  const content = new FakeContent()
  const clock = new FakeClock()
  const fs = new TransferFileSystem({ catalog, content, clock, settings: { uid: 1234, gid: 5678 } })
  return { catalog, content, clock, fs }
}

/** Every file path below `dir`, found by readdir alone, with each name checked. */
async function walk(fs: TransferFileSystem, dir: string): Promise<string[]> {
  const names = await fs.readdir(dir)
  expect(new Set(names).size, `duplicates in ${dir}`).toBe(names.length)
  const found: string[] = []
  for (const name of names) {
    expect(isSafeName(name), JSON.stringify(name)).toBe(true)
    const path = `${dir}/${name}`
    const attr = await fs.getattr(path)
    if ((attr.mode & S_IFDIR) !== 0) found.push(...(await walk(fs, path)))
    else found.push(path)
  }
  return found
}

describe('the tree', () => {
  it('has inbox, sent, by-id, search and .status at its root (outbox/ comes with sending)', async () => {
    const { fs } = setup()
    expect(await fs.readdir('/')).toEqual(['inbox', 'sent', 'by-id', 'search', '.status'])
    await expect(fs.readdir('/outbox')).rejects.toMatchObject({ code: 'ENOENT' })
    expect(await fs.readdir('/by-id')).toEqual([])
    expect((await readAll(fs, '/.status')).toString()).toBe('nothing is being sent\n')
    await expect(fs.readdir('/.status')).rejects.toMatchObject({ code: 'ENOTDIR' })
    await expect(fs.getattr('/nope')).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('lists inbox transfers newest first, named "<date> <subject> (<id>)", with their files and folders', async () => {
    const { catalog, content, fs } = setup()
    const old = makeTransfer({ id: 'old1', subject: 'Older', sentdate: Date.UTC(2026, 0, 2, 8) })
    const report = makeTransfer({ id: 'a1b2c3', subject: 'Quarterly report', sentdate: Date.UTC(2026, 10, 20, 23) })
    const pdf = makeFile('a1b2c3', 'report.pdf', Buffer.from('%PDF-1.7 pretend'))
    const csv = makeFile('a1b2c3', 'data/raw.csv', Buffer.from('a,b\n1,2\n'))
    const deep = makeFile('a1b2c3', 'data/more/deep.txt', Buffer.from('deep'))
    report.files = [pdf, csv, deep]
    content.put(pdf, Buffer.from('%PDF-1.7 pretend'))
    content.put(csv, Buffer.from('a,b\n1,2\n'))
    catalog.add(old)
    catalog.add(report)

    expect(await fs.readdir('/inbox')).toEqual(['2026-11-20 Quarterly report (a1b2c3)', '2026-01-02 Older (old1)'])
    const dir = '/inbox/2026-11-20 Quarterly report (a1b2c3)'
    expect(await fs.readdir(dir)).toEqual(['.transfer.json', 'report.pdf', 'data'])
    expect(await fs.readdir(`${dir}/data`)).toEqual(['raw.csv', 'more'])
    expect((await readAll(fs, `${dir}/data/raw.csv`)).toString()).toBe('a,b\n1,2\n')
    expect((await fs.getattr(`${dir}/report.pdf`)).size).toBe(16)
    expect((await walk(fs, dir)).sort()).toEqual([
      `${dir}/.transfer.json`, `${dir}/data/more/deep.txt`, `${dir}/data/raw.csv`, `${dir}/report.pdf`,
    ])
  })

  it('makes awkward subjects and file names safe, reachable and distinct', async () => {
    const { catalog, fs } = setup()
    const t = makeTransfer({ id: 'awk', subject: `Q3/Q4 ${'ü'.repeat(200)}` })
    t.files = [
      makeFile('awk', '..'),
      makeFile('awk', '../../etc/passwd'),
      makeFile('awk', 'nul\u0000byte.txt'),
      makeFile('awk', `${'長'.repeat(120)}.mp4`),
      makeFile('awk', 'same.txt'),
      makeFile('awk', 'same.txt'),
      makeFile('awk', 'same'),
      makeFile('awk', 'same/inside.txt'),
      makeFile('awk', '.transfer.json'),
      makeFile('awk', '.password'),
      makeFile('awk', ''),
      makeFile('awk', 'trailing/'),
      makeFile('awk', '😀/🎉.png'),
    ]
    catalog.add(t)
    const [folder] = await fs.readdir('/inbox')
    expect(folder!.startsWith('2026-11-20 Q3∕Q4 ü')).toBe(true)
    expect(folder!.endsWith('… (awk)')).toBe(true)
    expect(byteLength(folder!)).toBeLessThanOrEqual(255)
    const files = await walk(fs, `/inbox/${folder}`)
    expect(files).toHaveLength(t.files.length + 1)
    const names = await fs.readdir(`/inbox/${folder}`)
    expect(names).toEqual([
      '.transfer.json', '．．', '．． (2)', 'nul␀byte.txt', expect.stringMatching(/^長{79}…~[0-9a-f]{8}\.mp4$/u), 'same.txt', 'same (2).txt',
      'same', 'same (2)', '.transfer (2).json', '.password (2)', '(unnamed)', 'trailing', '😀',
    ])
    // The file named ".." and the folder made of "../.." are both there, apart.
    expect((await fs.getattr(`/inbox/${folder}/．．`)).mode & S_IFDIR).toBe(0)
    expect(await fs.readdir(`/inbox/${folder}/．． (2)`)).toEqual(['．．'])
    expect(await fs.readdir(`/inbox/${folder}/．． (2)/．．`)).toEqual(['etc'])
    // Real files never take the names of the folder's own virtual files, even when unlocked.
    expect((await fs.getattr(`/inbox/${folder}/.password (2)`)).mode & 0o777).toBe(0o444)
    await expect(fs.getattr(`/inbox/${folder}/.password`)).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('any set of file names gives a tree where every file is reachable under a safe, distinct name (property)', async () => {
    const segment = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.constantFrom('.', '..', '', 'a', 'A', '.transfer.json', 'x.txt', 'x (2).txt'),
      fc.string({ unit: 'grapheme', minLength: 100, maxLength: 300 }),
    )
    const fileName = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/'))
    await fc.assert(
      fc.asyncProperty(fc.array(fileName, { minLength: 1, maxLength: 25 }), fc.string({ unit: 'binary', maxLength: 300 }), async (names, subject) => {
        const { catalog, fs } = setup()
        const t = makeTransfer({ id: 'prop', subject })
        t.files = names.map((name, i) => makeFile('prop', name, i + 1))
        catalog.add(t)
        const folders = await fs.readdir('/inbox')
        expect(folders).toHaveLength(1)
        const dir = `/inbox/${folders[0]}`
        const files = await walk(fs, dir)
        expect(files).toHaveLength(names.length + 1)
        // Each service file appears exactly once: sizes 1..n are all there.
        const sizes = await Promise.all(files.filter((p) => p !== `${dir}/.transfer.json`).map(async (p) => (await fs.getattr(p)).size))
        expect(sizes.sort((a, b) => a - b)).toEqual(names.map((_, i) => i + 1))
      }),
      { numRuns: 120 },
    )
  })

  it('gives the same names to the same transfer every time (deterministic by file id)', async () => {
    const a = setup()
    const b = setup()
    for (const { catalog } of [a, b]) {
      const t = makeTransfer({ id: 'det' })
      t.files = [makeFile('det', 'x.txt', 1), makeFile('det', 'x.txt', 2), makeFile('det', 'x.txt', 3)]
      // Same files, listed in another order: names follow file ids, not the listing order.
      if (catalog === b.catalog) t.files.reverse()
      catalog.add(t)
    }
    const dir = '/by-id/det'
    const sizeOf = async (s: ReturnType<typeof setup>, n: string) => (await s.fs.getattr(`${dir}/${n}`)).size
    for (const name of ['x.txt', 'x (2).txt', 'x (3).txt']) {
      expect(await sizeOf(a, name)).toBe(await sizeOf(b, name))
    }
  })

  it('answers ENOTDIR below a file and ENOENT for unknown names', async () => {
    const { catalog, fs } = setup()
    const t = makeTransfer({ id: 't1', subject: 's' })
    t.files = [makeFile('t1', 'f.txt')]
    catalog.add(t)
    await expect(fs.getattr('/by-id/t1/f.txt/x')).rejects.toBeInstanceOf(FsError)
    await expect(fs.getattr('/by-id/t1/f.txt/x')).rejects.toMatchObject({ code: 'ENOTDIR' })
    await expect(fs.getattr('/by-id/t1/missing')).rejects.toMatchObject({ code: 'ENOENT' })
  })
})
