// The one backoff and the one retry loop: exponential, capped, with jitter, Retry-After
// honoured, bounded by tries and by a deadline. What is worth retrying is the classifier's
// word (failure.ts); how long to wait is decided here for every caller. The schedule is
// pure so it can be tested without waiting.
import { classify, type CallKind } from './failure.js'
import type { RetryOptions } from './options.js'

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

/** What the loop tells its caller about a failure it will retry (logging, counters, status); never given secrets. */
export interface RetryEvent {
  /** 0 for the first retry of a run of failures. */
  attempt: number
  waitMs: number
  error: unknown
}

export interface RunOptions {
  /** The kind of call, for the classifier. */
  kind: CallKind
  policy: RetryOptions
  signal?: AbortSignal
  /**
   * The deadline as a time stamp, when it moves (a read path that extends it while someone
   * still waits); default: `policy.deadlineMs` from the start.
   */
  deadline?: () => number
  /**
   * Work done so far (bytes, pieces): when it grew since the last failure, the run of
   * failures starts over (the backoff from its first step, the deadline from now).
   */
  progress?: () => number
  /** Called before each wait. */
  onRetry?: (event: RetryEvent) => void
  random?: () => number
}

/** Run `op` until it succeeds, the classifier says stop, the tries run out or the deadline passes. */
export async function withRetry<T>(op: (attempt: number) => Promise<T>, run: RunOptions): Promise<T> {
  const { policy, signal } = run
  let deadline = Date.now() + policy.deadlineMs
  const deadlineNow = () => run.deadline?.() ?? deadline
  let failures = 0
  let done = run.progress?.() ?? 0
  for (let attempt = 0; ; attempt++) {
    try {
      return await op(attempt)
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err
      const verdict = classify(run.kind, err)
      if (!verdict.retry) throw err
      const now = run.progress?.() ?? 0
      if (now > done) {
        done = now
        failures = 0
        deadline = Date.now() + policy.deadlineMs
      }
      if (failures + 1 >= policy.maxTries) throw err
      const waitMs = verdict.waitMs ?? backoffDelay(failures, policy, run.random)
      if (Date.now() + waitMs > deadlineNow()) throw err
      run.onRetry?.({ attempt: failures, waitMs, error: err })
      failures++
      await sleep(waitMs, signal)
    }
  }
}
