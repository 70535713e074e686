// A value fetched from the service and kept for a TTL, then refreshed without making
// anyone wait: after the first load every reader gets the cached value at once, a stale
// one starts a refresh in the background (stale-while-revalidate), concurrent refreshes
// share one call, and a failed refresh keeps the last value (the service may be offline).
import type { Clock } from '../base/clock.js'

export interface RefreshPolicy {
  clock: Clock
  ttlMs: number
  failureBackoffMs: number
  /** Told about every background refresh, so the owner can wait for them (tests, shutdown). */
  track?: (refresh: Promise<unknown>) => void
  /** Told when a background refresh failed (the last value stays). */
  onError?: (error: unknown) => void
}

export class Refreshing<T> {
  private value: { data: T; checkedAt: number } | undefined
  private failure: { error: unknown; at: number } | undefined
  private inflight: Promise<T> | undefined

  constructor(private readonly load: () => Promise<T>, private readonly policy: RefreshPolicy) {}

  /** The cached value, fresh or stale, without any call. */
  peek(): T | undefined {
    return this.value?.data
  }

  /** The cached value (refreshing it in the background when stale), or the first load. */
  get(): Promise<T> {
    const now = this.policy.clock.now()
    if (this.value) {
      if (now - this.value.checkedAt >= this.policy.ttlMs) this.refreshInBackground()
      return Promise.resolve(this.value.data)
    }
    if (this.failure && now - this.failure.at < this.policy.failureBackoffMs) {
      return Promise.reject(this.failure.error)
    }
    return this.refresh()
  }

  /** Loads now (or joins the load under way). */
  refresh(): Promise<T> {
    if (this.inflight) return this.inflight
    const run = (async () => {
      try {
        const data = await this.load()
        this.value = { data, checkedAt: this.policy.clock.now() }
        this.failure = undefined
        return data
      } catch (error) {
        const at = this.policy.clock.now()
        this.failure = { error, at }
        // Offline: keep the last value and try again only after another TTL, so a stat
        // storm does not become a storm of failing calls.
        if (this.value) this.value.checkedAt = at
        throw error
      } finally {
        this.inflight = undefined
      }
    })()
    this.inflight = run
    return run
  }

  /** Puts a value fetched elsewhere (e.g. by an unlock) in the cache, fresh. */
  set(data: T): void {
    this.value = { data, checkedAt: this.policy.clock.now() }
    this.failure = undefined
  }

  /** Changes the cached value without making it fresh (what is added stays until the next refresh replaces it). */
  update(change: (data: T) => T): void {
    if (this.value) this.value = { data: change(this.value.data), checkedAt: this.value.checkedAt }
  }

  /** A load is under way. */
  get loading(): boolean {
    return this.inflight !== undefined
  }

  /** Makes the value stale: the next get() refreshes it (in the background if one is cached). */
  expire(): void {
    if (this.value) this.value.checkedAt = Number.NEGATIVE_INFINITY
    this.failure = undefined
  }

  private refreshInBackground(): void {
    const pending = this.refresh().catch((error: unknown) => this.policy.onError?.(error))
    this.policy.track?.(pending)
  }
}
