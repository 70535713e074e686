// The exit codes of every transferfs command, in one place (documented in docs/cli.md).
// A script can tell "sign in again" from "no such transfer" from "the service is down"
// without reading the message.
import { ERROR_CODE, errorCodeOf, ServiceError } from '../../api/errors.js'
import type { ServiceStatus } from '../../api/types.js'
import { SettingsError } from '../../config/index.js'

export const EXIT = {
  ok: 0,
  /** Anything else: a refused request, a failed verification, a local file problem. */
  error: 1,
  /** Wrong arguments, flags or settings. */
  usage: 2,
  /** Not signed in, the session ended, a wrong or missing transfer password, a bad API key. */
  auth: 3,
  /** No such transfer or file (or it expired). */
  notFound: 4,
  /** The service could not be reached, or said it is temporarily unavailable. */
  unreachable: 5,
  /** Stopped by Ctrl-C (128 + SIGINT), as shells report it. */
  interrupted: 130,
} as const

export type ExitCode = (typeof EXIT)[keyof typeof EXIT]

/** A failure the command itself diagnosed, with the exit code it means. */
export class CliError extends Error {
  override readonly name = 'CliError'
  constructor(message: string, readonly exitCode: ExitCode = EXIT.error, readonly hint: string | null = null) {
    super(message)
  }
}

export class UsageError extends CliError {
  constructor(message: string, hint: string | null = null) {
    super(message, EXIT.usage, hint)
  }
}

const AUTH_STATUSES: ReadonlySet<ServiceStatus> = new Set<ServiceStatus>([
  'MissingApikey', 'InvalidApikey', 'WrongUsernamePassword', 'InvalidOrExpiredLoginToken', 'RefreshTokenExpired',
  'RefreshTokenAlreadyUsed', 'PasswordRequired', 'AccessDenied', 'CaptchaRequiredForNextLogin', 'AuthorizationFailure',
])
const NOT_FOUND_STATUSES: ReadonlySet<ServiceStatus> = new Set<ServiceStatus>(['NotFound', 'TransferExpired', 'FileIsDeleted'])
const UNAVAILABLE_STATUSES: ReadonlySet<ServiceStatus> = new Set<ServiceStatus>(['ServiceInterruption', 'AllFileserversBusy'])

/** The exit code an error means, chosen from its code. */
export function exitCodeOf(err: unknown): ExitCode {
  if (err instanceof CliError) return err.exitCode
  if (err instanceof SettingsError) return EXIT.usage
  if (isAbort(err)) return EXIT.interrupted
  switch (errorCodeOf(err)) {
    case ERROR_CODE.notSignedIn:
    case ERROR_CODE.unsupported:
      return EXIT.auth
    case ERROR_CODE.network:
    case ERROR_CODE.offline:
    case ERROR_CODE.deadline:
      return EXIT.unreachable
    case ERROR_CODE.service:
      return serviceExit(err as ServiceError)
    default:
      return EXIT.error
  }
}

function serviceExit(err: ServiceError): ExitCode {
  const s = err.responsestatus
  if (s && AUTH_STATUSES.has(s)) return EXIT.auth
  if (s && NOT_FOUND_STATUSES.has(s)) return EXIT.notFound
  if (s && UNAVAILABLE_STATUSES.has(s)) return EXIT.unreachable
  if (err.httpStatus === 401) return EXIT.auth
  if (err.httpStatus === 404) return EXIT.notFound
  if (err.httpStatus === 503 || err.httpStatus === 502 || err.httpStatus === 504) return EXIT.unreachable
  return EXIT.error
}

export function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || (err as { code?: string }).code === 'ABORT_ERR')
}
