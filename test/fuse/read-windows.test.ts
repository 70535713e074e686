// Read windows (src/fuse/read-windows.ts and our fuse-native patch): after a read answered
// in full, the bytes that follow it are lent to libfuse's threads, which answer the reader's
// next reads from them without calling into JS. On a real mount: the bytes are right, few
// reads reach JS, a read past a window takes it back, a file has several windows at once,
// and every lent byte comes back; the bookkeeping on its own: a window is taken back before
// its bytes are given back. The core (fixtures/window-core.ts) lives in the mount daemon,
// with the windows; the test asks it for its counts.
import { createHash } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { lend } from '../../src/read/bytes.js'
import { ReadWindows, type WindowTable } from '../../src/fuse/read-windows.js'
import { mountCore, python, run, tempDir, useMounts, waitFor, type CoreMount } from '../support/mount.js'
import { windows } from './fixtures/cores.js'

useMounts()

const KiB = 1024
const MiB = 1024 * KiB
const PIECE = 128 * KiB

/** A file's bytes: a counter pattern, so that a piece from the wrong place never matches. */
function pattern(size: number): Buffer {
  const b = Buffer.alloc(size)
  for (let i = 0; i + 4 <= size; i += 4) b.writeUInt32LE(i, i)
  return b
}

/** Waits (5 s at most) until every byte lent ahead came back, and (windowsToo) the mount holds no window. */
function allBack(m: CoreMount, opts = { windowsToo: true }): Promise<boolean> {
  return waitFor(async () => {
    const [back, lent, held] = await Promise.all([m.inspect('core.backAhead'), m.inspect('core.lentAhead'), m.inspect('windows.size')])
    return back === lent && (!opts.windowsToo || held === 0)
  }, 5000)
}

/** Reads `file` at `offsets` with O_DIRECT (no page cache: every read reaches the mount), 128 KiB each; the bytes, hex. */
async function directReads(file: string, offsets: number[]): Promise<Buffer[]> {
  const r = await python(
    `import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, ${PIECE})
for off in map(int, sys.argv[2:]):
    n = os.preadv(fd, [buf], off)
    print(buf[:n].hex())
os.close(fd)`,
    file, ...offsets.map(String),
  )
  expect(r.stderr).toBe('')
  return r.stdout.trim().split('\n').map((h) => Buffer.from(h, 'hex'))
}

