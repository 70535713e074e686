// Errors of the Transfer Service client. Each carries what the service said
// (HTTP status, responsestatus) so that callers decide by code, never by message;
// only the FUSE adapter turns them into errno.
import type { ServiceStatus, ValidationError } from './types.js'

/** The service answered with an error envelope or an error HTTP status. */
export class ServiceError extends Error {
  override readonly name = 'ServiceError'
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

/** The service could not be reached (connection refused, reset, timeout) after the retries. */
export class NetworkError extends Error {
  override readonly name = 'NetworkError'
  constructor(message: string, readonly code: string | null = null, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** Bytes that do not match the hash the service gave for them, after the retries. */
export class IntegrityError extends Error {
  override readonly name = 'IntegrityError'
  constructor(message: string, readonly expected: string, readonly actual: string) {
    super(message)
  }
}

/** The account needs a step this client does not implement yet (two-factor sign-in). */
export class UnsupportedError extends Error {
  override readonly name = 'UnsupportedError'
}

/** An operation needs a signed-in session and there is none (never signed in, or signed out). */
export class NotSignedInError extends Error {
  override readonly name = 'NotSignedInError'
  constructor(message = 'not signed in; sign in first (transferfs login)') {
    super(message)
  }
}
