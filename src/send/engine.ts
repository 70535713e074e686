// The send engine: entries settle (nothing open inside, quiet for settleMs), queue for
// a send slot, run their send (pipeline.ts), retry with backoff on network trouble,
// stop on a refusal until fixed, and leave the outbox once Complete answered. A change
// to an entry aborts its send before the change lands.
import { longPathFs as disk, removeTree } from '../base/long-paths.js'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { ServiceError } from '../api/errors.js'
import { backoffDelay } from '../api/retry.js'
import { EarlyUploads } from './early.js'
import type { Entry, FinishedSend } from './entry.js'
import type { EngineDeps, SendHost } from './host.js'
import { abandonTransfer, type JournalRecord } from './journal.js'
import { isWithin } from './names.js'
import type { SendOptions } from './options.js'
import { learnIfSent, runSend } from './pipeline.js'
import type { KnownMd5 } from './snapshot.js'
import { failureReason, isRefusal } from './rules.js'
import { sentRecordOf } from './sent-log.js'

export class SendEngine implements SendHost {
  readonly entries = new Map<string, Entry>()
  readonly finished: FinishedSend[] = []
  private queue: string[] = []
  private active = 0
  halted = false
  private tracked = new Set<Promise<unknown>>()
  /** Entries a dead process was writing to when it stopped: held until changed. */
  readonly interrupted = new Set<string>()
  /** Journals found at start whose entry has not been seen yet. */
  private pendingJournals = new Map<string, JournalRecord>()
  private readonly early = new EarlyUploads(this)

  constructor(readonly d: EngineDeps) {}

  get options(): SendOptions {
    return this.d.options
  }

  // ---- start --------------------------------------------------------------------------

  /** Picks up what a previous run left: journals and every entry still staged. */
  async resume(journals: JournalRecord[], keys: string[], interrupted: Iterable<string> = []): Promise<void> {
    for (const k of interrupted) this.interrupted.add(k)
    for (const j of journals) {
      const other = this.pendingJournals.get(j.entryKey)
      if (other) this.track(this.dropJournal(other))
      this.pendingJournals.set(j.entryKey, j)
    }
    const present = new Set(keys)
    for (const [key, j] of [...this.pendingJournals]) {
      if (!present.has(key)) {
        this.pendingJournals.delete(key)
        this.track(this.dropJournal(j))
      }
    }
    for (const key of keys) this.touch(key, false)
    await this.idleTracked()
  }

  // ---- what the file system tells us ----------------------------------------------------

  private entry(key: string): Entry {
    let e = this.entries.get(key)
    if (!e) {
      e = {
        key, gen: 0, lastActivity: this.d.clock.now(), phase: 'settling', note: null, lastError: null, attempts: 0,
        timer: null, abort: null, running: null, finishing: null, journal: this.pendingJournals.get(key) ?? null,
        sentBytes: 0, totalBytes: 0, samples: [], queuedAt: 0,
      }
      this.pendingJournals.delete(key)
      this.entries.set(key, e)
    }
    return e
  }

  /**
   * The entry's content changed (or may have) at outbox path `at` (the entry's key: any
   * of it): abort its send before the change lands, and settle again. `content` false =
   * only activity (a close, a chmod).
   */
  touch(key: string, content = true, at = key): void {
    if (this.halted) return
    const e = this.entry(key)
    if (content) {
      this.early.touched(key, at)
      if (this.interrupted.delete(key)) this.d.clearInterrupted(key)
      e.gen++
      e.abort?.abort()
      e.abort = null
      e.lastError = null
      e.attempts = 0
      e.note = null
    }
    e.lastActivity = this.d.clock.now()
    if (content || e.phase === 'settling' || e.phase === 'waiting') {
      e.phase = 'settling'
      this.queue = this.queue.filter((k) => k !== key)
      this.schedule(e)
    }
  }

  /** The file at outbox path `p` was closed after writing, or renamed into place: it may go up before its entry settles. */
  ready(p: string): void {
    const key = this.d.tree.entryOf(p)
    const e = key === null ? undefined : this.entries.get(key)
    if (e) this.early.ready(e, p)
  }

  takeOverEarly(e: Entry): Promise<KnownMd5> {
    return this.early.takeOver(e)
  }