describe('read windows on a real mount', () => {
  it('a reader in 128 KiB requests: the right bytes to the end of the file, most reads answered by libfuse\'s threads, every window back at close', async () => {
    const data = pattern(8 * MiB + 5000)
    const m = await mountCore(windows({ files: [['/big.bin', data]] }))
    const out = path.join(await tempDir(), 'out.bin')
    const r = await run('dd', [`if=${path.join(m.dir, 'big.bin')}`, `of=${out}`, `bs=${PIECE}`, 'iflag=direct', 'status=none'])
    expect(r.code).toBe(0)
    expect((await readFile(out)).equals(data)).toBe(true)
    const requests = Math.ceil(data.length / PIECE)
    // The first read of each block reaches JS, the other seven come from its window (the last, past the end, reaches JS too).
    const windowReads = await m.inspect<number>('windows.reads')
    const readsAt = await m.inspect<number[]>('core.readsAt')
    expect(windowReads).toBeGreaterThanOrEqual(requests / 2)
    expect(readsAt.length + windowReads).toBeGreaterThanOrEqual(requests)
    expect(readsAt.length).toBeLessThanOrEqual(requests - windowReads + 1)
    // dd closed the file: its window went back with the release.
    expect(await allBack(m)).toBe(true)
    expect(await m.inspect('core.givenBack')).toBe(await m.inspect('core.readsAtOnce'))
  })

  it('a file with several windows: a read in any of them is answered there, one past them takes them back', async () => {
    const data = pattern(8 * MiB)
    const m = await mountCore(windows({ files: [['/f.bin', data]], blocksAhead: 2 }))
    // After 0: [128 KiB, 1 MiB), [1, 2) and [2, 3) MiB are lent, three windows of one file.
    const offsets = [0, 2 * MiB + PIECE, MiB, 3 * PIECE, 3 * MiB, 3 * MiB + PIECE]
    const got = await directReads(path.join(m.dir, 'f.bin'), offsets)
    offsets.forEach((off, i) => expect(got[i]!.equals(data.subarray(off, off + PIECE)), `read at ${off}`).toBe(true))
    // 3 MiB is past all three: it reaches JS, and the windows from it answer 3 MiB + 128 KiB.
    expect(await m.inspect('core.readsAt')).toEqual([0, 3 * MiB])
    expect(await m.inspect('windows.reads')).toBe(4)
    expect(await allBack(m)).toBe(true)
  })

  it('a read outside the window reaches JS and takes back the windows behind it; reads in the window do not', async () => {
    const data = pattern(8 * MiB)
    const m = await mountCore(windows({ files: [['/f.bin', data]] }))
    const offsets = [0, PIECE, 2 * PIECE, 5 * MiB, 5 * MiB + PIECE, 2 * PIECE, 3 * PIECE]
    const got = await directReads(path.join(m.dir, 'f.bin'), offsets)
    offsets.forEach((off, i) => expect(got[i]!.equals(data.subarray(off, off + PIECE)), `read at ${off}`).toBe(true))
    // 128 KiB and 2×128 KiB were in the window after 0; 5 MiB left it; 5 MiB + 128 KiB was in the next one;
    // back at 2×128 KiB is outside it (the window behind 5 MiB was taken back at the jump), and 3×128 KiB in the new one.
    expect(await m.inspect('core.readsAt')).toEqual([0, 5 * MiB, 2 * PIECE])
    expect(await m.inspect('windows.reads')).toBe(4)
    expect(await allBack(m, { windowsToo: false })).toBe(true)
  })

  it('a handle number used again after a release finds no window of the file it was before', async () => {
    const a = pattern(2 * MiB)
    const b = Buffer.from(a.map((x) => x ^ 0x5a))
    const m = await mountCore(windows({ files: [['/a.bin', a], ['/b.bin', b]], sameFh: 42 }))
    expect((await directReads(path.join(m.dir, 'a.bin'), [0]))[0]!.equals(a.subarray(0, PIECE))).toBe(true)
    expect(await m.inspect('windows.size')).toBe(0)
    // The same handle number, and a read inside where a.bin's window was.
    const got = await directReads(path.join(m.dir, 'b.bin'), [PIECE, 2 * PIECE])
    expect(got[0]!.equals(b.subarray(PIECE, 2 * PIECE))).toBe(true)
    expect(got[1]!.equals(b.subarray(2 * PIECE, 3 * PIECE))).toBe(true)
    expect(await m.inspect('core.readsAt')).toEqual([0, PIECE])
  })

  it('more files read at once than the table holds: right bytes for each, and every window back', async () => {
    const files = 80
    const datas = Array.from({ length: files }, (_, i) => Buffer.from(pattern(MiB).map((b) => b ^ i)))
    const m = await mountCore(windows({ files: datas.map((d, i) => [`/f${i}.bin`, d]) }))
    const list = path.join(await tempDir(), 'files.txt')
    await writeFile(list, datas.map((_, i) => path.join(m.dir, `f${i}.bin`)).join('\n'))
    // Each file read in 128 KiB pieces, one piece of every file in turn, all open at once.
    const r = await python(
      `import hashlib, mmap, os, sys
paths = open(sys.argv[1]).read().split('\\n')
fds = [os.open(p, os.O_RDONLY | os.O_DIRECT) for p in paths]
hs = [hashlib.sha256() for _ in paths]
buf = mmap.mmap(-1, ${PIECE})
for off in range(0, ${MiB}, ${PIECE}):
    for fd, h in zip(fds, hs):
        n = os.preadv(fd, [buf], off)
        h.update(buf[:n])
for fd in fds:
    os.close(fd)
print(' '.join(h.hexdigest() for h in hs))`,
      list,
    )
    expect(r.stderr).toBe('')
    expect(r.stdout.trim().split(' ')).toEqual(datas.map((d) => createHash('sha256').update(d).digest('hex')))
    expect(await m.inspect('windows.reads')).toBeGreaterThan(0)
    expect(await allBack(m)).toBe(true)
  })
})

/** A table that records what it is asked, with room for `room` windows. */
function fakeTable(room: number): WindowTable & { events: string[]; held: Map<string, Buffer> } {
  const held = new Map<string, Buffer>()
  const events: string[] = []
  return {
    events,
    held,
    lend(fh, start, bytes) {
      const key = `${fh}@${start}`
      if (!held.has(key) && held.size >= room) {
        events.push(`full ${key}`)
        return false
      }
      held.set(key, bytes)
      events.push(`lend ${key}`)
      return true
    },
    withdraw(fh, start) {
      events.push(`withdraw ${fh}@${start}`)
      const keys = [...held.keys()].filter((k) => (start < 0 ? k.startsWith(`${fh}@`) : k === `${fh}@${start}`))
      for (const k of keys) held.delete(k)
      return keys.length > 0
    },
    reads: () => 0,
  }
}

