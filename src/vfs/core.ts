// The filesystem core as the FUSE adapter sees it: paths in, attributes, names and
// bytes out. It knows nothing of FUSE; tests drive it directly. Errors are thrown as
// FsError (a POSIX code the core chose) or as the client's errors (ServiceError,
// NetworkError, IntegrityError), which the adapter alone maps to errno.
import type { Bytes } from '../read/bytes.js'
import type { LentAhead } from '../read/source.js'

export type FsErrorCode =
  | 'ENOENT' | 'EACCES' | 'EPERM' | 'EIO' | 'EROFS' | 'EEXIST' | 'ENOTDIR' | 'EISDIR'
  | 'ENOTEMPTY' | 'EINVAL' | 'ENOSPC' | 'ENODATA' | 'EOPNOTSUPP' | 'ENAMETOOLONG' | 'EBADF'
  | 'ENOSYS' | 'ETIMEDOUT' | 'EXDEV' | 'EBUSY' | 'EFBIG'

/** Error.stackTraceLimit while an FsError is made without a stack (see stackless). */
let stackTraceLimit = Error.stackTraceLimit

/** `message`, with the next Error made taking no stack; FsError's constructor restores the limit. */
function stackless(message: string): string {
  stackTraceLimit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  return message
}

/**
 * An answer of the core's own choosing, such as ENOENT for a name that is not there or ENODATA
 * for an attribute an entry lacks: an outcome, not a fault, so it carries no stack (capturing
 * one cost a few microseconds for each such answer, and a file manager's listing makes thousands).
 */
export class FsError extends Error {
  override readonly name = 'FsError'
  constructor(readonly code: FsErrorCode, message?: string) {
    super(stackless(message ?? code))
    Error.stackTraceLimit = stackTraceLimit
  }
}

/** What getattr answers. Times are JS Dates; mode includes the file type bits. */
export interface NodeAttr {
  mode: number
  size: number
  mtime: Date
  atime: Date
  ctime: Date
  nlink: number
  uid: number
  gid: number
}

export interface StatFs {
  bsize: number
  frsize: number
  blocks: number
  bfree: number
  bavail: number
  files: number
  ffree: number
  favail: number
  namemax: number
}

/** Flags as open(2) passes them (O_RDONLY = 0, O_WRONLY = 1, O_RDWR = 2, O_TRUNC, ...). */
export type OpenFlags = number

/**
 * The operations the FUSE adapter forwards. Read-only ops are required; the
 * writable ones exist for the outbox and sent folders, and answer EROFS elsewhere.
 */
export interface FileSystemCore {
  getattr(path: string): Promise<NodeAttr>
  readdir(path: string): Promise<string[]>
  open(path: string, flags: OpenFlags): Promise<number>
  /** True when the handle's text changes while it is open: every read must reach read(), past any size the kernel cached. */
  isLive?(fh: number): boolean
  /**
   * At once, without a promise, when the bytes are at hand: a sequential re-read asks
   * thousands of times per GiB, and the FUSE adapter then answers with no deadline timer
   * and no promise ticks.
   */
  read(path: string, fh: number, position: number, length: number): Bytes | Promise<Bytes>
  /**
   * Once a read of fh of `length` bytes was answered: what follows the furthest read of fh,
   * lent (ContentHandle.lendAhead), when fh is read in sequence and the bytes are at hand. The
   * FUSE adapter lends them to libfuse's threads, which answer the reader's next reads from
   * them (src/fuse/read-windows.ts). Undefined otherwise. Lending records no read.
   */
  lendAhead?(fh: number, length: number): LentAhead[] | undefined
  release(path: string, fh: number): Promise<void>
  statfs(path: string): Promise<StatFs>
  getxattr(path: string, name: string): Promise<Buffer>
  listxattr(path: string): Promise<string[]>

  create?(path: string, mode: number): Promise<number>
  write?(path: string, fh: number, data: Buffer, position: number): Promise<number>
  flush?(path: string, fh: number): Promise<void>
  fsync?(path: string, fh: number, datasync: boolean): Promise<void>
  truncate?(path: string, size: number): Promise<void>
  ftruncate?(path: string, fh: number, size: number): Promise<void>
  unlink?(path: string): Promise<void>
  rename?(from: string, to: string): Promise<void>
  mkdir?(path: string, mode: number): Promise<void>
  rmdir?(path: string): Promise<void>
  chmod?(path: string, mode: number): Promise<void>
  chown?(path: string, uid: number, gid: number): Promise<void>
  /** A time given as null stays as it is (`touch -m` sets the mtime alone, tar too). */
  utimens?(path: string, atime: Date | null, mtime: Date | null): Promise<void>
  symlink?(target: string, path: string): Promise<void>
  readlink?(path: string): Promise<string>
  setxattr?(path: string, name: string, value: Buffer): Promise<void>
  removexattr?(path: string, name: string): Promise<void>

  /** Called once the adapter stops taking new operations, before the unmount. */
  shutdown?(): Promise<void>
}
