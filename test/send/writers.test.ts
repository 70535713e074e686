import { mkdtemp, readdir, rm, writeFile, appendFile, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { FileHandle } from 'node:fs/promises'
import { OpenFiles } from '../../src/send/handles.js'
import { WriterMarks } from '../../src/send/writers.js'

let dir = ''
afterEach(async () => {
  // The temporary folder made for the test, not only the marks folder inside it.
  if (dir) await rm(path.dirname(dir), { recursive: true, force: true })
})

describe('writer marks (one log per run)', () => {
  it('a run that dies leaves the paths it had open; closed ones, a torn line and a renamed handle are read right', async () => {
    dir = path.join(await mkdtemp(path.join(os.tmpdir(), 'marks-')), 'writing')
    const a = new WriterMarks(dir)
    expect(await a.init()).toEqual([])
    await a.set(1, '/movie.mkv')
    await a.set(2, '/Album/1.jpg')
    await a.set(3, '/notes.txt')
    await a.clear(3)
    await a.set(2, '/Album 2024/1.jpg')
    const [log] = (await readdir(dir)).filter((n) => n.endsWith('.log'))
    await appendFile(path.join(dir, log!), '["+",4,"/torn')
    // A mark file of the earlier layout (a file per mark) is taken up too.
    await writeFile(path.join(dir, 'abcd-7'), '/old.bin')
    // The process dies here: nothing is closed.
    const b = new WriterMarks(dir)
    expect((await b.init()).sort()).toEqual(['/Album 2024/1.jpg', '/movie.mkv', '/old.bin'])
    expect(await readdir(dir)).toEqual(['leftovers.json'])
    await b.remove(['/movie.mkv'])
    const c = new WriterMarks(dir)
    expect((await c.init()).sort()).toEqual(['/Album 2024/1.jpg', '/old.bin'])
    await c.remove(['/Album 2024/1.jpg', '/old.bin'])
    expect(await new WriterMarks(dir).init()).toEqual([])
    expect(await readdir(dir)).toEqual([])
  })

  it('a released handle leaves no mark though the run dies before letting go of it (release syncs first), renamed or not', async () => {
    dir = path.join(await mkdtemp(path.join(os.tmpdir(), 'marks-')), 'writing')
    const marks = new WriterMarks(dir)
    await marks.init()
    const files = new OpenFiles(marks)
    const handle = {} as FileHandle
    const done = await files.add({ path: '/done.bin', handle, wrote: true, marked: true })
    await files.add({ path: '/open.bin', handle, wrote: true, marked: true })
    await files.released(done)
    // Renamed while the release's sync runs: its mark does not come back.
    await files.renamed('/done.bin', '/done 2.bin')
    // The process dies here: neither handle was removed.
    expect(await new WriterMarks(dir).init()).toEqual(['/open.bin'])
  })

  it('a long log is emptied once no handle is open, and marks set after that still count', async () => {
    dir = path.join(await mkdtemp(path.join(os.tmpdir(), 'marks-')), 'writing')
    const a = new WriterMarks(dir)
    await a.init()
    const name = '/' + 'x'.repeat(200)
    for (let fh = 0; fh < 2000; fh++) {
      await a.set(fh, name)
      await a.clear(fh)
    }
    const [log] = (await readdir(dir)).filter((n) => n.endsWith('.log'))
    expect((await stat(path.join(dir, log!))).size).toBeLessThan(300 * 1024)
    await a.set(5000, '/last.bin')
    expect(await new WriterMarks(dir).init()).toEqual(['/last.bin'])
  })
})