/** Bytes lent to the windows, each telling the table's events when it comes back. */
function lentBytes(name: string, events: string[], parts = 1, size = 16): Buffer[] {
  return lend(Array.from({ length: parts }, () => Buffer.alloc(size)), () => events.push(`back ${name}`))
}

describe('ReadWindows', () => {
  it('takes a window back from the table before giving its bytes back, at close and when the file gets others', () => {
    const table = fakeTable(4)
    const w = new ReadWindows(table)
    w.open(7, [{ start: 100, bytes: lentBytes('a', table.events) }])
    w.open(7, [{ start: 200, bytes: lentBytes('b', table.events) }])
    w.close(7)
    w.close(7)
    expect(table.events).toEqual(['lend 7@100', 'withdraw 7@100', 'back a', 'lend 7@200', 'withdraw 7@-1', 'back b'])
    expect(w.size).toBe(0)
  })

  it('a file\'s windows: one over the same bytes stays lent (the new bytes go back), the others are taken back or lent', () => {
    const table = fakeTable(8)
    const w = new ReadWindows(table)
    w.open(7, [{ start: 0, bytes: lentBytes('a', table.events) }, { start: 16, bytes: lentBytes('b', table.events) }])
    expect(w.size).toBe(2)
    table.events.length = 0
    w.open(7, [{ start: 16, bytes: lentBytes('b again', table.events) }, { start: 32, bytes: lentBytes('c', table.events) }])
    expect(table.events).toEqual(['back b again', 'withdraw 7@0', 'back a', 'lend 7@32'])
    expect([...table.held.keys()].sort()).toEqual(['7@16', '7@32'])
    // Same start, other length: not the same window.
    table.events.length = 0
    w.open(7, [{ start: 16, bytes: lentBytes('b longer', table.events, 1, 32) }])
    expect(table.events).toEqual(['withdraw 7@16', 'back b', 'withdraw 7@32', 'back c', 'lend 7@16'])
    w.closeAll()
    expect(table.held.size).toBe(0)
  })

  it('a read that reached JS takes back the windows of its file that end at or before it, and no others', () => {
    const table = fakeTable(8)
    const w = new ReadWindows(table)
    w.open(7, [{ start: 0, bytes: lentBytes('a', table.events) }, { start: 16, bytes: lentBytes('b', table.events) }])
    w.open(8, [{ start: 0, bytes: lentBytes('other', table.events) }])
    table.events.length = 0
    w.passed(7, 8)
    expect(table.events).toEqual([])
    w.passed(7, 16)
    expect(table.events).toEqual(['withdraw 7@0', 'back a'])
    w.passed(7, 40)
    expect(table.events).toEqual(['withdraw 7@0', 'back a', 'withdraw 7@16', 'back b'])
    expect([...table.held.keys()]).toEqual(['8@0'])
    expect(w.size).toBe(1)
  })

  it('with the table full, the oldest file\'s windows go; bytes in several parts or none are not lent', () => {
    const table = fakeTable(2)
    const w = new ReadWindows(table)
    w.open(1, [{ start: 0, bytes: lentBytes('one', table.events) }])
    w.open(2, [{ start: 0, bytes: lentBytes('two', table.events) }])
    w.open(3, [{ start: 0, bytes: lentBytes('three', table.events) }])
    expect([...table.held.keys()]).toEqual(['2@0', '3@0'])
    expect(table.events.slice(2)).toEqual(['full 3@0', 'withdraw 1@-1', 'back one', 'lend 3@0'])
    table.events.length = 0
    w.open(4, [{ start: 0, bytes: lentBytes('parts', table.events, 2) }])
    w.open(5, [{ start: 0, bytes: lend([Buffer.alloc(0)], () => table.events.push('back empty')) }])
    expect(table.events).toEqual(['back parts', 'back empty'])
    w.closeAll()
    expect(table.held.size).toBe(0)
    expect(w.size).toBe(0)
  })

  it('a table that stays full even with this module\'s windows gone: the bytes go back, nothing is held', () => {
    const table = fakeTable(0)
    const w = new ReadWindows(table)
    w.open(1, [{ start: 0, bytes: lentBytes('x', table.events) }])
    expect(table.events).toEqual(['full 1@0', 'back x'])
    expect(w.size).toBe(0)
  })
})
