// The NFSv3 procedures that change the tree (RFC 1813). Each goes to the core as the FUSE
// adapter's op does, so each area allows and refuses what it does on the FUSE mount. CREATE,
// WRITE and COMMIT hold a file open between calls (write-files.ts), which stands in for the
// close NFS lacks. LINK answers NOTSUPP (the FUSE mount has no link either), SYMLINK and
// MKNOD ROFS.
import type { FileSystemCore } from '../vfs/core.js'
import { isDirectory, readSattr, writePostOpAttr, writeWcc, type SetAttrs, type SetTime } from './attrs.js'
import { childPath } from './handles.js'
import { attrOfHandle, attrOrNull, readHandle, readName, type NfsContext, type Procedure } from './procedure.js'
import { NFS3, NfsStatusError, type Nfs3Status } from './status.js'
import { MAX_IO_BYTES } from './nfs3-read.js'
import { XdrError } from './xdr.js'

/** The core's op `name`, or NOTSUPP when the core has none. */
function opOf<K extends keyof FileSystemCore>(cx: NfsContext, name: K): NonNullable<FileSystemCore[K]> {
  const op = cx.core[name]
  if (typeof op !== 'function') throw new NfsStatusError(NFS3.NOTSUPP)
  return (op as (...args: unknown[]) => unknown).bind(cx.core) as NonNullable<FileSystemCore[K]>
}

const timeOf = (t: SetTime): Date | null => (t === 'now' ? new Date() : t)

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
function onName(op: (cx: NfsContext, path: string) => Promise<void>): Procedure {
  return async (r, cx) => {
    const dir = readHandle(r, cx)
    const name = readName(r)
    await attrOfHandle(cx, dir)
    await op(cx, childPath(dir, name))
    const after = await attrOrNull(cx, dir)
    return (w) => writeWcc(w, dir, after)
  }
}

const remove = onName((cx, p) => opOf(cx, 'unlink')(p))
const rmdir = onName((cx, p) => opOf(cx, 'rmdir')(p))

const rename: Procedure = async (r, cx) => {
  const fromDir = readHandle(r, cx)
  const fromName = readName(r)
  const toDir = readHandle(r, cx)
  const toName = readName(r)
  await opOf(cx, 'rename')(childPath(fromDir, fromName), childPath(toDir, toName))
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
  await opOf(cx, 'mkdir')(p, set.mode ?? 0o755)
  const [attr, dirAttr] = await Promise.all([attrOrNull(cx, p), attrOrNull(cx, dir)])
  return (w) => {
    w.bool(true).opaque(cx.handles.handleOf(p))
    writePostOpAttr(w, p, attr)
    writeWcc(w, dir, dirAttr)
  }
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
  const [attr, dirAttr] = await Promise.all([attrOrNull(cx, p), attrOrNull(cx, dir)])
  return (w) => {
    w.bool(true).opaque(cx.handles.handleOf(p))
    writePostOpAttr(w, p, attr)
    writeWcc(w, dir, dirAttr)
  }
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

/** A procedure not served: its handle read (a handle of nothing is still STALE), then `status`. */
function refused(status: Nfs3Status): Procedure {
  return async (r, cx) => {
    readHandle(r, cx)
    throw new NfsStatusError(status)
  }
}

/** The write side's procedures by number (RFC 1813). */
export const WRITE_PROCEDURES = new Map<number, Procedure>([
  [2, setattr],
  [7, write],
  [8, create],
  [9, mkdir],
  [10, refused(NFS3.ROFS)], // SYMLINK
  [11, refused(NFS3.ROFS)], // MKNOD
  [12, remove],
  [13, rmdir],
  [14, rename],
  [15, refused(NFS3.NOTSUPP)], // LINK
  [21, commit],
])
