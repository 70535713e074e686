// New transfers in the inbox, found without listing it all: every interval one small
// inbox call asks only for what was sent after the newest transfer known. The interval is
// short while someone looks at `inbox/` (a listing in the last minute), so a new folder
// shows within seconds there, and long otherwise, so an idle mount costs one call a
// minute. What it finds goes into the inbox listing at once (the kernel keeps no listing
// of ours: each `ls` asks readdir again, and a name that was not there is not cached as
// missing), and the metadata store tells each arrival once.
import type { TransferCatalog } from './catalog.js'
import type { MetadataStore } from './metadata.js'
import type { Clock } from '../base/clock.js'

export interface ArrivalOptions {
  /** ms: between two checks while someone looks at the inbox. */
  watchedIntervalMs: number
  /** ms: between two checks otherwise. */
  idleIntervalMs: number
  /** ms: a listing of `inbox/` this recent means someone is looking. */
  lookWindowMs: number
  /** Transfers one check asks for at most; a full page means more: the whole inbox is listed again. */
  take: number
}

// Within 10 s while looked at and within 60 s otherwise, with room for the call itself.
export const DEFAULT_ARRIVAL_OPTIONS: ArrivalOptions = { watchedIntervalMs: 8_000, idleIntervalMs: 50_000, lookWindowMs: 60_000, take: 50 }

export class ArrivalWatch {
  private lastLook = Number.NEGATIVE_INFINITY
  private lastCheck = Number.NEGATIVE_INFINITY
  private timer: NodeJS.Timeout | undefined
  private dueAt = Number.POSITIVE_INFINITY
  private running: Promise<void> | undefined
  private stopped = false

  constructor(
    private readonly store: MetadataStore,
    private readonly catalog: TransferCatalog,
    private readonly clock: Clock,
    private readonly options: ArrivalOptions = DEFAULT_ARRIVAL_OPTIONS,
  ) {}

  start(): void {
    this.schedule()
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.running
  }

  /** Someone listed `inbox/`: check at the short interval from now on. */
  looked(): void {
    this.lastLook = this.clock.now()
    if (this.dueAt > this.lastCheck + this.options.watchedIntervalMs) this.schedule()
  }

  /** One check: the transfers sent after the newest known, into the listing. */
  async check(): Promise<void> {
    this.lastCheck = this.clock.now()
    const newest = this.store.newestInboxSentdate()
    // Before a first listing there is nothing to be newer than; a full listing in flight
    // will hold whatever is new.
    if (newest === undefined || this.store.inboxLoading) {
      if (newest === undefined) await this.store.inbox().catch(() => undefined)
      return
    }
    const found = await this.catalog.inboxSince(newest, this.options.take)
    this.store.addToInbox(found)
    if (found.length >= this.options.take) this.store.expireInbox()
  }

  private interval(): number {
    const watched = this.clock.now() - this.lastLook < this.options.lookWindowMs
    return watched ? this.options.watchedIntervalMs : this.options.idleIntervalMs
  }

  private schedule(): void {
    if (this.stopped || this.running) return
    clearTimeout(this.timer)
    const now = this.clock.now()
    this.dueAt = Math.max(now, this.lastCheck + this.interval())
    this.timer = setTimeout(() => {
      this.dueAt = Number.POSITIVE_INFINITY
      this.running = this.check()
        .catch(() => undefined) // offline: the next check tries again; the listing stays
        .finally(() => {
          this.running = undefined
          this.schedule()
        })
    }, this.dueAt - now)
    this.timer.unref()
  }
}
