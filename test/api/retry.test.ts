import { describe, expect, it } from 'vitest'
import { apiClassifier, backoffDelay, backoffSchedule, downloadClassifier, parseRetryAfter, uploadClassifier, withRetry } from '../../src/api/retry.js'
import { IntegrityError, NetworkError, ServiceError } from '../../src/api/errors.js'

const opts = { maxTries: 6, baseDelayMs: 100, maxDelayMs: 1000, deadlineMs: 60_000 }
const svc = (status: number, retryAfter: number | null = null) => new ServiceError('x', status, null, null, null, null, retryAfter)

describe('backoff schedule', () => {
  it('doubles each step, capped, with the jitter in the upper half', () => {
    expect(backoffSchedule(opts, () => 0)).toEqual([50, 100, 200, 400, 500])
    expect(backoffSchedule(opts, () => 1)).toEqual([100, 200, 400, 800, 1000])
    for (let i = 0; i < 20; i++) {
      const d = backoffDelay(i, opts)
      const step = Math.min(1000, 100 * 2 ** i)
      expect(d).toBeGreaterThanOrEqual(step / 2)
      expect(d).toBeLessThanOrEqual(step)
    }
  })

  it('reads Retry-After as seconds or as a date', () => {
    expect(parseRetryAfter('3')).toBe(3000)
    expect(parseRetryAfter(' 0.5 ')).toBe(500)
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000)
    expect(parseRetryAfter('soon')).toBeNull()
    expect(parseRetryAfter(undefined)).toBeNull()
  })
})

describe('classifiers', () => {
  it('retries a call that could duplicate only when the service surely did nothing', () => {
    const once = apiClassifier(false)
    expect(once(svc(503)).retry).toBe(true)
    expect(once(svc(429, 2))).toEqual({ retry: true, waitMs: 2000 })
    expect(once(svc(500)).retry).toBe(false)
    expect(once(new NetworkError('reset', 'UND_ERR_SOCKET')).retry).toBe(false)
    expect(once(new NetworkError('refused', 'ECONNREFUSED')).retry).toBe(true)
    expect(once(svc(400)).retry).toBe(false)
  })

  it('retries idempotent calls on network errors and 5xx, never on 4xx', () => {
    const safe = apiClassifier(true)
    expect(safe(new NetworkError('reset', 'UND_ERR_SOCKET')).retry).toBe(true)
    expect(safe(svc(500)).retry).toBe(true)
    expect(safe(svc(401)).retry).toBe(false)
    expect(safe(svc(404)).retry).toBe(false)
  })

  it('retries upload chunks on 406, 449, 5xx and network errors', () => {
    for (const s of [406, 449, 500, 503]) expect(uploadClassifier(svc(s)).retry).toBe(true)
    for (const s of [400, 401, 409]) expect(uploadClassifier(svc(s)).retry).toBe(false)
    expect(uploadClassifier(new NetworkError('x', 'ECONNRESET')).retry).toBe(true)
  })

  it('retries downloads on any status but the definitive ones, and on bad bytes', () => {
    for (const s of [200, 500, 502, 403, 409]) expect(downloadClassifier(svc(s)).retry).toBe(true)
    for (const s of [401, 404, 416]) expect(downloadClassifier(svc(s)).retry).toBe(false)
    expect(downloadClassifier(new IntegrityError('x', 'a', 'b')).retry).toBe(true)
    expect(downloadClassifier(new Error('bug')).retry).toBe(false)
  })
})

describe('withRetry', () => {
  const fast = { ...opts, baseDelayMs: 1, maxDelayMs: 2 }

  it('stops after maxTries and throws the last error', async () => {
    let calls = 0
    await expect(
      withRetry(async () => { calls++; throw svc(503) }, { policy: fast, classify: apiClassifier(true) }),
    ).rejects.toBeInstanceOf(ServiceError)
    expect(calls).toBe(6)
  })

  it('does not retry what the classifier refuses', async () => {
    let calls = 0
    await expect(withRetry(async () => { calls++; throw svc(400) }, { policy: fast, classify: apiClassifier(true) })).rejects.toThrow()
    expect(calls).toBe(1)
  })

  it('gives up rather than wait past the deadline', async () => {
    let calls = 0
    const policy = { ...fast, deadlineMs: 1000 }
    await expect(
      withRetry(async () => { calls++; throw svc(429, 5) }, { policy, classify: apiClassifier(true) }),
    ).rejects.toBeInstanceOf(ServiceError)
    expect(calls).toBe(1)
  })

  it('returns the first success and passes the attempt number', async () => {
    const seen: number[] = []
    const result = await withRetry(
      async (attempt) => { seen.push(attempt); if (attempt < 2) throw new NetworkError('x', 'ECONNRESET'); return 'ok' },
      { policy: fast, classify: apiClassifier(true) },
    )
    expect(result).toBe('ok')
    expect(seen).toEqual([0, 1, 2])
  })

  it('stops at once when the caller aborts', async () => {
    const ac = new AbortController()
    let calls = 0
    const p = withRetry(async () => { calls++; ac.abort(new Error('stop')); throw svc(503) }, { policy: fast, classify: apiClassifier(true), signal: ac.signal })
    await expect(p).rejects.toThrow('stop')
    expect(calls).toBe(1)
  })
})
