import { describe, expect, it } from 'vitest'
import { backoffDelay, backoffSchedule, parseRetryAfter, withRetry } from '../../src/api/retry.js'
import { classify, isRefusal, type CallKind } from '../../src/api/failure.js'
import { IntegrityError, NetworkError, OfflineError, ServiceError } from '../../src/api/errors.js'

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

describe('the one classifier', () => {
  const verdict = (kind: CallKind) => (err: unknown) => classify(kind, err)

  it('retries a call that could act twice only when the service surely did nothing', () => {
    const once = verdict('create')
    expect(once(svc(503)).retry).toBe(true)
    expect(once(svc(429, 2))).toEqual({ retry: true, waitMs: 2000, refusal: false })
    expect(once(svc(500)).retry).toBe(false)
    expect(once(new NetworkError('reset', 'UND_ERR_SOCKET')).retry).toBe(false)
    expect(once(new NetworkError('refused', 'ECONNREFUSED')).retry).toBe(true)
    expect(once(svc(400))).toEqual({ retry: false, refusal: true })
  })

  it('retries queries on network errors, 429 and 5xx, never on other 4xx', () => {
    const safe = verdict('query')
    expect(safe(new NetworkError('reset', 'UND_ERR_SOCKET')).retry).toBe(true)
    expect(safe(svc(500)).retry).toBe(true)
    expect(safe(svc(429)).retry).toBe(true)
    for (const s of [401, 403, 404]) expect(safe(svc(s))).toEqual({ retry: false, refusal: true })
  })

  it('retries upload chunks on 406, 449, 5xx and network errors', () => {
    for (const s of [406, 449, 500, 503]) expect(classify('upload', svc(s)).retry).toBe(true)
    for (const s of [400, 401, 409]) expect(classify('upload', svc(s)).retry).toBe(false)
    expect(classify('upload', new NetworkError('x', 'ECONNRESET')).retry).toBe(true)
  })

  it('retries downloads and range hashes alike: any status but the definitive ones, and bad bytes', () => {
    for (const kind of ['download', 'hash'] as const) {
      for (const s of [200, 500, 502, 403, 409]) expect(classify(kind, svc(s)).retry, `${kind} ${s}`).toBe(true)
      for (const s of [401, 404, 416]) expect(classify(kind, svc(s)), `${kind} ${s}`).toEqual({ retry: false, refusal: true })
      expect(classify(kind, new IntegrityError('x', 'a', 'b')).retry).toBe(true)
      expect(classify(kind, new Error('bug'))).toEqual({ retry: false, refusal: false })
    }
  })

  it('never retries an untrusted certificate or a known outage, for any kind', () => {
    for (const kind of ['query', 'create', 'upload', 'download', 'hash'] as const) {
      expect(classify(kind, new NetworkError('x', 'SELF_SIGNED_CERT_IN_CHAIN')).retry).toBe(false)
      expect(classify(kind, new OfflineError('x', 'OFFLINE')).retry).toBe(false)
    }
  })

  it('a refusal is a definitive 4xx; overload, rate limits and UploadNotComplete are not', () => {
    expect(isRefusal(svc(400))).toBe(true)
    expect(isRefusal(svc(413))).toBe(true)
    for (const s of [406, 408, 429, 449, 500, 503]) expect(isRefusal(svc(s)), String(s)).toBe(false)
    expect(isRefusal(new ServiceError('x', 409, 'UploadNotComplete'))).toBe(false)
    expect(isRefusal(new NetworkError('x', 'ECONNRESET'))).toBe(false)
  })
})

describe('withRetry', () => {
  const fast = { ...opts, baseDelayMs: 1, maxDelayMs: 2 }

  it('stops after maxTries and throws the last error', async () => {
    let calls = 0
    await expect(
      withRetry(async () => { calls++; throw svc(503) }, { policy: fast, kind: 'query' }),
    ).rejects.toBeInstanceOf(ServiceError)
    expect(calls).toBe(6)
  })

  it('does not retry what the classifier refuses', async () => {
    let calls = 0
    await expect(withRetry(async () => { calls++; throw svc(400) }, { policy: fast, kind: 'query' })).rejects.toThrow()
    expect(calls).toBe(1)
  })

  it('gives up rather than wait past the deadline', async () => {
    let calls = 0
    const policy = { ...fast, deadlineMs: 1000 }
    await expect(
      withRetry(async () => { calls++; throw svc(429, 5) }, { policy, kind: 'query' }),
    ).rejects.toBeInstanceOf(ServiceError)
    expect(calls).toBe(1)
  })

  it('returns the first success and passes the attempt number', async () => {
    const seen: number[] = []
    const result = await withRetry(
      async (attempt) => { seen.push(attempt); if (attempt < 2) throw new NetworkError('x', 'ECONNRESET'); return 'ok' },
      { policy: fast, kind: 'query' },
    )
    expect(result).toBe('ok')
    expect(seen).toEqual([0, 1, 2])
  })

  it('stops at once when the caller aborts', async () => {
    const ac = new AbortController()
    let calls = 0
    const p = withRetry(async () => { calls++; ac.abort(new Error('stop')); throw svc(503) }, { policy: fast, kind: 'query', signal: ac.signal })
    await expect(p).rejects.toThrow('stop')
    expect(calls).toBe(1)
  })

  it('starts its run of failures over when the work made progress', async () => {
    let done = 0
    let calls = 0
    const policy = { ...fast, maxTries: 3 }
    // Each try makes progress and fails: with progress counted, three tries never run out.
    const result = await withRetry(async () => {
      calls++
      if (calls < 6) { done++; throw svc(503) }
      return 'ok'
    }, { policy, kind: 'query', progress: () => done })
    expect(result).toBe('ok')
    expect(calls).toBe(6)
  })

  it('follows a moving deadline', async () => {
    let calls = 0
    const started = Date.now()
    await expect(withRetry(async () => { calls++; throw svc(503) }, {
      policy: { ...fast, maxTries: Infinity, deadlineMs: 60_000 }, kind: 'query', deadline: () => started + 50,
    })).rejects.toBeInstanceOf(ServiceError)
    expect(Date.now() - started).toBeLessThan(1000)
    expect(calls).toBeGreaterThan(1)
  })
})
