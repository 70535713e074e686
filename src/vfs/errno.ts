// The one place where errors become errno, for every front (the FUSE adapter, the NFS server).
// The core throws FsError (a POSIX code it chose) or the client's errors; everything else is a
// bug and answers EIO.
import { ERROR_CODE, errorCodeOf, NetworkError, ServiceError } from '../api/errors.js'
import { needsNewSettings } from '../api/failure.js'
import { FsError, type FsErrorCode } from './core.js'

/** Linux errno values (positive); the adapter answers their negation. */
export const ERRNO = {
  EPERM: 1, ENOENT: 2, EIO: 5, EBADF: 9, EAGAIN: 11, EACCES: 13, EBUSY: 16, EEXIST: 17, EXDEV: 18,
  ENOTDIR: 20, EISDIR: 21, EINVAL: 22, EFBIG: 27, ENOSPC: 28, EROFS: 30, ERANGE: 34, ENAMETOOLONG: 36,
  ENOSYS: 38, ENOTEMPTY: 39, ENODATA: 61, EOPNOTSUPP: 95, ESHUTDOWN: 108, ETIMEDOUT: 110, EHOSTDOWN: 112,
} as const satisfies Record<string, number>

export type ErrnoName = keyof typeof ERRNO

const FS_CODES: Record<FsErrorCode, number> = {
  ENOENT: ERRNO.ENOENT, EACCES: ERRNO.EACCES, EPERM: ERRNO.EPERM, EIO: ERRNO.EIO, EROFS: ERRNO.EROFS,
  EEXIST: ERRNO.EEXIST, ENOTDIR: ERRNO.ENOTDIR, EISDIR: ERRNO.EISDIR, ENOTEMPTY: ERRNO.ENOTEMPTY,
  EINVAL: ERRNO.EINVAL, ENOSPC: ERRNO.ENOSPC, ENODATA: ERRNO.ENODATA, EOPNOTSUPP: ERRNO.EOPNOTSUPP,
  ENAMETOOLONG: ERRNO.ENAMETOOLONG, EBADF: ERRNO.EBADF, ENOSYS: ERRNO.ENOSYS, ETIMEDOUT: ERRNO.ETIMEDOUT,
  EXDEV: ERRNO.EXDEV, EBUSY: ERRNO.EBUSY, EFBIG: ERRNO.EFBIG,
}

/**
 * Service errors by HTTP status. 409 is a conflict of state: an expired transfer is gone
 * (ENOENT); any other conflict (cancelled transfer, upload not complete, deleted portal)
 * is not something the caller can fix by retrying differently, so it is EIO.
 */
function serviceErrno(err: ServiceError): number {
  switch (err.httpStatus) {
    case 401:
    case 403:
      return ERRNO.EACCES
    case 404:
    case 410:
      return ERRNO.ENOENT
    case 409:
      return err.responsestatus === 'TransferExpired' || err.responsestatus === 'FileIsDeleted' ? ERRNO.ENOENT : ERRNO.EIO
    case 413:
      return ERRNO.EFBIG
    default:
      return ERRNO.EIO
  }
}

/**
 * Positive errno for any thrown value, chosen from its code. Offline answers "Host is
 * down" so that a user tells "the service cannot be reached, try later" from a damaged or
 * missing file, and so does a service that cannot be reached as configured (a certificate
 * not trusted, a proxy refusing its credentials); faults that outlasted the deadline and
 * bytes that never verified are EIO.
 */
export function errnoOf(err: unknown): number {
  if (err instanceof FsError) return FS_CODES[err.code] ?? ERRNO.EIO
  switch (errorCodeOf(err)) {
    case ERROR_CODE.service:
      return serviceErrno(err as ServiceError)
    case ERROR_CODE.offline:
      return ERRNO.EHOSTDOWN
    case ERROR_CODE.network:
      return needsNewSettings(err) ? ERRNO.EHOSTDOWN : ERRNO.EIO
    case ERROR_CODE.unsupported:
      return ERRNO.EOPNOTSUPP
    default:
      return ERRNO.EIO
  }
}

/** A short description for the debug log: class, code and status, never a secret-bearing message body. */
export function errorForLog(err: unknown): string {
  if (err instanceof FsError) return `FsError ${err.code}`
  if (err instanceof ServiceError) return `ServiceError ${err.httpStatus} ${err.responsestatus ?? ''}`.trim()
  if (err instanceof NetworkError) return `${err.name} ${err.systemCode ?? ''}`.trim()
  if (err instanceof Error) return `${err.name}: ${err.message}`
  return typeof err
}
