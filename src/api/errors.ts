// Errors of the Transfer Service client. Each class carries a stable `code` (like undici's
// UND_ERR_*) and what the service said (HTTP status, responsestatus), so that callers
// decide by code, never by message: the retry classifier (failure.ts), the FUSE errno,
// the exit codes and the hints are all chosen from it.
import type { ServiceStatus, ValidationError } from './types.js'

/** The stable codes of transferfs' own errors. */
export const ERROR_CODE = {
  service: 'TFS_ERR_SERVICE',
  network: 'TFS_ERR_NETWORK',
  offline: 'TFS_ERR_OFFLINE',
  integrity: 'TFS_ERR_INTEGRITY',
  deadline: 'TFS_ERR_DEADLINE',
  unsupported: 'TFS_ERR_UNSUPPORTED',
  notSignedIn: 'TFS_ERR_NOT_SIGNED_IN',
} as const
export type ErrorCode = (typeof ERROR_CODE)[keyof typeof ERROR_CODE]

/** The service answered with an error envelope or an error HTTP status. */
export class ServiceError extends Error {
  override readonly name = 'ServiceError'
  readonly code = ERROR_CODE.service
  constructor(
    message: string,
    readonly httpStatus: number,
    readonly responsestatus: ServiceStatus | null,
    readonly errorid: string | null = null,
    readonly errormessage: string | null = null,
    readonly validationerrors: ValidationError[] | null = null,
    /** Seconds the service asked us to wait (Retry-After), when it said. */
    readonly retryAfter: number | null = null,
  ) {
    super(message)
  }
}

/** The service could not be reached, or the connection broke (refused, reset, timeout, TLS). */
export class NetworkError extends Error {
  override readonly name: string = 'NetworkError'
  readonly code: ErrorCode = ERROR_CODE.network
  constructor(
    message: string,
    /** What the socket or undici said (ECONNREFUSED, UND_ERR_SOCKET, CERT_HAS_EXPIRED, ...), when known. */
    readonly systemCode: string | null = null,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/**
 * The mount has found the service unreachable several times in a row and answers reads
 * that would need it at once, instead of letting each wait out its deadline.
 */
export class OfflineError extends NetworkError {
  override readonly name = 'OfflineError'
  override readonly code = ERROR_CODE.offline
}

/** Bytes that do not match the hash the service gave for them, after the retries. */
export class IntegrityError extends Error {
  override readonly name = 'IntegrityError'
  readonly code = ERROR_CODE.integrity
  constructor(message: string, readonly expected: string, readonly actual: string) {
    super(message)
  }
}

/** Transient faults went on until the operation's deadline; `cause` is the last of them. */
export class DeadlineError extends Error {
  override readonly name = 'DeadlineError'
  readonly code = ERROR_CODE.deadline
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** The account needs a step this client does not implement yet (two-factor sign-in). */
export class UnsupportedError extends Error {
  override readonly name = 'UnsupportedError'
  readonly code = ERROR_CODE.unsupported
}

/** An operation needs a signed-in session and there is none (never signed in, or signed out). */
export class NotSignedInError extends Error {
  override readonly name = 'NotSignedInError'
  readonly code = ERROR_CODE.notSignedIn
  constructor(message = 'not signed in; sign in first (transferfs login)') {
    super(message)
  }
}

/** The stable code of any thrown value: ours, undici's (UND_ERR_*), a system one (ECONNRESET), or null. */
export function errorCodeOf(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : null
}