  /** Something was opened or closed inside: re-evaluate, without counting it as a change. */
  recheck(key: string): void {
    const e = this.entries.get(key)
    if (!e || this.halted) return
    if (e.phase === 'settling') this.schedule(e)
  }

  /** Waits while an entry at, under or above `p` is being removed after its send. */
  async gate(p: string): Promise<void> {
    for (;;) {
      const busy = [...this.entries.values()].find((e) => e.finishing && (isWithin(e.key, p) || isWithin(p, e.key)))
      if (!busy?.finishing) return
      await busy.finishing.catch(() => undefined)
    }
  }

  /** True while an entry at, under or above `p` is being removed after its send. */
  finishingAt(p: string): boolean {
    for (const e of this.entries.values()) if (e.finishing && (isWithin(e.key, p) || isWithin(p, e.key))) return true
    return false
  }

  // ---- settling ----------------------------------------------------------------------------

  private schedule(e: Entry): void {
    e.timer?.()
    e.timer = null
    if (this.d.isOpen(e.key)) {
      e.note = e.journal?.completed ? 'sent; waiting for open files to close' : 'open'
      return
    }
    e.note = null
    const due = e.lastActivity + this.d.options.settleMs
    e.timer = this.d.clock.setTimer(due - this.d.clock.now(), () => {
      e.timer = null
      if (e.phase !== 'settling') return
      if (this.d.isOpen(e.key)) {
        e.note = 'open'
        return
      }
      if (this.d.clock.now() < e.lastActivity + this.d.options.settleMs) return this.schedule(e)
      this.enqueue(e)
    })
  }

  private enqueue(e: Entry): void {
    e.phase = 'queued'
    e.queuedAt = this.d.clock.now()
    if (!this.queue.includes(e.key)) this.queue.push(e.key)
    this.pump()
  }

  private pump(): void {
    while (!this.halted && this.active < this.d.options.maxConcurrentSends) {
      const i = this.queue.findIndex((k) => !this.entries.get(k)?.running)
      if (i < 0) return
      const key = this.queue.splice(i, 1)[0] as string
      const e = this.entries.get(key)
      if (e && e.phase === 'queued') this.start(e)
    }
  }

  private start(e: Entry): void {
    const gen = e.gen
    const ac = new AbortController()
    e.abort = ac
    e.phase = 'sending'
    e.note = null
    this.active++
    const run = (async () => {
      try {
        await runSend(this, e, gen, ac.signal)
      } catch (err) {
        this.failed(e, gen, ac.signal, err)
      } finally {
        this.active--
        e.running = null
        if (e.abort === ac) e.abort = null
        this.pump()
      }
    })()
    e.running = run
    this.track(run)
  }

  // ---- sending -------------------------------------------------------------------------------

  async recordSent(j: JournalRecord): Promise<void> {
    if (!j.transfer || (await this.d.sentLog.has(j.transfer.transferid))) return
    if (this.halted) return
    await this.d.sentLog.record(sentRecordOf(j.transfer, { subject: j.subject, recipients: j.recipients, files: j.files, sentAt: this.d.clock.now(), url: j.url, readers: j.readers }))
  }

