// The NFSv3 procedures that change the tree (RFC 1813). SETATTR, REMOVE, RMDIR, RENAME and
// MKDIR go to the core as the FUSE adapter's ops do, so each area allows and refuses what it
// does on the FUSE mount. Writing file content (CREATE, WRITE, COMMIT) is not served yet: NFS
// has no close, and the outbox sends a file at its close, so those answer ROFS until a settle
// time stands in for it. LINK answers NOTSUPP (the FUSE mount has no link either), SYMLINK
// and MKNOD ROFS.
import type { FileSystemCore } from '../vfs/core.js'
import { readSattr, writePostOpAttr, writeWcc, type SetTime } from './attrs.js'
import { childPath } from './handles.js'
import { attrOfHandle, attrOrNull, readHandle, readName, type NfsContext, type Procedure } from './procedure.js'
import { NFS3, NfsStatusError, type Nfs3Status } from './status.js'

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
  [7, refused(NFS3.ROFS)], // WRITE
  [8, refused(NFS3.ROFS)], // CREATE
  [9, mkdir],
  [10, refused(NFS3.ROFS)], // SYMLINK
  [11, refused(NFS3.ROFS)], // MKNOD
  [12, remove],
  [13, rmdir],
  [14, rename],
  [15, refused(NFS3.NOTSUPP)], // LINK
  [21, refused(NFS3.ROFS)], // COMMIT
])
