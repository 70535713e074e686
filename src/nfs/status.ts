// NFSv3 status codes (nfsstat3, RFC 1813) and the one mapping of the core's errors to them:
// through errno (vfs/errno.ts), so that an NFS client is told what a FUSE caller is told.
import { ERRNO, errnoOf } from '../vfs/errno.js'

export const NFS3 = {
  OK: 0, PERM: 1, NOENT: 2, IO: 5, NXIO: 6, ACCES: 13, EXIST: 17, XDEV: 18, NODEV: 19, NOTDIR: 20,
  ISDIR: 21, INVAL: 22, FBIG: 27, NOSPC: 28, ROFS: 30, MLINK: 31, NAMETOOLONG: 63, NOTEMPTY: 66,
  DQUOT: 69, STALE: 70, REMOTE: 71, BADHANDLE: 10001, NOT_SYNC: 10002, BAD_COOKIE: 10003,
  NOTSUPP: 10004, TOOSMALL: 10005, SERVERFAULT: 10006, BADTYPE: 10007, JUKEBOX: 10008,
} as const

export type Nfs3Status = (typeof NFS3)[keyof typeof NFS3]

/** errno → nfsstat3, for the errno values the core and the client's errors give. */
const BY_ERRNO = new Map<number, Nfs3Status>([
  [ERRNO.EPERM, NFS3.PERM], [ERRNO.ENOENT, NFS3.NOENT], [ERRNO.EIO, NFS3.IO], [ERRNO.EACCES, NFS3.ACCES],
  [ERRNO.EEXIST, NFS3.EXIST], [ERRNO.EXDEV, NFS3.XDEV], [ERRNO.ENOTDIR, NFS3.NOTDIR], [ERRNO.EISDIR, NFS3.ISDIR],
  [ERRNO.EINVAL, NFS3.INVAL], [ERRNO.EFBIG, NFS3.FBIG], [ERRNO.ENOSPC, NFS3.NOSPC], [ERRNO.EROFS, NFS3.ROFS],
  [ERRNO.ENAMETOOLONG, NFS3.NAMETOOLONG], [ERRNO.ENOTEMPTY, NFS3.NOTEMPTY], [ERRNO.ENOSYS, NFS3.NOTSUPP],
  [ERRNO.EOPNOTSUPP, NFS3.NOTSUPP],
  // A file being sent, a service that cannot be reached, a deadline passed: the client is told
  // "I/O error" rather than JUKEBOX, which a hard mount would retry without end.
])

/** The status an NFS client is given for an error the core (or the client of the service) threw. */
export function statusOf(err: unknown): Nfs3Status {
  return BY_ERRNO.get(errnoOf(err)) ?? NFS3.IO
}

/** Thrown inside a procedure to answer with `status` (a handle that names nothing, a name with a slash). */
export class NfsStatusError extends Error {
  override readonly name = 'NfsStatusError'
  constructor(readonly status: Nfs3Status, message?: string) {
    super(message ?? `nfsstat3 ${status}`)
  }
}

export function nfsStatusOf(err: unknown): Nfs3Status {
  return err instanceof NfsStatusError ? err.status : statusOf(err)
}
