// The envelope of every JSON operation: `data` on success, a ServiceError otherwise,
// with a message that tells a person what to do about it.
import { ServiceError } from './errors.js'
import { headerValue, redactUrl } from './http.js'
import type { HttpResponse } from './http.js'
import { parseRetryAfter } from './retry.js'
import { isServiceStatus } from './types.js'
import type { Envelope, ServiceStatus, ValidationError } from './types.js'

/** What a person can do about each condition; statuses not listed get the service's own words. */
const HINTS: Partial<Record<ServiceStatus, string>> = {
  MissingApikey: 'no API key was sent; set the API key in the configuration',
  InvalidApikey: 'the API key is not accepted; check the API key in the configuration',
  ApiKeyQuotaExceeded: 'the API key has used up its quota; wait and try again later',
  RateLimitExceeded: 'too many requests; wait a moment and try again',
  WrongUsernamePassword: 'wrong e-mail address or password',
  InvalidOrExpiredLoginToken: 'the session has expired or was ended; sign in again (transferfs login)',
  RefreshTokenExpired: 'the saved session is older than three months; sign in again (transferfs login)',
  RefreshTokenAlreadyUsed:
    'the saved session was already renewed elsewhere (a refresh token works once); sign in again (transferfs login)',
  PasswordRequired: 'this transfer is password protected; give its password',
  AccessDenied: 'access denied (wrong transfer password or key, or not your transfer)',
  CaptchaRequiredForNextLogin: 'too many wrong passwords for this transfer; a captcha is required now',
  NotFound: 'no such transfer or file (it may have expired or been deleted)',
  TransferExpired: 'the transfer has expired',
  InvalidTransferState: 'the transfer is not in a state that allows this (for example not complete yet)',
  UploadNotComplete: 'not every chunk of a file has arrived yet; finish the upload first',
  TooManyRecipients: 'too many recipients for this account',
  InvalidEmail: 'a recipient is neither an e-mail address nor one of your contact groups',
  ServiceInterruption: 'the service is temporarily unavailable; try again later',
  AllFileserversBusy: 'all file servers are busy; try again later',
  InvalidDataState: 'a given portal was deleted',
}

function describeValidation(errors: ValidationError[] | null | undefined): string {
  if (!errors?.length) return ''
  return ` (${errors.map((v) => `${v.propertyName}: ${v.errorMessage ?? v.errorCode}`).join('; ')})`
}

/** Build the ServiceError for an error answer; `operation` names what was attempted. */
export function serviceErrorFrom(
  operation: string,
  httpStatus: number,
  envelope: Partial<Envelope<unknown>> | null,
  retryAfterHeader?: string,
): ServiceError {
  const status = envelope && isServiceStatus(envelope.responsestatus) ? envelope.responsestatus : null
  const hint = status ? HINTS[status] : undefined
  const serviceSays = envelope?.errormessage ?? null
  const what = hint ?? serviceSays ?? (status ? `the service answered ${status}` : `the service answered HTTP ${httpStatus}`)
  const id = envelope?.errorid ? ` [error id ${envelope.errorid}]` : ''
  const message = `${operation} failed: ${what}${describeValidation(envelope?.validationerrors)} (HTTP ${httpStatus}${status ? `, ${status}` : ''})${id}`
  const retryAfterMs = parseRetryAfter(retryAfterHeader)
  return new ServiceError(
    message,
    httpStatus,
    status,
    envelope?.errorid ?? null,
    serviceSays,
    envelope?.validationerrors ?? null,
    retryAfterMs === null ? null : retryAfterMs / 1000,
  )
}

function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function looksLikeEnvelope(value: unknown): value is Partial<Envelope<unknown>> {
  return typeof value === 'object' && value !== null && 'responsestatus' in value
}

/**
 * The data of an answer, or a ServiceError: an HTTP status other than 200, an envelope
 * that is not OK, or a body that is no envelope at all (a proxy's error page) are all errors.
 */
export function parseEnvelope<T>(operation: string, status: number, headers: HttpResponse['headers'], text: string): T | null {
  const parsed = text.length ? tryParseJson(text) : undefined
  const envelope = looksLikeEnvelope(parsed) ? parsed : null
  if (status !== 200 || !envelope || envelope.responsestatus !== 'OK') {
    if (status === 200 && !envelope) {
      throw new ServiceError(`${operation} failed: the answer is not a service envelope (HTTP 200)`, status, null)
    }
    throw serviceErrorFrom(operation, status, envelope, headerValue(headers, 'retry-after'))
  }
  return (envelope.data ?? null) as T | null
}

/** Error for a non-JSON endpoint (downloads, uploads, range hashes) answering `status`. */
export function statusError(operation: string, url: URL, status: number, headers: HttpResponse['headers'], text: string): ServiceError {
  const parsed = text.length ? tryParseJson(text) : undefined
  const envelope = looksLikeEnvelope(parsed) ? parsed : null
  return serviceErrorFrom(`${operation} ${redactUrl(url)}`, status, envelope, headerValue(headers, 'retry-after'))
}
