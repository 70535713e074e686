// An Area is one top-level name of the mount (inbox, sent, outbox, by-id, search, .status) and
// everything below it. The router (../router.ts) parses each path once and hands the
// area the names below its own: [] is the area's own node, ['a', 'b'] is `/<area>/a/b`.
// An area answers only the operations it has; the router answers the rest the same way
// everywhere (a change is EROFS, a link is EINVAL). Opening gives an OpenNode, which the
// router keeps in the mount's one handle table.
import type { Bytes } from '../../read/bytes.js'
import type { LentAhead } from '../../read/source.js'
import { FsError, type NodeAttr, type OpenFlags } from '../core.js'
import type { PinTarget } from '../pinning.js'
import type { Shown } from '../shown-xattr.js'

/** The access bits of open(2)'s flags (O_RDONLY, O_WRONLY or O_RDWR); Node's constants lack it. */
export const O_ACCMODE = 0o3

/** The names below an area's own node, as the router split them from the path. */
export type Names = readonly string[]

/** The names of a path: "/a//b/" is ["a", "b"]. */
export function splitPath(path: string): string[] {
  return path.split('/').filter((part) => part !== '')
}

/** An open file: what read, write and the other handle operations reach. */
export interface OpenNode {
  /** Its text is made as it is read and may change while open (`.status`): the kernel must not serve it from a cached size. */
  live?: boolean
  /** At once, without a promise, when the bytes are at hand (see FileSystemCore.read). */
  read(position: number, length: number): Bytes | Promise<Bytes>
  /** See FileSystemCore.lendAhead. */
  lendAhead?(length: number): LentAhead[] | undefined
  /** Absent: not open for writing (EBADF). */
  write?(data: Buffer, position: number): Promise<number>
  flush?(): Promise<void>
  fsync?(datasync: boolean): Promise<void>
  /** Absent: EROFS. */
  ftruncate?(size: number): Promise<void>
  release(): Promise<void>
  /**
   * The mount stops with the file still open: let go of what it holds, without what a
   * release does (a staged file's release would hand it to sending during the unmount).
   */
  abandon?(): void
}

export interface Area {
  /**
   * A rename into or out of this area is answered EXDEV, so `mv` copies and removes
   * instead (the area keeps its files elsewhere than the others). Otherwise EROFS.
   */
  readonly movesByCopy?: boolean
  getattr(names: Names): Promise<NodeAttr>
  /** `path`: the folder's path on the mount, for what a listing tells about. */
  readdir(names: Names, path: string): Promise<string[]>
  open(names: Names, flags: OpenFlags): Promise<OpenNode>
  readlink?(names: Names): Promise<string>
  /** Absent: only `user.*` names exist, and none is set. */
  getxattr?(names: Names, name: string): Promise<Buffer>
  listxattr?(names: Names): Promise<string[]>
  setxattr?(names: Names, name: string, value: Buffer): Promise<void>
  removexattr?(names: Names, name: string): Promise<void>
  /** What `user.transferfs.shown` tells (../shown-xattr.ts), worked out at once; absent: from getxattr of each attribute. */
  shown?(names: Names): Promise<Shown>
  /** What pinning the node keeps (../pinning.ts); null or absent: it cannot be pinned. */
  pinTarget?(names: Names): Promise<PinTarget | null>
  create?(names: Names, mode: number): Promise<OpenNode>
  truncate?(names: Names, size: number): Promise<void>
  unlink?(names: Names): Promise<void>
  mkdir?(names: Names, mode: number): Promise<void>
  rmdir?(names: Names): Promise<void>
  /** Within the area; both are names below it. */
  rename?(from: Names, to: Names): Promise<void>
  symlink?(target: string, names: Names): Promise<void>
  chmod?(names: Names, mode: number): Promise<void>
  chown?(names: Names, uid: number, gid: number): Promise<void>
  utimens?(names: Names, atime: Date | null, mtime: Date | null): Promise<void>
}

/** A file whose bytes are in memory, read-only (`.transfer.json`, `link.url`, the status text). */
export function memoryNode(data: Buffer): OpenNode {
  return {
    read: async (position, length) => data.subarray(Math.min(position, data.length), Math.min(position + length, data.length)),
    release: async () => undefined,
  }
}

/**
 * A small write-only file's bytes (`.password`, `.forward`) with `data` written at
 * `position`: a new buffer, so the caller keeps it only once the write is taken. EFBIG past `max`.
 */
export function spliced(written: Buffer, data: Buffer, position: number, max: number): Buffer {
  const end = position + data.length
  if (end > max) throw new FsError('EFBIG')
  const next = Buffer.alloc(Math.max(written.length, end))
  written.copy(next)
  data.copy(next, position)
  return next
}

/** The read of a write-only file: EBADF, naming it. */
export function writeOnly(name: string): OpenNode['read'] {
  return async () => {
    throw new FsError('EBADF', `${name} is write-only`)
  }
}
