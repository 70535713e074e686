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
 * A connection through the proxy could not be made: the proxy cannot be reached, or it
 * answered the tunnel's CONNECT with something other than 2xx (`status`). The request
 * never reached the service, whatever the reason.
 */
export class ProxyError extends NetworkError {
  override readonly name = 'ProxyError'
  constructor(
    message: string,
    systemCode: string | null,
    /** The proxy, as messages name it: its address without the credentials, and where it was set. */
    readonly proxy: string,
    /** The proxy's answer to CONNECT; null when it gave none. */
    readonly status: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(message, systemCode, options)
  }
}

/** TLS failures: the service cannot be reached as configured (wrong host, untrusted or expired certificate). */
export const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH)/
/** The TLS failures a missing certificate authority causes: adding one is the way out. */
const UNKNOWN_AUTHORITY = /^(SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_GET_ISSUER_CERT|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|UNABLE_TO_VERIFY_LEAF_SIGNATURE|CERT_UNTRUSTED)$/

/**
 * What a failed connection to `host` (host:port) means, for a person. A certificate
 * failure names the host whose certificate it was, and the way out when it is an
 * authority this machine does not know; anything else is "cannot reach `target`".
 */
export function connectionError(target: string, host: string, err: unknown): NetworkError {
  const e = err as { code?: string; message?: string; cause?: { code?: string } } | null
  const code = e?.code ?? e?.cause?.code ?? null
  const why = e?.message ?? String(err)
  if (code !== null && TLS_CODE.test(code)) {
    const way = UNKNOWN_AUTHORITY.test(code) ? ': trust the authority that signed it through the system\'s certificate store or the ca setting' : ''
    return new NetworkError(`the certificate of ${host} is not accepted (${why}, ${code})${way}`, code, { cause: err })
  }
  return new NetworkError(`cannot reach ${target}: ${why}${code ? ` (${code})` : ''}`, code, { cause: err })
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
