// The router over top-level areas, with two small areas made here: each path reaches its
// area once with the names below it, open files of every area share one handle table,
// and what no area does is answered alike (EROFS, EINVAL, ENOENT, EXDEV between areas
// that move by copy).
import { describe, expect, it } from 'vitest'
import type { Area, Names, OpenNode } from '../../src/vfs/areas/area.js'
import { memoryNode } from '../../src/vfs/areas/area.js'
import { FsError, type NodeAttr, type StatFs } from '../../src/vfs/core.js'
import { AreaRouter } from '../../src/vfs/router.js'
import { toBuffer } from '../../src/read/bytes.js'

const S_IFDIR = 0o040000
const S_IFREG = 0o100000
const attr = (mode: number): NodeAttr => ({ mode, size: 0, nlink: 1, uid: 0, gid: 0, mtime: new Date(0), atime: new Date(0), ctime: new Date(0) })

/** A read-only area of files named in `files`, noting each call it gets. */
class NotesArea implements Area {
  readonly calls: Array<[string, Names]> = []
  released = 0
  constructor(private readonly files: Record<string, string>, readonly movesByCopy = false) {}
  async getattr(names: Names): Promise<NodeAttr> {
    this.calls.push(['getattr', names])
    if (names.length === 0) return attr(S_IFDIR | 0o555)
    if (names.length === 1 && names[0]! in this.files) return attr(S_IFREG | 0o444)
    throw new FsError('ENOENT')
  }
  async readdir(names: Names): Promise<string[]> {
    this.calls.push(['readdir', names])
    return Object.keys(this.files)
  }
  async open(names: Names): Promise<OpenNode> {
    this.calls.push(['open', names])
    const text = this.files[names[0] ?? '']
    if (text === undefined) throw new FsError('ENOENT')
    const node = memoryNode(Buffer.from(text))
    return { ...node, release: async () => void this.released++ }
  }
}

/** An area that takes renames within itself. */
class MovingArea extends NotesArea {
  async rename(from: Names, to: Names): Promise<void> {
    this.calls.push(['rename', [...from, '->', ...to]])
  }
}

class TestRouter extends AreaRouter {
  constructor(areas: Map<string, Area>) {
    super()
    this.areas = areas
  }
  protected rootAttr(): NodeAttr { return attr(S_IFDIR | 0o555) }
  async statfs(): Promise<StatFs> { throw new FsError('ENOSYS') }
}

function setup() {
  const notes = new NotesArea({ 'a.txt': 'alpha', 'b.txt': 'beta' })
  const box = new MovingArea({ 'c.txt': 'gamma' }, true)
  const router = new TestRouter(new Map<string, Area>([['notes', notes], ['box', box]]))
  return { notes, box, router }
}

describe('the router over areas', () => {
  it('lists the areas at the root, in order, and hands each path to its area once, as the names below it', async () => {
    const { notes, router } = setup()
    expect(await router.readdir('/')).toEqual(['notes', 'box'])
    expect((await router.getattr('/')).mode).toBe(S_IFDIR | 0o555)
    await router.getattr('/notes//a.txt/')
    await router.readdir('/notes')
    expect(notes.calls).toEqual([['getattr', ['a.txt']], ['readdir', []]])
  })

  it('keeps the open files of every area in one table: distinct numbers, each read from its own area', async () => {
    const { notes, box, router } = setup()
    const a = await router.open('/notes/a.txt', 0)
    const c = await router.open('/box/c.txt', 0)
    expect(a).not.toBe(c)
    expect(toBuffer(await router.read('', c, 0, 100)).toString()).toBe('gamma')
    expect(toBuffer(await router.read('', a, 1, 3)).toString()).toBe('lph')
    expect(router.openHandles).toBe(2)
    await router.release('', a)
    await router.release('', c)
    expect([notes.released, box.released, router.openHandles]).toEqual([1, 1, 0])
    await expect(router.read('', a, 0, 1)).rejects.toMatchObject({ code: 'EBADF' })
    // A node that does not write answers a write with EBADF, and a truncate with EROFS.
    const again = await router.open('/notes/b.txt', 0)
    await expect(router.write('', again, Buffer.from('x'), 0)).rejects.toMatchObject({ code: 'EBADF' })
    await expect(router.ftruncate('', again, 0)).rejects.toMatchObject({ code: 'EROFS' })
  })

  it('answers what no area does alike: unknown names ENOENT, changes EROFS, links EINVAL, only user.* attributes', async () => {
    const { router } = setup()
    await expect(router.getattr('/nope')).rejects.toMatchObject({ code: 'ENOENT' })
    await expect(router.open('/nope/x', 0)).rejects.toMatchObject({ code: 'ENOENT' })
    await expect(router.open('/', 0)).rejects.toMatchObject({ code: 'EISDIR' })
    for (const change of [
      () => router.create('/notes/new', 0o644), () => router.mkdir('/notes/d', 0o755), () => router.unlink('/notes/a.txt'),
      () => router.chmod('/notes/a.txt', 0o600), () => router.mkdir('/top', 0o755), () => router.setxattr('/notes/a.txt', 'user.x', Buffer.from('1')),
    ]) await expect(change()).rejects.toMatchObject({ code: 'EROFS' })
    await expect(router.readlink('/notes/a.txt')).rejects.toMatchObject({ code: 'EINVAL' })
    await expect(router.getxattr('/notes/a.txt', 'security.selinux')).rejects.toMatchObject({ code: 'EOPNOTSUPP' })
    await expect(router.getxattr('/notes/a.txt', 'user.x')).rejects.toMatchObject({ code: 'ENODATA' })
    await expect(router.getxattr('/notes/zzz', 'user.x')).rejects.toMatchObject({ code: 'ENOENT' })
    expect(await router.listxattr('/notes/a.txt')).toEqual([])
  })

  it('renames within an area that takes them; between areas EXDEV when one moves by copy, else EROFS', async () => {
    const { box, router } = setup()
    await router.rename('/box/c.txt', '/box/d.txt')
    expect(box.calls.at(-1)).toEqual(['rename', ['c.txt', '->', 'd.txt']])
    await expect(router.rename('/notes/a.txt', '/notes/z.txt')).rejects.toMatchObject({ code: 'EROFS' })
    await expect(router.rename('/notes/a.txt', '/box/a.txt')).rejects.toMatchObject({ code: 'EXDEV' })
    await expect(router.rename('/box/c.txt', '/elsewhere')).rejects.toMatchObject({ code: 'EXDEV' })
    await expect(router.rename('/notes/a.txt', '/elsewhere')).rejects.toMatchObject({ code: 'EROFS' })
  })

  it('a new kind of top-level folder is one more area in the map', async () => {
    const { notes, box } = setup()
    const extra = new NotesArea({ 'e.txt': 'epsilon' })
    const router = new TestRouter(new Map<string, Area>([['notes', notes], ['extra', extra], ['box', box]]))
    expect(await router.readdir('/')).toEqual(['notes', 'extra', 'box'])
    const fh = await router.open('/extra/e.txt', 0)
    expect(toBuffer(await router.read('', fh, 0, 100)).toString()).toBe('epsilon')
  })
})
