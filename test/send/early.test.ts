// Files of a folder go up as each is closed, before the folder settles; Complete waits
// for the settle. A change to a file that already went up drops that transfer (never
// completed) for a new one; a file only added joins it.
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { md5 } from './fake-service.js'
import { bytes, Harness, rsyncA } from './harness.js'

let h: Harness | null = null
/** The setting is off by default; these tests are of what it does on. */
const EARLY = { uploadWhileCopying: true }
afterEach(async () => {
  await h?.cleanup()
  h = null
})

/** Writes a file and closes it, then lets its early upload run (the clock does not move). */
async function write(x: Harness, p: string, data: Buffer): Promise<void> {
  const fh = await x.fs.create(p, 0o644)
  await x.fs.write(p, fh, data, 0)
  await x.fs.release(p, fh)
  await x.fs.idle()
}

const chunksOf = (x: Harness, file: string): number[] => x.service.calls.filter((c) => c.op === 'chunk' && c.file === file).map((c) => c.chunk as number)

describe('early uploads of a folder being copied', () => {
  it('each closed file goes up at once; Complete comes after the settle, and no chunk is sent twice', async () => {
    h = await Harness.create(EARLY)
    const a = bytes(2500, 1)
    const b = bytes(700, 2)
    await h.fs.mkdir('/Photos', 0o755)
    await write(h, '/Photos/a.jpg', a)
    // a.jpg is up while the folder is still settling (and b.jpg not yet written).
    expect(h.service.calls.map((c) => c.op)).toEqual(['initialize', 'chunk', 'chunk', 'chunk'])
    // Initialize is told what is staged so far, not an empty transfer.
    expect([...h.service.transfers.values()][0]?.req.transfersize).toBe(2500)
    expect(h.fs.status().entries[0]).toMatchObject({ name: 'Photos', state: 'settling', bytesSent: 2500 })
    await h.fs.mkdir('/Photos/raw', 0o755)
    await write(h, '/Photos/raw/b.jpg', b)
    expect(chunksOf(h, 'raw/b.jpg')).toEqual([0])
    expect(h.service.completed()).toEqual([])
    await h.settle()
    expect(h.service.sentAs('Photos')).toEqual([{ 'a.jpg': md5(a), 'raw/b.jpg': md5(b) }])
    expect(h.service.initializeCount('Photos')).toBe(1)
    expect(chunksOf(h, 'a.jpg').sort()).toEqual([0, 1, 2])
    expect(chunksOf(h, 'raw/b.jpg')).toEqual([0])
    expect(await h.ls()).toEqual([])
  })

  it('a file rewritten after it went up: that transfer is dropped, never completed, and the new bytes are sent', async () => {
    h = await Harness.create(EARLY)
    await h.fs.mkdir('/Docs', 0o755)
    await write(h, '/Docs/a.txt', bytes(1500, 3))
    await write(h, '/Docs/b.txt', bytes(300, 4))
    const first = [...h.service.transfers.keys()][0]
    expect(first).toBeDefined()
    const calls = h.service.calls.length
    await write(h, '/Docs/a.txt', bytes(1500, 5))
    // The transfer is spoiled: nothing more goes up early.
    expect(h.service.calls.length).toBe(calls)
    await h.settle()
    expect(h.service.sentAs('Docs')).toEqual([{ 'a.txt': md5(bytes(1500, 5)), 'b.txt': md5(bytes(300, 4)) }])
    expect(h.service.completed().map((t) => t.id)).not.toContain(first)
    const log = await fsp.readFile(path.join(h.dataDir, 'journal', 'abandoned.log'), 'utf8')
    expect(log).toContain(first)
  })

  it('a file removed after it went up: a new transfer without it', async () => {
    h = await Harness.create(EARLY)
    await h.fs.mkdir('/Docs', 0o755)
    await write(h, '/Docs/a.txt', bytes(100, 6))
    await write(h, '/Docs/b.txt', bytes(200, 7))
    await h.fs.unlink('/Docs/a.txt')
    await h.settle()
    expect(h.service.sentAs('Docs')).toEqual([{ 'b.txt': md5(bytes(200, 7)) }])
    expect(h.service.initializeCount('Docs')).toBe(2)
    expect(h.service.completed()).toHaveLength(1)
  })

  it('the same bytes copied again over a file that went up keep the transfer', async () => {
    h = await Harness.create(EARLY)
    await h.fs.mkdir('/Docs', 0o755)
    await write(h, '/Docs/a.txt', bytes(1200, 8))
    await write(h, '/Docs/a.txt', bytes(1200, 8))
    await h.settle()
    expect(h.service.sentAs('Docs')).toEqual([{ 'a.txt': md5(bytes(1200, 8)) }])
    expect(h.service.initializeCount('Docs')).toBe(1)
  })

  it('temporary names are not uploaded; a file renamed into place (rsync) is', async () => {
    h = await Harness.create(EARLY)
    await h.fs.mkdir('/Site', 0o755)
    await write(h, '/Site/page.html.swp', bytes(50, 9))
    expect(h.service.calls).toEqual([])
    await rsyncA(h.fs, '/Site', 'index.html', bytes(800, 10), new Date('2020-01-02T03:04:05Z'))
    await h.fs.idle()
    expect(chunksOf(h, 'index.html')).toEqual([0])
    expect(h.service.completed()).toEqual([])
    await h.fs.unlink('/Site/page.html.swp')
    await h.settle()
    expect(h.service.sentAs('Site')).toEqual([{ 'index.html': md5(bytes(800, 10)) }])
    expect(h.service.initializeCount('Site')).toBe(1)
  })

  it('a file on its own, and any file with uploadWhileCopying off (the default), waits for the settle', async () => {
    for (const [options, p] of [[EARLY, '/alone.bin'], [{ uploadWhileCopying: false }, '/Folder/a.bin']] as const) {
      const x = await Harness.create(options)
      h = x
      await x.fs.mkdir('/Folder', 0o755)
      await write(x, p, bytes(2000, 11))
      expect(x.service.calls).toEqual([])
      await x.settle()
      expect(x.service.completed()).toHaveLength(1)
      await x.cleanup()
      h = null
    }
  })
})
