// One call to its reply, on a small core made here: a procedure that never answers is
// answered NFS3ERR_IO at its deadline, the core's errors become the NFS status the FUSE mount's
// errno says, with the failure's results in their right shape, and only the owner (or root)
// is served.
import { describe, expect, it } from 'vitest'
import type { Area, Names, OpenNode } from '../../src/vfs/areas/area.js'
import { memoryNode } from '../../src/vfs/areas/area.js'
import { FsError, type NodeAttr, type StatFs } from '../../src/vfs/core.js'
import { AreaRouter } from '../../src/vfs/router.js'
import { silentLogger } from '../../src/base/log.js'
import { dispatch } from '../../src/nfs/dispatch.js'
import { FileHandles } from '../../src/nfs/handles.js'
import { OpenFiles } from '../../src/nfs/open-files.js'
import type { NfsContext } from '../../src/nfs/procedure.js'
import { AUTH_NONE, AUTH_UNIX, type Credential, type RpcCall } from '../../src/nfs/rpc.js'
import { Listings } from '../../src/nfs/listings.js'
import { WriteFiles } from '../../src/nfs/write-files.js'
import { XdrReader, XdrWriter } from '../../src/nfs/xdr.js'

const S_IFDIR = 0o040000
const S_IFREG = 0o100000
const OWNER = 501
const attr = (mode: number, size = 0): NodeAttr => ({ mode, size, nlink: 1, uid: OWNER, gid: 20, mtime: new Date(0), atime: new Date(0), ctime: new Date(0) })

/** `files/` of one file, and `hangs/`, whose every answer never comes. */
class FilesArea implements Area {
  constructor(private readonly hangs: boolean) {}
  async getattr(names: Names): Promise<NodeAttr> {
    if (this.hangs) return new Promise<NodeAttr>(() => {})
    if (names.length === 0) return attr(S_IFDIR | 0o755)
    if (names[0] === 'a.txt') return attr(S_IFREG | 0o644, 5)
    throw new FsError('ENOENT')
  }
  async readdir(): Promise<string[]> {
    return ['a.txt']
  }
  async open(): Promise<OpenNode> {
    return memoryNode(Buffer.from('alpha'))
  }
}

/** `list/`: a folder whose names the test changes between pages. */
class ListArea implements Area {
  names = Array.from({ length: 10 }, (_, i) => `n${i}`)
  /** readdir calls so far. */
  listed = 0
  async getattr(names: Names): Promise<NodeAttr> {
    return names.length === 0 ? attr(S_IFDIR | 0o755) : attr(S_IFREG | 0o644)
  }
  async readdir(): Promise<string[]> {
    this.listed++
    return [...this.names]
  }
  async open(): Promise<OpenNode> {
    throw new FsError('ENOENT')
  }
}

class SmallCore extends AreaRouter {
  readonly list = new ListArea()
  constructor() {
    super()
    this.areas = new Map<string, Area>([['files', new FilesArea(false)], ['hangs', new FilesArea(true)], ['list', this.list]])
  }
  protected rootAttr(): NodeAttr { return attr(S_IFDIR | 0o755) }
  async statfs(): Promise<StatFs> { return { bsize: 4096, frsize: 4096, blocks: 10, bfree: 5, bavail: 5, files: 9, ffree: 9, favail: 9, namemax: 255 } }
}

async function context(): Promise<NfsContext> {
  const core = new SmallCore()
  return { core, handles: await FileHandles.open(null), reads: new OpenFiles(core, silentLogger), writes: new WriteFiles(core, silentLogger), listings: new Listings(), log: silentLogger, ownerUid: OWNER }
}

const DEADLINES = { readTimeoutMs: 200, writeTimeoutMs: 200, metadataTimeoutMs: 200 }
const unix = (uid: number): Credential => ({ flavor: AUTH_UNIX, stamp: 0, machine: 'mac', uid, gid: 20, gids: [] })

