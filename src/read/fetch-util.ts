// Small helpers of the fetch path: what error a reader finally sees, and waiting that an
// abort always ends.
import { DeadlineError, IntegrityError, NetworkError, ServiceError } from '../api/errors.js'
import { classify } from '../api/failure.js'
import type { Span } from '../base/chunk-grid.js'
import type { RemoteFile } from './source.js'

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

/**
 * One try of `fn` that may last at most `ms`: past that it is aborted and fails as a
 * network timeout (a transient fault, retried), unlike an abort by the caller's `signal`.
 */
export async function within<T>(ms: number, signal: AbortSignal, what: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const timeout = AbortSignal.timeout(ms)
  const both = AbortSignal.any([signal, timeout])
  try {
    return await abortable(fn(both), both)
  } catch (e) {
    if (timeout.aborted && !signal.aborted) throw new NetworkError(`${what} took longer than ${ms} ms`, 'ETIMEDOUT')
    throw e
  }
}

/** A run of failed tries: since when, how many, and the last reason. */
export interface Trouble {
  since: number
  tries: number
  error: unknown
}

/** The error a reader gets: transient faults that outlasted the deadline, or a definitive answer as it is. */
export function gaveUp(file: RemoteFile, e: unknown, trouble: Trouble | null): Error {
  const last = asNetworkError(e)
  if (!trouble || !classify('download', e).retry) return last
  const seconds = Math.round((Date.now() - trouble.since) / 1000)
  return new DeadlineError(`reading ${file.fileName}: still failing after ${trouble.tries + 1} tries in ${seconds} s: ${last.message}`, { cause: last })
}