  /** Complete answered: record it, then let the entry leave the outbox unless it changed meanwhile. */
  async finish(e: Entry, gen: number, j: JournalRecord): Promise<void> {
    await this.recordSent(j)
    if (this.halted) return
    const id = j.transfer?.transferid ?? ''
    const done: FinishedSend = {
      name: e.key.slice(1), transferid: id, url: j.url, recipients: j.recipients, totalBytes: e.totalBytes,
      finishedAt: this.d.clock.now(), note: null,
    }
    if (e.gen !== gen) {
      // Changed after its send was fixed: the sent transfer has the old bytes; the new
      // content stays and is sent as a transfer of its own.
      done.note = 'changed while being sent: the new content is sent again'
      this.remember(done)
      e.journal = null
      await this.d.journal.retire(j)
      return
    }
    let release!: () => void
    e.finishing = new Promise<void>((r) => { release = r })
    // Set the flag, then look for writers; an open for writing marks itself, then looks
    // for the flag: one of the two always sees the other.
    if (this.d.hasWriters(e.key)) {
      e.finishing = null
      release()
      e.phase = 'settling'
      e.note = 'sent; waiting for open files to close'
      this.schedule(e)
      return
    }
    try {
      const trash = path.join(this.d.trashDir, randomBytes(8).toString('hex'))
      await disk.rename(this.d.tree.real(e.key), trash).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err
      })
      await this.d.tree.refreshKind(e.key)
      this.d.forget(e.key)
      await this.d.journal.retire(j)
      this.entries.delete(e.key)
      this.remember(done)
      this.track(removeTree(trash))
    } finally {
      e.finishing = null
      release()
    }
  }

  private remember(f: FinishedSend): void {
    this.finished.unshift(f)
    this.finished.length = Math.min(this.finished.length, this.d.options.statusHistory)
  }

  private failed(e: Entry, gen: number, signal: AbortSignal, err: unknown): void {
    if (this.halted || e.gen !== gen || signal.aborted) return
    e.lastError = failureReason(err)
    const j = e.journal
    if (isRefusal(err)) {
      if (j) j.initializing = false
      e.phase = 'failed'
      e.note = 'refused by the service: rename it or fix the settings, then retry'
      if (j && j.transfer && !j.completed) {
        abandonTransfer(j)
        this.track(this.d.journal.save(j))
      }
      return
    }
    if (j && err instanceof ServiceError && err.responsestatus === 'UploadNotComplete') {
      // The service lacks chunks we thought confirmed: send every chunk again.
      j.confirmed = {}
      this.track(this.d.journal.save(j))
    }
    e.attempts++
    const o = this.d.options
    const asked = err instanceof ServiceError && err.retryAfter !== null ? err.retryAfter * 1000 : 0
    const delay = Math.max(asked, backoffDelay(e.attempts - 1, { baseDelayMs: o.retryBaseDelayMs, maxDelayMs: o.retryMaxDelayMs }))
    e.phase = 'queued'
    e.note = `retrying in ${Math.ceil(delay / 1000)} s (try ${e.attempts + 1})`
    e.timer?.()
    e.timer = this.d.clock.setTimer(delay, () => {
      e.timer = null
      if (e.gen === gen && e.phase === 'queued') this.enqueue(e)
    })
  }

  async forgetGone(e: Entry, signal: AbortSignal): Promise<void> {
    // A send whose Complete a crash cut off may be sent: then it is recorded (sent/ shows
    // it) rather than logged as abandoned. Asked first, so that a failure leaves the entry
    // to be tried again.
    if (e.journal) await learnIfSent(this, e.journal, signal)
    this.entries.delete(e.key)
    if (e.journal) await this.dropJournal(e.journal)
  }

  async dropJournal(j: JournalRecord): Promise<void> {
    if (this.halted) return
    if (j.completed) await this.recordSent(j)
    await this.d.journal.retire(j)
  }

  // ---- control ----------------------------------------------------------------------------

  /** Sends refused entries again (after the user fixed the cause, e.g. a setting). */
  retryFailed(): void {
    for (const e of this.entries.values()) {
      if (e.phase !== 'failed') continue
      e.attempts = 0
      this.enqueue(e)
    }
  }

  track(p: Promise<unknown>): void {
    const q = p.catch(() => undefined)
    this.tracked.add(q)
    void q.finally(() => this.tracked.delete(q))
  }

  private async idleTracked(): Promise<void> {
    while (this.tracked.size && !this.halted) await Promise.race([Promise.allSettled([...this.tracked]), this.haltedSignal])
  }

  /**
   * Resolves once no send runs, none is queued to start now, and background writes
   * ended; at once after halt() (a dead process's calls never answer).
   */
  async idle(): Promise<void> {
    for (;;) {
      await this.idleTracked()
      if (this.halted || (this.active === 0 && this.queue.length === 0)) return
      await new Promise((r) => setImmediate(r))
    }
  }

  private onHalt: () => void = () => undefined
  private readonly haltedSignal = new Promise<void>((r) => { this.onHalt = r })

  /** As if the process died: no timer fires, nothing more is sent or written. */
  halt(): void {
    this.halted = true
    this.onHalt()
    this.early.halt()
    for (const e of this.entries.values()) {
      e.timer?.()
      e.timer = null
      e.abort?.abort()
    }
  }

  /** A clean stop: sends are aborted (they resume on the next start) and background work ends. */
  async stop(): Promise<void> {
    this.halt()
    await Promise.allSettled([...this.tracked])
  }
}
