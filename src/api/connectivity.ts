// Whether the service can be reached at all. Every answer the transport gets (any HTTP
// status) says yes; a connection that cannot be made (refused, no such host, no route,
// TLS refused) says no. After a few such failures in a row the client is offline: callers
// that would only wait out their deadlines against a dead service (a cold read, a
// listing) fail at once, and a background probe with backoff finds the service again,
// after which everything works without a remount.
import { OfflineError } from './errors.js'
import { isUnreachable, needsNewSettings } from './failure.js'
import type { OfflineOptions } from './options.js'
import { backoffDelay } from './retry.js'

export interface ReachabilityState {
  online: boolean
  /** ms since the epoch: when the state last changed. */
  since: number
  /** Why the service cannot be reached (a message without secrets), while offline. */
  reason: string | null
}

export class Connectivity {
  private failures = 0
  private state: ReachabilityState = { online: true, since: Date.now(), reason: null }
  private readonly listeners = new Set<(state: ReachabilityState) => void>()
  private probeTimer: NodeJS.Timeout | null = null
  private probes = 0
  private closed = false
  /** The origin that failed last: the one the probe knocks on. */
  private lastOrigin: string | null = null
  /** The failure that made the client offline: the cause of what callers are refused with. */
  private lastError: unknown = null

  constructor(
    private readonly options: OfflineOptions,
    /** One request to `origin`; resolving means the service answered. */
    private readonly knock: (origin: string) => Promise<void>,
  ) {}

  get online(): boolean {
    return this.state.online
  }

  get current(): ReachabilityState {
    return this.state
  }

  /** What a caller refused for being offline throws. */
  offlineError(): OfflineError {
    const { since, reason } = this.state
    return new OfflineError(`the service has been unreachable since ${new Date(since).toISOString()}${reason ? ` (${reason})` : ''}`, 'OFFLINE', { cause: this.lastError })
  }

  /** Calls `fn` on every change between online and offline; returns the way to stop. */
  onChange(fn: (state: ReachabilityState) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  /** The service answered (with any status). */
  answered(): void {
    this.failures = 0
    if (!this.state.online) this.set({ online: true, since: Date.now(), reason: null })
  }

  /** A request to `origin` failed with `err`; only failures to connect at all count. */
  failed(origin: string, err: unknown): void {
    if (!isUnreachable(err)) return
    this.lastOrigin = origin
    // One is enough where nothing but new settings can help: waiting for more only delays the word.
    this.failures = needsNewSettings(err) ? Math.max(this.failures + 1, this.options.afterFailures) : this.failures + 1
    if (this.state.online && this.failures >= this.options.afterFailures) {
      this.lastError = err
      this.set({ online: false, since: Date.now(), reason: err instanceof Error ? err.message : String(err) })
      this.probes = 0
      this.scheduleProbe()
    }
  }

  close(): void {
    this.closed = true
    if (this.probeTimer) clearTimeout(this.probeTimer)
    this.probeTimer = null
  }

  private set(state: ReachabilityState): void {
    this.state = state
    for (const fn of this.listeners) fn(state)
  }

  private scheduleProbe(): void {
    if (this.closed || this.state.online || this.probeTimer) return
    const wait = backoffDelay(this.probes++, { baseDelayMs: this.options.probeBaseDelayMs, maxDelayMs: this.options.probeMaxDelayMs })
    this.probeTimer = setTimeout(() => {
      this.probeTimer = null
      const origin = this.lastOrigin
      if (this.closed || this.state.online || origin === null) return
      // The knock goes through the transport, which reports its outcome here itself.
      this.knock(origin).catch(() => {}).finally(() => this.scheduleProbe())
    }, wait)
    this.probeTimer.unref()
  }
}
