// Small helpers of the fetch path: which failures deserve another try, what error a
// reader finally sees, and waiting that an abort always ends.
import { IntegrityError, NetworkError, ServiceError } from '../api/errors.js'
import type { Span } from './geometry.js'

/** Consecutive pieces grouped so each group can be fetched with one Range request. */
export function contiguousRuns<T extends { span: Span }>(pieces: T[]): T[][] {
  const runs: T[][] = []
  for (const p of pieces) {
    const last = runs[runs.length - 1]
    if (last && last[last.length - 1]!.span.end === p.span.start) last.push(p)
    else runs.push([p])
  }
  return runs
}

/** Network trouble and server-side errors are worth another try; a refusal (404, 401, 416) is not. */
export function retryable(e: unknown): boolean {
  if (e instanceof ServiceError) return e.httpStatus >= 500 || e.httpStatus === 429 || e.httpStatus === 408
  return true
}

export function asNetworkError(e: unknown): Error {
  if (e instanceof NetworkError || e instanceof ServiceError || e instanceof IntegrityError) return e
  const message = e instanceof Error ? e.message : String(e)
  return new NetworkError(`range fetch failed: ${message}`, null, { cause: e })
}

/** Settles with `p`, or rejects as soon as `signal` aborts even if `p` never settles (a source that ignores signals). */
export function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    p.catch(() => {})
    return Promise.reject(signal.reason)
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort)
        resolve(v)
      },
      (e) => {
        signal.removeEventListener('abort', onAbort)
        reject(e)
      },
    )
  })
}
