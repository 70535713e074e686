// The op sequences of cp, cp -a, rsync -a, mv, tar -x, dd and an editor each end as
// exactly one transfer with the right bytes.
import { constants as C, promises as fsp } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { md5 } from './fake-service.js'
import { bytes, cp, cpA, cpADir, dd, Harness, rsyncA, tarX, vimSave } from './harness.js'

let h: Harness
afterEach(async () => h?.cleanup())

const T = new Date('2020-01-02T03:04:05.000Z')

describe('one transfer per entry, from the op sequences of real tools', () => {
  it('cp of a file', async () => {
    h = await Harness.create()
    const data = bytes(10_000)
    await cp(h.fs, '/holiday.jpg', data)
    expect((await h.fs.getattr('/holiday.jpg')).size).toBe(10_000)
    await h.settle()
    expect(h.service.sentAs('holiday.jpg')).toEqual([{ 'holiday.jpg': md5(data) }])
    expect(h.service.initializeCount('holiday.jpg')).toBe(1)
    expect(await h.ls()).toEqual([])
    const sent = await h.fs.sentLog.list()
    expect(sent.map((s) => s.subject)).toEqual(['holiday.jpg'])
    const t = h.service.completed()[0]
    expect(t?.req.sourcedetails).toMatch(/^transferfs\//)
    expect(t?.req.to).toBeUndefined()
  })

  it('cp -a of a file keeps its times and mode until it is sent', async () => {
    h = await Harness.create()
    const data = bytes(3000, 2)
    await cpA(h.fs, '/a.txt', data, T, 0o640)
    const attr = await h.fs.getattr('/a.txt')
    expect(attr.mtime.getTime()).toBe(T.getTime())
    expect(attr.mode & 0o7777).toBe(0o640)
    await h.settle()
    expect(h.service.sentAs('a.txt')).toEqual([{ 'a.txt': md5(data) }])
  })

  it('cp -a of a folder with subfolders and a symlink: one transfer, the link left out', async () => {
    h = await Harness.create()
    const files = { 'a.txt': bytes(5000, 3), 'data/raw.csv': bytes(2500, 4), 'data/deep/x.bin': bytes(0, 5) }
    await cpADir(h.fs, '/Project X', files, T)
    expect(await h.fs.readlink('/Project X/link-to-a')).toBe('a.txt')
    const dirAttr = await h.fs.getattr('/Project X')
    expect(dirAttr.mode & 0o7777).toBe(0o755)
    expect(dirAttr.mtime.getTime()).toBe(T.getTime())
    await h.settle()
    expect(h.service.sentAs('Project X')).toEqual([
      { 'a.txt': md5(files['a.txt']), 'data/raw.csv': md5(files['data/raw.csv']), 'data/deep/x.bin': md5(Buffer.alloc(0)) },
    ])
    expect(await h.ls()).toEqual([])
  })

  it('rsync -a: the temp file never sends, the renamed file does, once', async () => {
    h = await Harness.create()
    const data = bytes(70_000, 6)
    await rsyncA(h.fs, '/', 'a.txt', data, T)
    expect(await h.ls()).toEqual(['a.txt'])
    await h.settle()
    expect(h.service.sentAs('a.txt')).toEqual([{ 'a.txt': md5(data) }])
    expect(h.service.calls.filter((c) => c.op === 'initialize')).toHaveLength(1)
  })

  it('rsync -a into a folder entry', async () => {
    h = await Harness.create()
    await h.fs.mkdir('/docs', 0o755)
    const a = bytes(4000, 7)
    const b = bytes(9000, 8)
    await rsyncA(h.fs, '/docs', 'a.txt', a, T)
    await rsyncA(h.fs, '/docs', 'b.txt', b, T)
    await h.settle()
    expect(h.service.sentAs('docs')).toEqual([{ 'a.txt': md5(a), 'b.txt': md5(b) }])
  })

  it('mv from another file system', async () => {
    h = await Harness.create()
    const data = bytes(12_345, 9)
    await cpA(h.fs, '/moved.bin', data, T, 0o600)
    await h.settle()
    expect(h.service.sentAs('moved.bin')).toEqual([{ 'moved.bin': md5(data) }])
  })

  it('tar -x of a folder', async () => {
    h = await Harness.create()
    const files = { 'README': bytes(100, 10), 'src/main.c': bytes(20_000, 11), 'src/lib/util.c': bytes(999, 12) }
    await tarX(h.fs, '/release', files, T)
    await h.settle()
    expect(h.service.sentAs('release')).toEqual([
      { README: md5(files.README), 'src/lib/util.c': md5(files['src/lib/util.c']), 'src/main.c': md5(files['src/main.c']) },
    ])
  })

  it('dd writing blocks at offsets, out of order', async () => {
    h = await Harness.create()
    const data = bytes(50_000, 13)
    await dd(h.fs, '/disk.img', data, 4096)
    expect(await h.readAll('/disk.img')).toEqual(data)
    await h.settle()
    expect(h.service.sentAs('disk.img')).toEqual([{ 'disk.img': md5(data) }])
  })

  it('an editor saving (swap file, backup rename, rewrite) sends the saved text once', async () => {
    h = await Harness.create()
    const first = Buffer.from('first draft\n')
    const saved = Buffer.from('final text\n'.repeat(100))
    await h.fs.mkdir('/notes', 0o755)
    await cp(h.fs, '/notes/todo.txt', first)
    await vimSave(h.fs, '/notes/todo.txt', saved)
    await h.settle()
    expect(h.service.sentAs('notes')).toEqual([{ 'todo.txt': md5(saved) }])
  })

  it('overwrite with cp: open + truncate(0) + write', async () => {
    h = await Harness.create()
    await cp(h.fs, '/x.txt', bytes(5000, 1))
    const data = bytes(1000, 2)
    const fh = await h.fs.open('/x.txt', 1)
    await h.fs.truncate('/x.txt', 0)
    await h.fs.write('/x.txt', fh, data, 0)
    await h.fs.flush('/x.txt', fh)
    await h.fs.release('/x.txt', fh)
    await h.settle()
    expect(h.service.sentAs('x.txt')).toEqual([{ 'x.txt': md5(data) }])
  })
})

describe('recipient folders', () => {
  it('each entry dropped in a recipient folder is its own transfer to those recipients; the folder stays', async () => {
    h = await Harness.create()
    await h.fs.mkdir('/alice@example.com,bob@example.com', 0o755)
    const a = bytes(3000, 1)
    const b = bytes(4000, 2)
    await cp(h.fs, '/alice@example.com,bob@example.com/report.pdf', a)
    await tarX(h.fs, '/alice@example.com,bob@example.com/photos', { 'p1.jpg': b }, T)
    await h.settle()
    expect(h.service.sentAs('report.pdf')).toEqual([{ 'report.pdf': md5(a) }])
    expect(h.service.sentAs('photos')).toEqual([{ 'p1.jpg': md5(b) }])
    for (const t of h.service.completed()) expect(t.req.to).toEqual(['alice@example.com', 'bob@example.com'])
    expect(await h.ls()).toEqual(['alice@example.com,bob@example.com'])
    expect(await h.ls('/alice@example.com,bob@example.com')).toEqual([])
  })

  it('a configured contact group name makes a recipient folder', async () => {
    h = await Harness.create({ recipientGroups: ['Team'] })
    await h.fs.mkdir('/team', 0o755)
    await cp(h.fs, '/team/plan.txt', bytes(10))
    await h.settle()
    // initialize takes addresses only; the group is forwarded to once the transfer is complete.
    const t = h.service.completed()[0]
    expect(t?.req.to).toBeUndefined()
    expect(t?.forwardedTo).toEqual(['Team'])
    expect(await h.ls()).toEqual(['team'])
  })
})

describe('settling', () => {
  it('nothing is sent while a file is open or before the settle time', async () => {
    h = await Harness.create()
    const fh = await h.fs.create('/big.bin', 0o644)
    await h.fs.write('/big.bin', fh, bytes(100), 0)
    h.clock.advance(60_000)
    await h.fs.idle()
    expect(h.service.calls).toEqual([])
    expect(h.fs.status().entries[0]).toMatchObject({ name: 'big.bin', state: 'settling', note: 'open' })
    await h.fs.write('/big.bin', fh, bytes(100, 2), 100)
    await h.fs.release('/big.bin', fh)
    h.clock.advance(2999)
    await h.fs.idle()
    expect(h.service.calls).toEqual([])
    h.clock.advance(1)
    await h.fs.idle()
    expect(h.service.sentAs('big.bin')).toEqual([{ 'big.bin': md5(Buffer.concat([bytes(100), bytes(100, 2)])) }])
  })

  it('a top-level temporary name waits until renamed, and makes nothing else wait', async () => {
    h = await Harness.create()
    await cp(h.fs, '/video.mp4.crdownload', bytes(500))
    await cp(h.fs, '/other.txt', bytes(50))
    await h.settle()
    expect(h.service.completed().map((t) => t.req.subject)).toEqual(['other.txt'])
    expect(await h.ls()).toEqual(['video.mp4.crdownload'])
    expect(h.fs.status().entries[0]).toMatchObject({ name: 'video.mp4.crdownload', state: 'waiting' })
    await h.fs.rename('/video.mp4.crdownload', '/video.mp4')
    await h.settle()
    expect(h.service.sentAs('video.mp4')).toEqual([{ 'video.mp4': md5(bytes(500)) }])
  })

  it('temporary files inside a folder are left out of its transfer', async () => {
    h = await Harness.create()
    await h.fs.mkdir('/f', 0o755)
    await cp(h.fs, '/f/keep.txt', bytes(10))
    await cp(h.fs, '/f/.DS_Store', bytes(10, 2))
    await cp(h.fs, '/f/draft.txt~', bytes(10, 3))
    await h.settle()
    expect(h.service.sentAs('f')).toEqual([{ 'keep.txt': md5(bytes(10)) }])
  })

  it('an empty folder waits for content', async () => {
    h = await Harness.create()
    await h.fs.mkdir('/later', 0o755)
    await h.settle()
    expect(h.service.calls).toEqual([])
    await cp(h.fs, '/later/x', bytes(5))
    await h.settle()
    expect(h.service.sentAs('later')).toEqual([{ x: md5(bytes(5)) }])
  })

  it('a change during the upload aborts it; the new content is sent, the old transfer never completed', async () => {
    h = await Harness.create()
    await cp(h.fs, '/doc.txt', bytes(5000, 1))
    let changed = false
    h.service.beforeCall = (call) => {
      if (call.op === 'chunk' && call.chunk === 2 && !changed) {
        changed = true
        h.meanwhile(async () => {
          const fh = await h.fs.open('/doc.txt', 1)
          await h.fs.write('/doc.txt', fh, Buffer.from('CHANGED'), 0)
          await h.fs.release('/doc.txt', fh)
        })
      }
    }
    await h.settle()
    const expected = Buffer.concat([Buffer.from('CHANGED'), bytes(5000, 1).subarray(7)])
    expect(h.service.sentAs('doc.txt')).toEqual([{ 'doc.txt': md5(expected) }])
    expect(h.service.completed()).toHaveLength(1)
    expect(h.service.initializeCount('doc.txt')).toBe(2)
    // The dropped transfer is on record, never completed.
    const log = await fsp.readFile(path.join(h.dataDir, 'journal', 'abandoned.log'), 'utf8')
    expect(JSON.parse(log.trim())).toMatchObject({ entryKey: '/doc.txt', transferids: ['t1'] })
    expect(h.service.transfers.get('t1')?.completed).toBe(false)
  })

  it('a file opened for writing while its send completes is kept until closed: no write, one transfer', async () => {
    h = await Harness.create()
    await cp(h.fs, '/keep.txt', bytes(3000))
    let fh = -1
    h.service.beforeCall = (call) => {
      if (call.op === 'complete' && fh < 0) h.meanwhile(async () => { fh = await h.fs.open('/keep.txt', 2) })
    }
    await h.settle()
    expect(fh).toBeGreaterThan(0)
    expect(await h.ls()).toEqual(['keep.txt'])
    expect(h.fs.status().entries[0]?.note).toContain('waiting for open files to close')
    await h.fs.release('/keep.txt', fh)
    await h.settle()
    expect(await h.ls()).toEqual([])
    expect(h.service.completed()).toHaveLength(1)
  })

  it('bytes written through a handle opened while the send completed are not lost: they are sent again', async () => {
    h = await Harness.create()
    await cp(h.fs, '/log.txt', bytes(3000))
    let fh = -1
    h.service.beforeCall = (call) => {
      if (call.op === 'complete' && fh < 0) h.meanwhile(async () => { fh = await h.fs.open('/log.txt', 2) })
    }
    await h.settle()
    await h.fs.write('/log.txt', fh, Buffer.from('more'), 3000)
    await h.fs.release('/log.txt', fh)
    await h.settle()
    expect(h.service.sentAs('log.txt')).toEqual([
      { 'log.txt': md5(bytes(3000)) },
      { 'log.txt': md5(Buffer.concat([bytes(3000), Buffer.from('more')])) },
    ])
    expect(await h.ls()).toEqual([])
  })

  it('renaming an entry that is being sent restarts it under the new name', async () => {
    h = await Harness.create()
    await cp(h.fs, '/old.txt', bytes(4000))
    let done = false
    h.service.beforeCall = (call) => {
      if (call.op === 'chunk' && !done) {
        done = true
        h.meanwhile(() => h.fs.rename('/old.txt', '/new.txt'))
      }
    }
    await h.settle()
    expect(h.service.completed().map((t) => t.req.subject)).toEqual(['new.txt'])
    expect(h.service.sentAs('new.txt')).toEqual([{ 'new.txt': md5(bytes(4000)) }])
  })
})

describe('file system behaviour', () => {
  it('chown and chmod are stored and reported; unknown paths answer ENOENT; rmdir of a non-empty folder ENOTEMPTY', async () => {
    h = await Harness.create()
    await h.fs.mkdir('/d', 0o700)
    await cp(h.fs, '/d/f', bytes(1))
    await h.fs.chown('/d/f', 1234, 5678)
    await h.fs.chmod('/d/f', 0o600)
    expect(await h.fs.getattr('/d/f')).toMatchObject({ uid: 1234, gid: 5678 })
    expect((await h.fs.getattr('/d/f')).mode & 0o7777).toBe(0o600)
    await expect(h.fs.getattr('/nope')).rejects.toMatchObject({ code: 'ENOENT' })
    await expect(h.fs.rmdir('/d')).rejects.toMatchObject({ code: 'ENOTEMPTY' })
    await expect(h.fs.mkdir('/d', 0o755)).rejects.toMatchObject({ code: 'EEXIST' })
  })

  it('a write that would fill the disk answers ENOSPC and keeps what was written', async () => {
    let free = 100 * 1024 * 1024
    h = await Harness.create({ minFreeBytes: 64 * 1024 * 1024, freeSpaceCheckMs: 0 }, async () => free)
    const fh = await h.fs.create('/a', 0o644)
    await h.fs.write('/a', fh, bytes(1000), 0)
    free = 64 * 1024 * 1024 + 500
    await expect(h.fs.write('/a', fh, bytes(1000, 2), 1000)).rejects.toMatchObject({ code: 'ENOSPC' })
    await h.fs.release('/a', fh)
    expect(await h.readAll('/a')).toEqual(bytes(1000))
  })

  it('an entry whose write failed is never sent, across a restart, until written again in full', async () => {
    let free = 100 * 1024 * 1024
    h = await Harness.create({ minFreeBytes: 64 * 1024 * 1024, freeSpaceCheckMs: 0 }, async () => free)
    let fh = await h.fs.create('/a', 0o644)
    await h.fs.write('/a', fh, bytes(1000), 0)
    free = 64 * 1024 * 1024 + 500
    await expect(h.fs.write('/a', fh, bytes(1000, 2), 1000)).rejects.toMatchObject({ code: 'ENOSPC' })
    await h.fs.release('/a', fh)
    await h.settle()
    expect(h.service.calls).toEqual([])
    const entry = h.fs.status().entries.find((e) => e.name === 'a')!
    expect(entry.state).toBe('failed')
    expect(entry.lastError).toMatch(/ENOSPC/)
    // A restart keeps the mark; a write at an offset does not clear it.
    await h.restart()
    free = 100 * 1024 * 1024
    fh = await h.fs.open('/a', C.O_WRONLY)
    await h.fs.write('/a', fh, bytes(1000, 2), 1000)
    await h.fs.release('/a', fh)
    await h.settle()
    expect(h.service.calls).toEqual([])
    expect(h.fs.status().entries.find((e) => e.name === 'a')!.state).toBe('failed')
    // Written again from its start (cp over an existing file opens it with O_TRUNC), it is sent whole.
    fh = await h.fs.open('/a', C.O_WRONLY | C.O_TRUNC)
    await h.fs.write('/a', fh, bytes(3000, 3), 0)
    await h.fs.release('/a', fh)
    await h.settle()
    expect(h.service.sentAs('a')).toEqual([{ a: md5(bytes(3000, 3)) }])
  })

  it('a new list of contact groups does not send again an entry whose Complete was answered', async () => {
    h = await Harness.create()
    await h.fs.mkdir('/ann@example.com', 0o755)
    await cp(h.fs, '/ann@example.com/x.txt', bytes(2000, 7))
    // The group list changes (as it does when the mount first learns it, late) just as
    // Complete is answered: the entry's send must stand.
    h.service.afterCall = (call) => {
      if (call.op === 'complete') h.meanwhile(() => h.fs.updateSettings({ recipientGroups: ['Other'] }))
    }
    await h.settle()
    h.service.afterCall = null
    await h.settle()
    expect(h.service.sentAs('x.txt')).toEqual([{ 'x.txt': md5(bytes(2000, 7)) }])
    expect(await h.ls()).toEqual(['ann@example.com'])
  })

  it('a reserve larger than the whole disk says so', async () => {
    h = await Harness.create({ minFreeBytes: 64 * 1024 ** 4, freeSpaceCheckMs: 0 })
    const fh = await h.fs.create('/b', 0o644)
    await expect(h.fs.write('/b', fh, bytes(10), 0)).rejects.toMatchObject({ code: 'ENOSPC', message: expect.stringMatching(/more than the whole disk/) })
    await h.fs.release('/b', fh)
  })

  it('a file unlinked while open keeps its handle; a file renamed while open follows the rename', async () => {
    h = await Harness.create()
    const fh = await h.fs.create('/.tmp.part', 0o644)
    await h.fs.write('/.tmp.part', fh, bytes(100), 0)
    await h.fs.rename('/.tmp.part', '/final.bin')
    await h.fs.write('/.tmp.part', fh, bytes(100, 2), 100)
    h.clock.advance(10_000)
    await h.fs.idle()
    expect(h.service.calls).toEqual([])
    await h.fs.release('/.tmp.part', fh)
    await h.settle()
    expect(h.service.sentAs('final.bin')).toEqual([{ 'final.bin': md5(Buffer.concat([bytes(100), bytes(100, 2)])) }])
  })
})
