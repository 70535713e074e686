// The disk cache's room for pinned files, as plain arithmetic (pinned-files.ts), and the pinned
// list as saved in the cache folder.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { RECORD_ALIGN } from '../../src/read/block-slots.js'
import { recordBytes } from '../../src/read/cache-records.js'
import { PinnedFiles, reservedBytes, roomShortfall, type CacheRoom } from '../../src/read/pinned-files.js'

const MiB = 1024 * 1024
const GiB = 1024 * MiB

describe('room set aside for a pinned file', () => {
  it('is one record per block: a header page each, the last block padded to a page', () => {
    expect(reservedBytes(0, MiB)).toBe(0)
    expect(reservedBytes(1, MiB)).toBe(2 * RECORD_ALIGN)
    expect(reservedBytes(MiB, MiB)).toBe(recordBytes(MiB))
    expect(reservedBytes(3 * MiB + 5000, MiB)).toBe(3 * (MiB + RECORD_ALIGN) + RECORD_ALIGN + 2 * RECORD_ALIGN)
  })
})

describe('whether more files fit', () => {
  const room = (r: Partial<CacheRoom> = {}): CacheRoom => ({ budgetBytes: 10 * GiB, pinnedBytes: 0, pinnedStoredBytes: 0, otherBytes: 0, freeBytes: null, ...r })

  it('within the budget less what is pinned: fits; past it: short by the difference', () => {
    expect(roomShortfall(room({ pinnedBytes: 4 * GiB }), { reservedBytes: 6 * GiB, storedBytes: 0 })).toBeNull()
    const pinned = Math.round(9.1 * GiB)
    const adding = Math.round(2.1 * GiB)
    const short = roomShortfall(room({ pinnedBytes: pinned }), { reservedBytes: adding, storedBytes: 0 })
    expect(short?.needed).toBe(pinned + adding - 10 * GiB)
    expect(short?.message).toBe('needs 1.2 GiB more room in the cache (diskCacheBytes 10 GiB, 9.1 GiB kept)')
  })

  it('other cached files do not count against the budget: they are evicted to make room', () => {
    expect(roomShortfall(room({ otherBytes: 10 * GiB }), { reservedBytes: 10 * GiB, storedBytes: 0 })).toBeNull()
  })

  it('on the disk: what is still to be written must fit in free space plus what other files can give back', () => {
    // 3 GiB to write, 1 GiB free, 1 GiB of others: 1 GiB short.
    const short = roomShortfall(room({ freeBytes: GiB, otherBytes: GiB }), { reservedBytes: 3 * GiB, storedBytes: 0 })
    expect(short?.needed).toBe(GiB)
    expect(short?.message).toBe('needs 1 GiB more room on the disk (1 GiB free for the cache, 1 GiB of other cached files can go)')
    // The new files' bytes already cached need no more room, and are not room for others either.
    expect(roomShortfall(room({ freeBytes: GiB, otherBytes: 2 * GiB }), { reservedBytes: 3 * GiB, storedBytes: GiB })).toBeNull()
    expect(roomShortfall(room({ freeBytes: GiB, otherBytes: GiB }), { reservedBytes: 3 * GiB, storedBytes: GiB })?.needed).toBe(GiB)
  })

  it('on the disk: files pinned before and not yet fetched have their rest promised', () => {
    const before = { pinnedBytes: 4 * GiB, pinnedStoredBytes: GiB }
    expect(roomShortfall(room({ ...before, freeBytes: 4 * GiB }), { reservedBytes: GiB, storedBytes: 0 })).toBeNull()
    expect(roomShortfall(room({ ...before, freeBytes: 3 * GiB }), { reservedBytes: GiB, storedBytes: 0 })?.needed).toBe(GiB)
  })

  it('a free space below nothing (the margin already eaten) counts as none', () => {
    expect(roomShortfall(room({ freeBytes: -5 * GiB }), { reservedBytes: GiB, storedBytes: 0 })?.needed).toBe(GiB)
  })
})

describe('the pinned list', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tfs-pinned-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })
  const id = (n: number) => n.toString(16).padStart(40, '0')

  it('is read back as saved, with each file\'s room; the bytes of files on disk count as pinned once pinned', async () => {
    const list = await PinnedFiles.load(dir)
    list.addStored(id(1), 300)
    list.addStored(id(2), 50)
    await list.pin([{ id: id(1), reserved: 1000 }, { id: id(2), reserved: 2000 }])
    expect([list.reservedBytes, list.pinnedStoredBytes]).toEqual([3000, 350])
    expect(list.otherRoom(10_000, 1000)).toBe(10_000 - 3000 - (1000 - 350))
    await list.unpin([id(2)])
    expect([list.reservedBytes, list.pinnedStoredBytes]).toEqual([1000, 300])
    const again = await PinnedFiles.load(dir)
    expect([again.has(id(1)), again.has(id(2)), again.reservedBytes]).toEqual([true, false, 1000])
  })

  it('a damaged list is set aside and none are pinned; temporary files of a cut save are removed', async () => {
    await writeFile(join(dir, 'kept-v1.json'), '{"version":1,"files":{"zz":')
    await writeFile(join(dir, 'kept-v1.json.tmp-0123abcd'), 'half')
    const list = await PinnedFiles.load(dir)
    expect(list.size).toBe(0)
    expect((await readdir(dir)).sort()).toEqual([expect.stringMatching(/^kept-v1\.json\.damaged-\d{8}T\d{6}Z$/)])
    await list.pin([{ id: id(7), reserved: 5 }])
    expect(JSON.parse(await readFile(join(dir, 'kept-v1.json'), 'utf8'))).toEqual({ version: 1, files: { [id(7)]: 5 } })
  })

  it('a save that fails leaves the files as they were', async () => {
    const list = await PinnedFiles.load(join(dir, 'no-such-folder'))
    await expect(list.pin([{ id: id(3), reserved: 9 }])).rejects.toThrow()
    expect([list.has(id(3)), list.reservedBytes]).toEqual([false, 0])
  })
})
