// The NFSv3 procedures that change the tree (RFC 1813). Each goes to the core as the FUSE
// adapter's op does, so each area allows and refuses what it does on the FUSE mount. CREATE,
// WRITE and COMMIT hold a file open between calls (write-files.ts), which stands in for the
// close NFS lacks. On the FUSE mount the kernel checks names before the core is asked (a name
// a change makes must be free, one it acts on must be there and of its kind): with no kernel
// in front of the core here, those checks are made here, so that the same errors come first.
// LINK and MKNOD answer PERM, as the FUSE mount does (no hard links; no devices, FIFOs or
// sockets in a transfer).
import type { FileSystemCore, NodeAttr } from '../vfs/core.js'
import { FTYPE, isDirectory, readSattr, writePostOpAttr, writeWcc, type SetAttrs, type SetTime } from './attrs.js'
import { childPath } from './handles.js'
import { attrOf, attrOfHandle, attrOrNull, readHandle, readName, type NfsContext, type Procedure } from './procedure.js'
import { NFS3, NfsStatusError } from './status.js'
import { MAX_IO_BYTES } from './nfs3-read.js'
import { XdrError, type XdrWriter } from './xdr.js'

/** The core's op `name`, or NOTSUPP when the core has none. */
function opOf<K extends keyof FileSystemCore>(cx: NfsContext, name: K): NonNullable<FileSystemCore[K]> {
  const op = cx.core[name]
  if (typeof op !== 'function') throw new NfsStatusError(NFS3.NOTSUPP)
  return (op as (...args: unknown[]) => unknown).bind(cx.core) as NonNullable<FileSystemCore[K]>
}

const timeOf = (t: SetTime): Date | null => (t === 'now' ? new Date() : t)

/** PATH_MAX: the longest symbolic link target taken. */
const TARGET_MAX_BYTES = 4096

/** The name a change makes must be free: EEXIST, as the kernel answers before the FUSE mount is asked. */
async function mustBeFree(cx: NfsContext, p: string): Promise<void> {
  if (await attrOrNull(cx, p)) throw new NfsStatusError(NFS3.EXIST)
}

/** The entry a change acts on, there (ENOENT otherwise, as the kernel's lookup answers). */
const mustExist = (cx: NfsContext, p: string): Promise<NodeAttr> => attrOf(cx, p)

/** The answer of a procedure that made an entry (CREATE, MKDIR, SYMLINK): its handle and attributes, then the folder's wcc_data. */
async function madeReply(cx: NfsContext, p: string, dir: string): Promise<(w: XdrWriter) => void> {
  const [attr, dirAttr] = await Promise.all([attrOrNull(cx, p), attrOrNull(cx, dir)])
  return (w) => {
    w.bool(true).opaque(cx.handles.handleOf(p))
    writePostOpAttr(w, p, attr)
    writeWcc(w, dir, dirAttr)
  }
}

const setattr: Procedure = async (r, cx) => {
  const p = readHandle(r, cx)
  const set = readSattr(r)
  const guard = r.bool() ? { seconds: r.uint32(), nanos: r.uint32() } : null
  const before = await attrOfHandle(cx, p)
  if (guard && Math.floor(before.ctime.getTime() / 1000) !== guard.seconds) throw new NfsStatusError(NFS3.NOT_SYNC)
  if (set.size !== null) await opOf(cx, 'truncate')(p, set.size)
  if (set.mode !== null) await opOf(cx, 'chmod')(p, set.mode)
  if (set.uid !== null || set.gid !== null) await opOf(cx, 'chown')(p, set.uid ?? before.uid, set.gid ?? before.gid)
  if (set.atime !== null || set.mtime !== null) await opOf(cx, 'utimens')(p, timeOf(set.atime), timeOf(set.mtime))
  const after = await attrOrNull(cx, p)
  return (w) => writeWcc(w, p, after)
}

/** A procedure on one name in a folder whose only result is the folder's wcc_data. */
function onName(op: (cx: NfsContext, path: string, attr: NodeAttr) => Promise<void>): Procedure {
  return async (r, cx) => {
    const dir = readHandle(r, cx)
    const name = readName(r)
    await attrOfHandle(cx, dir)
    const p = childPath(dir, name)
    await op(cx, p, await mustExist(cx, p))
    const after = await attrOrNull(cx, dir)
    return (w) => writeWcc(w, dir, after)
  }
}

// unlink(2) of a folder is EISDIR and rmdir(2) of a file ENOTDIR, whatever the folder allows.
const remove = onName(async (cx, p, a) => {
  if (isDirectory(a)) throw new NfsStatusError(NFS3.ISDIR)
  await opOf(cx, 'unlink')(p)
})
const rmdir = onName(async (cx, p, a) => {
  if (!isDirectory(a)) throw new NfsStatusError(NFS3.NOTDIR)
  await opOf(cx, 'rmdir')(p)
})

const rename: Procedure = async (r, cx) => {
  const fromDir = readHandle(r, cx)
  const fromName = readName(r)
  const toDir = readHandle(r, cx)
  const toName = readName(r)
  const from = childPath(fromDir, fromName)
  const to = childPath(toDir, toName)
  // A folder replaces only a folder, a file only a file (rename(2)'s EISDIR and ENOTDIR).
  const moved = await mustExist(cx, from)
  const replaced = await attrOrNull(cx, to)
  if (replaced && isDirectory(replaced) !== isDirectory(moved)) throw new NfsStatusError(isDirectory(replaced) ? NFS3.ISDIR : NFS3.NOTDIR)
  await opOf(cx, 'rename')(from, to)
  const [fromAttr, toAttr] = await Promise.all([attrOrNull(cx, fromDir), attrOrNull(cx, toDir)])
  return (w) => {
    writeWcc(w, fromDir, fromAttr)
    writeWcc(w, toDir, toAttr)
  }
}