/** The reply after the record mark room and its xid (checked): REPLY, accepted or not, and what follows. */
async function reply(cx: NfsContext, proc: number, args: (w: XdrWriter) => void, cred: Credential = unix(OWNER), prog = 100003): Promise<XdrReader> {
  const w = new XdrWriter()
  args(w)
  const call: RpcCall = { xid: 1, prog, vers: 3, proc, cred, args: new XdrReader(Buffer.from(w.bytes())) }
  const r = new XdrReader(await dispatch(call, cx, DEADLINES))
  r.uint32() // record mark room
  expect(r.uint32()).toBe(call.xid)
  return r
}

/** An accepted SUCCESS reply's results. */
async function results(cx: NfsContext, proc: number, args: (w: XdrWriter) => void, cred?: Credential): Promise<XdrReader> {
  const r = await reply(cx, proc, args, cred)
  expect([r.uint32(), r.uint32(), r.uint32(), r.uint32(), r.uint32()]).toEqual([1, 0, 0, 0, 0]) // REPLY, MSG_ACCEPTED, null verifier, SUCCESS
  return r
}

describe('dispatch', () => {
  it('answers NFS3ERR_IO at the deadline when the core never answers', async () => {
    const cx = await context()
    const started = Date.now()
    const r = await results(cx, 1, (w) => w.opaque(cx.handles.handleOf('/hangs/x')))
    expect(r.uint32()).toBe(5)
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it('gives the core\'s errors as NFS statuses, with the failure\'s results in their shape', async () => {
    const cx = await context()
    const files = cx.handles.handleOf('/files')
    const lookup = await results(cx, 3, (w) => w.opaque(files).string('missing'))
    expect([lookup.uint32(), lookup.uint32(), lookup.remaining]).toEqual([2, 0, 0]) // NOENT, no dir attributes
    // The router's read-only answer for a change it has no area for: EROFS, then wcc_data.
    const mkdir = await results(cx, 9, (w) => w.opaque(files).string('new').bool(false).bool(false).bool(false).bool(false).uint32(0).uint32(0))
    expect([mkdir.uint32(), mkdir.uint32(), mkdir.uint32(), mkdir.remaining]).toEqual([30, 0, 0, 0])
    const rename = await results(cx, 14, (w) => w.opaque(files).string('a.txt').opaque(files).string('b.txt'))
    expect([rename.uint32(), rename.remaining]).toEqual([30, 16])
    // No hard links: PERM, as the FUSE mount answers, then the file's attributes and the folder's wcc_data.
    const link = await results(cx, 15, (w) => w.opaque(cx.handles.handleOf('/files/a.txt')).opaque(files).string('l'))
    expect([link.uint32(), link.remaining]).toEqual([1, 12])
    const stale = await results(cx, 1, (w) => w.opaque(cx.handles.handleOf('/files/gone.txt')))
    expect(stale.uint32()).toBe(70)
  })

  it('resumes a listing after the entry its cookie names, though a new entry moved every one down', async () => {
    const cx = await context()
    const list = cx.handles.handleOf('/list')
    /** One READDIR page of at most `count` bytes: its names, last cookie and eof. */
    const readdir = async (cookie: bigint, count: number): Promise<{ names: string[]; last: bigint; eof: boolean }> => {
      const r = await results(cx, 16, (w) => w.opaque(list).uint64(cookie).fixed(Buffer.alloc(8)).uint32(count))
      expect(r.uint32()).toBe(0)
      if (r.bool()) r.fixed(84)
      r.fixed(8)
      const names: string[] = []
      let last = cookie
      while (r.bool()) {
        r.bigUint64()
        names.push(r.string(255))
        last = r.bigUint64()
      }
      return { names, last, eof: r.bool() }
    }
    // Room for six entries of short names: ".", "..", n0 to n3.
    const first = await readdir(0n, 108 + 6 * 28)
    expect(first).toMatchObject({ names: ['.', '..', 'n0', 'n1', 'n2', 'n3'], eof: false })
    ;(cx.core as SmallCore).list.names.unshift('new')
    const rest = await readdir(first.last, 8192)
    expect(rest).toMatchObject({ names: ['n4', 'n5', 'n6', 'n7', 'n8', 'n9'], eof: true })
    // The entry a cookie names is gone: the client is told, rather than given a wrong page.
    ;(cx.core as SmallCore).list.names.splice(4, 1)
    const gone = await results(cx, 16, (w) => w.opaque(list).uint64(first.last).fixed(Buffer.alloc(8)).uint32(8192))
    expect(gone.uint32()).toBe(10003)
  })

  it('cuts the pages after the first from the listing their verifier names, without listing the folder again', async () => {
    const cx = await context()
    const list = cx.handles.handleOf('/list')
    const core = cx.core as SmallCore
    /** One READDIRPLUS page of at most `count` bytes: its verifier, names, last cookie and eof. */
    const page = async (cookie: bigint, verifier: Buffer, count: number): Promise<{ verifier: Buffer; names: string[]; last: bigint; eof: boolean }> => {
      const r = await results(cx, 17, (w) => w.opaque(list).uint64(cookie).fixed(verifier).uint32(count).uint32(count))
      expect(r.uint32()).toBe(0)
      if (r.bool()) r.fixed(84)
      const answered = Buffer.from(r.fixed(8))
      const names: string[] = []
      let last = cookie
      while (r.bool()) {
        r.bigUint64()
        names.push(r.string(255))
        last = r.bigUint64()
        if (r.bool()) r.fixed(84)
        if (r.bool()) r.opaque(64)
      }
      return { verifier: answered, names, last, eof: r.bool() }
    }
    const first = await page(0n, Buffer.alloc(8), 700)
    expect(first.eof).toBe(false)
    expect(first.verifier.equals(Buffer.alloc(8))).toBe(false)
    expect(core.list.listed).toBe(1)
    core.list.names.push('late')
    const rest = await page(first.last, first.verifier, 8192)
    // The listing the first page took: without the entry that came after it, and no second readdir.
    expect([...first.names, ...rest.names]).toEqual(['.', '..', ...Array.from({ length: 10 }, (_, i) => `n${i}`)])
    expect(rest.eof).toBe(true)
    expect(core.list.listed).toBe(1)
    // A verifier this server does not hold (an earlier start's) takes a new listing.
    const again = await page(first.last, Buffer.alloc(8, 1), 8192)
    expect(again.names).toContain('late')
    expect(core.list.listed).toBe(2)
  })

  it('reads a file with its attributes and eof', async () => {
    const cx = await context()
    const r = await results(cx, 6, (w) => w.opaque(cx.handles.handleOf('/files/a.txt')).uint64(0).uint32(100))
    expect(r.uint32()).toBe(0)
    expect(r.bool()).toBe(true)
    r.fixed(84)
    expect([r.uint32(), r.bool(), r.opaque(100).toString()]).toEqual([5, true, 'alpha'])
    await cx.reads.closeAll()
  })

  it('serves the owner and root, answers NFS3ERR_ACCES to another uid and AUTH_TOOWEAK to AUTH_NONE', async () => {
    const cx = await context()
    const root = cx.handles.handleOf('/')
    expect((await results(cx, 1, (w) => w.opaque(root), unix(0))).uint32()).toBe(0)
    expect((await results(cx, 1, (w) => w.opaque(root), unix(OWNER))).uint32()).toBe(0)
    expect((await results(cx, 1, (w) => w.opaque(root), unix(502))).uint32()).toBe(13)
    const none = await reply(cx, 1, (w) => w.opaque(root), { flavor: AUTH_NONE })
    expect([none.uint32(), none.uint32(), none.uint32(), none.uint32()]).toEqual([1, 1, 1, 5]) // REPLY, MSG_DENIED, AUTH_ERROR, AUTH_TOOWEAK
    // NULL needs no credential.
    const ping = await reply(cx, 0, () => {}, { flavor: AUTH_NONE })
    expect([ping.uint32(), ping.uint32(), ping.uint32(), ping.uint32(), ping.uint32(), ping.remaining]).toEqual([1, 0, 0, 0, 0, 0])
  })
})
