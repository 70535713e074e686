// Small helpers of the fetch path: what error a reader finally sees, and waiting that an
// abort always ends.
import { DeadlineError, IntegrityError, NetworkError, ServiceError } from '../api/errors.js'
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

export function asNetworkError(e: unknown): Error {
  if (e instanceof NetworkError || e instanceof ServiceError || e instanceof IntegrityError || e instanceof DeadlineError) return e
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
