// The one retry policy: exponential backoff with jitter, bounded tries and an overall
// deadline, Retry-After honoured. What is worth retrying depends on the kind of call
// (classifiers below); how long to wait does not. The schedule is pure so it can be
// tested without waiting.
import { IntegrityError, NetworkError, ServiceError } from './errors.js'
import { isNotSentError } from './http.js'
import { STATUS } from './protocol.js'
import type { RetryOptions } from './options.js'

/** What a classifier says about one failure. */
export interface RetryVerdict {
  retry: boolean
  /** Milliseconds the service asked us to wait (Retry-After), overriding the backoff. */
  waitMs?: number
}

export type RetryClassifier = (err: unknown) => RetryVerdict

/**
 * Backoff before retry number `retryIndex` (0 = before the second try): "equal jitter",
 * half of the exponential step fixed and half random, so that clients that failed
 * together spread out yet none retries at once.
 */
export function backoffDelay(retryIndex: number, opts: Pick<RetryOptions, 'baseDelayMs' | 'maxDelayMs'>, random: () => number = Math.random): number {
  const step = Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** Math.min(retryIndex, 30))
  return Math.round(step / 2 + random() * (step / 2))
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | null {
  if (value === null || value === undefined) return null
  const trimmed = value.trim()
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000)
  const date = Date.parse(trimmed)
  if (Number.isNaN(date)) return null
  return Math.max(0, date - now)
}

/** The whole schedule of waits a policy allows (for tests and for reasoning about limits). */
export function backoffSchedule(opts: Pick<RetryOptions, 'maxTries' | 'baseDelayMs' | 'maxDelayMs'>, random: () => number = Math.random): number[] {
  const waits: number[] = []
  for (let i = 0; i < opts.maxTries - 1; i++) waits.push(backoffDelay(i, opts, random))
  return waits
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => { clearTimeout(timer); reject(signal!.reason) }
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve() }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

export interface RunOptions {
  policy: RetryOptions
  classify: RetryClassifier
  signal?: AbortSignal
  /** Called before each wait (logging, counters); never given secrets. */
  onRetry?: (info: { attempt: number; waitMs: number; error: unknown }) => void
  random?: () => number
}

/** Run `op` until it succeeds, the classifier says stop, the tries run out or the deadline passes. */
export async function withRetry<T>(op: (attempt: number) => Promise<T>, run: RunOptions): Promise<T> {
  const { policy, classify, signal } = run
  const deadline = Date.now() + policy.deadlineMs
  for (let attempt = 0; ; attempt++) {
    try {
      return await op(attempt)
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err
      const verdict = classify(err)
      if (!verdict.retry || attempt + 1 >= policy.maxTries) throw err
      const waitMs = verdict.waitMs ?? backoffDelay(attempt, policy, run.random)
      if (Date.now() + waitMs > deadline) throw err
      run.onRetry?.({ attempt, waitMs, error: err })
      await sleep(waitMs, signal)
    }
  }
}

function retryAfterMs(err: ServiceError): number | undefined {
  return err.retryAfter === null ? undefined : err.retryAfter * 1000
}

/**
 * JSON operations on {base_url} and range hashes. An idempotent call is retried on
 * network errors, 429 and 5xx; a call that could create something twice
 * (initialize, forward, refresh, login) only when the service surely did nothing:
 * 429 / 503, or a connection that never opened.
 */
export function apiClassifier(idempotent: boolean): RetryClassifier {
  return (err) => {
    if (err instanceof ServiceError) {
      if (err.httpStatus === STATUS.tooManyRequests || err.httpStatus === STATUS.serviceUnavailable) {
        return { retry: true, waitMs: retryAfterMs(err) }
      }
      if (idempotent && err.httpStatus >= 500) return { retry: true }
      return { retry: false }
    }
    if (err instanceof NetworkError) return { retry: idempotent || isNotSentError(err) }
    return { retry: false }
  }
}

/**
 * Upload chunks: re-sending an index replaces it, so every transient failure is safe
 * to retry: network errors, 406 (overload), 449 (md5 mismatch), 429 and 5xx.
 */
export const uploadClassifier: RetryClassifier = (err) => {
  if (err instanceof ServiceError) {
    const s = err.httpStatus
    if (s === STATUS.tooManyRequests) return { retry: true, waitMs: retryAfterMs(err) }
    return { retry: s === STATUS.uploadRetry || s === STATUS.uploadMd5Mismatch || s >= 500 }
  }
  return { retry: err instanceof NetworkError }
}

/**
 * Downloads: the interface says any status but 200/206 is retried with backoff. Three
 * are definitive per decisions.md and retrying them only delays the answer: 401 (a
 * protected transfer without a valid token), 404 (expired or unknown) and 416 (a range
 * outside the file, our own mistake). A short body or a hash mismatch is retried too.
 */
export const downloadClassifier: RetryClassifier = (err) => {
  if (err instanceof ServiceError) {
    const s = err.httpStatus
    if (s === STATUS.unauthorized || s === STATUS.notFound || s === STATUS.rangeNotSatisfiable) return { retry: false }
    if (s === STATUS.tooManyRequests) return { retry: true, waitMs: retryAfterMs(err) }
    return { retry: true }
  }
  return { retry: err instanceof NetworkError || err instanceof IntegrityError }
}