const mkdir: Procedure = async (r, cx) => {
  const dir = readHandle(r, cx)
  const name = readName(r)
  const set = readSattr(r)
  await attrOfHandle(cx, dir)
  const p = childPath(dir, name)
  await mustBeFree(cx, p)
  await opOf(cx, 'mkdir')(p, set.mode ?? 0o755)
  return madeReply(cx, p, dir)
}

const UNCHECKED = 0
const GUARDED = 1
const EXCLUSIVE = 2

const create: Procedure = async (r, cx) => {
  const dir = readHandle(r, cx)
  const name = readName(r)
  const how = r.uint32()
  let set: SetAttrs | null = null
  let verifier: string | null = null
  if (how === UNCHECKED || how === GUARDED) set = readSattr(r)
  else if (how === EXCLUSIVE) verifier = r.fixed(8).toString('hex')
  else throw new XdrError(`createmode3 ${how}`)
  await attrOfHandle(cx, dir)
  const p = childPath(dir, name)
  const existing = await attrOrNull(cx, p)
  if (existing) {
    // A retransmitted EXCLUSIVE create finds the file it made; any other finds it taken.
    const again = how === EXCLUSIVE && cx.writes.createVerifiers.get(p) === verifier
    if (how === GUARDED || (how === EXCLUSIVE && !again)) throw new NfsStatusError(NFS3.EXIST)
    if (isDirectory(existing)) throw new NfsStatusError(NFS3.ISDIR)
    if (set?.size != null) await opOf(cx, 'truncate')(p, set.size)
  } else {
    const fh = await opOf(cx, 'create')(p, set?.mode ?? 0o644)
    cx.writes.adopt(p, fh)
    if (verifier) cx.writes.createVerifiers.set(p, verifier)
  }
  return madeReply(cx, p, dir)
}

const write: Procedure = async (r, cx) => {
  const p = readHandle(r, cx)
  const offset = r.uint64()
  const count = r.uint32()
  const stable = r.uint32()
  const data = r.opaque(MAX_IO_BYTES)
  if (count > data.length || stable > 2) throw new NfsStatusError(NFS3.INVAL)
  const before = await attrOfHandle(cx, p)
  if (isDirectory(before)) throw new NfsStatusError(NFS3.ISDIR)
  const done = await cx.writes.write(p, data.subarray(0, count), offset, stable)
  const after = await attrOrNull(cx, p)
  return (w) => {
    writeWcc(w, p, after)
    w.uint32(done.count).uint32(done.committed).fixed(cx.writes.verifier)
  }
}

const commit: Procedure = async (r, cx) => {
  const p = readHandle(r, cx)
  r.uint64() // offset and count: the whole file is committed
  r.uint32()
  await attrOfHandle(cx, p)
  await cx.writes.commit(p)
  const after = await attrOrNull(cx, p)
  return (w) => {
    writeWcc(w, p, after)
    w.fixed(cx.writes.verifier)
  }
}

const symlink: Procedure = async (r, cx) => {
  const dir = readHandle(r, cx)
  const name = readName(r)
  readSattr(r) // a link's attributes: the tree gives links their own
  const target = r.string(TARGET_MAX_BYTES)
  await attrOfHandle(cx, dir)
  const p = childPath(dir, name)
  await mustBeFree(cx, p)
  await opOf(cx, 'symlink')(target, p)
  return madeReply(cx, p, dir)
}

const mknod: Procedure = async (r, cx) => {
  const dir = readHandle(r, cx)
  const name = readName(r)
  // MKNOD makes devices, sockets and FIFOs; a regular file, a folder or a link is CREATE's, MKDIR's or SYMLINK's.
  const type = r.uint32()
  if (type === FTYPE.CHR || type === FTYPE.BLK) {
    readSattr(r)
    r.uint32() // specdata3: the device's numbers
    r.uint32()
  } else if (type === FTYPE.SOCK || type === FTYPE.FIFO) {
    readSattr(r)
  } else {
    throw new NfsStatusError(NFS3.BADTYPE)
  }
  await attrOfHandle(cx, dir)
  await mustBeFree(cx, childPath(dir, name))
  // FIFOs, sockets and devices have no place in a transfer: the FUSE mount's EPERM.
  throw new NfsStatusError(NFS3.PERM)
}

const link: Procedure = async (r, cx) => {
  const file = readHandle(r, cx)
  const dir = readHandle(r, cx)
  const name = readName(r)
  await attrOfHandle(cx, file)
  await attrOfHandle(cx, dir)
  await mustBeFree(cx, childPath(dir, name))
  // No hard links here: link(2)'s EPERM for a file system that makes none, which the FUSE
  // mount gives too (the kernel answers so for a FUSE file system without a link op).
  throw new NfsStatusError(NFS3.PERM)
}

/** The write side's procedures by number (RFC 1813). */
export const WRITE_PROCEDURES = new Map<number, Procedure>([
  [2, setattr],
  [7, write],
  [8, create],
  [9, mkdir],
  [10, symlink],
  [11, mknod],
  [12, remove],
  [13, rmdir],
  [14, rename],
  [15, link],
  [21, commit],
])
