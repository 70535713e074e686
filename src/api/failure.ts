// The one failure policy: what a failure of a kind of call means. Every caller that talks
// to the service (the mount's reads and sends, `download`, every command) asks this
// classifier whether to try again, how long the service asked it to wait, and whether the
// answer is a refusal (definitive: trying again cannot change it). How long to wait
// otherwise is retry.ts's one backoff; errno, exit codes and hints are chosen from the
// errors' codes (errors.ts).
import { IntegrityError, NetworkError, OfflineError, ProxyError, ServiceError, TLS_CODE } from './errors.js'
import { STATUS } from './protocol.js'

/**
 * The kinds of call, by what repeating them can do:
 * - `query`: a JSON operation that changes nothing (details, inbox, refresh of a listing);
 * - `create`: a JSON operation that could act twice if repeated after being served
 *   (initialize, complete, forward, login, token refresh);
 * - `upload`: one chunk to the file server (re-sending an index replaces it);
 * - `download`: file bytes (a range, a whole file, the ZIP);
 * - `hash`: GetRangeHash, a read of the file server like a download.
 */
export type CallKind = 'query' | 'create' | 'upload' | 'download' | 'hash'

export interface Verdict {
  /** Worth another try (within the caller's deadline). */
  retry: boolean
  /** Milliseconds the service asked us to wait (Retry-After), overriding the backoff. */
  waitMs?: number
  /** The service's definitive answer: retrying, here or later, cannot change it. */
  refusal: boolean
}

/** Socket and undici codes that mean the request never left this machine: repeating it cannot act twice. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'UND_ERR_CONNECT_TIMEOUT',
])

/** A connection to the service could not be made at all (refused, no such host, no route, TLS refused, the proxy failed). */
export function isUnreachable(err: unknown): boolean {
  if (err instanceof ProxyError) return true
  if (!(err instanceof NetworkError) || err.systemCode === null) return false
  return NOT_SENT_CODES.has(err.systemCode) || TLS_CODE.test(err.systemCode)
}

/** The service says the transfer (or what was asked of it) does not exist. */
export function isServiceNotFound(err: unknown): boolean {
  return err instanceof ServiceError && (err.responsestatus === 'NotFound' || err.httpStatus === STATUS.notFound)
}

/**
 * The service refused the values of the request itself (400: a parameter it will not take,
 * such as search words): the same request, now or later, gets the same answer.
 */
export function isRefusedRequest(err: unknown): err is ServiceError {
  return err instanceof ServiceError && err.httpStatus === STATUS.badRequest
}

/** The service's certificate was not accepted. */
export function isUntrustedCertificate(err: unknown): boolean {
  return err instanceof NetworkError && err.systemCode !== null && TLS_CODE.test(err.systemCode)
}

/**
 * A failure only a change of settings cures (a certificate authority to trust, the proxy's
 * credentials): trying again, now or later, meets the same.
 */
export function needsNewSettings(err: unknown): boolean {
  return isUntrustedCertificate(err) || isProxyRefusal(err)
}

/**
 * The proxy said no to the tunnel itself (credentials wanted, a port it does not allow):
 * it says the same on every try. A 5xx is the proxy failing to reach the service, which
 * may pass like any outage.
 */
export function isProxyRefusal(err: unknown): err is ProxyError {
  return err instanceof ProxyError && err.status !== null && err.status < 500
}

/**
 * On downloads the interface asks for any status but 200/206 to be retried with backoff;
 * these few are definitive: 401 (a protected transfer without a valid token), 404 and 410
 * (expired or unknown) and 416 (a range outside the file, our own mistake).
 */
const DEFINITIVE_ON_FILE_SERVER: ReadonlySet<number> = new Set([STATUS.unauthorized, STATUS.notFound, 410, STATUS.rangeNotSatisfiable])
/** 4xx answers that mean "not now" rather than "no". */
const TRANSIENT_4XX: ReadonlySet<number> = new Set([408, STATUS.tooManyRequests])
/** Upload answers asking for the same chunk again: overload and an md5 mismatch on the way. */
const UPLOAD_AGAIN: ReadonlySet<number> = new Set([STATUS.uploadRetry, STATUS.uploadMd5Mismatch])

function serviceRetry(kind: CallKind, err: ServiceError): boolean {
  const s = err.httpStatus
  if (kind === 'download' || kind === 'hash') return !DEFINITIVE_ON_FILE_SERVER.has(s)
  // 429 and 503 say the service did nothing: safe to repeat even what is not idempotent.
  if (s === STATUS.tooManyRequests || s === STATUS.serviceUnavailable) return true
  if (kind === 'create') return false
  if (kind === 'upload' && UPLOAD_AGAIN.has(s)) return true
  return s >= 500 || TRANSIENT_4XX.has(s)
}

/** What a failure of a call of `kind` means. Anything not from the service (a bug, an abort) is neither retried nor a refusal. */
export function classify(kind: CallKind, err: unknown): Verdict {
  if (err instanceof ServiceError) {
    const retry = serviceRetry(kind, err)
    const waitMs = retry && err.retryAfter !== null ? err.retryAfter * 1000 : undefined
    // A complete answered UploadNotComplete is a state to repair (send the chunks again), not a no.
    const refusal = !retry && err.httpStatus >= 400 && err.httpStatus < 500 && err.responsestatus !== 'UploadNotComplete'
    return waitMs === undefined ? { retry, refusal } : { retry, waitMs, refusal }
  }
  if (err instanceof NetworkError) {
    // Offline is the verdict of several failures already; the probe, not each caller, tries again.
    if (err instanceof OfflineError) return { retry: false, refusal: false }
    if (needsNewSettings(err)) return { retry: false, refusal: false }
    if (kind === 'create') return { retry: isNotSent(err), refusal: false }
    return { retry: true, refusal: false }
  }
  // Bytes or a hash damaged on the way: ask again. A JSON answer has no hash to fail.
  if (err instanceof IntegrityError) return { retry: kind !== 'query' && kind !== 'create', refusal: false }
  return { retry: false, refusal: false }
}

/** The service said no for a reason a retry cannot change (bad address, too large, ...): a send stops and says why. */
export function isRefusal(err: unknown): err is ServiceError {
  return classify('upload', err).refusal
}

function isNotSent(err: NetworkError): boolean {
  // Nothing reaches the service before the proxy's tunnel is open.
  if (err instanceof ProxyError) return true
  return err.systemCode !== null && NOT_SENT_CODES.has(err.systemCode)
}
