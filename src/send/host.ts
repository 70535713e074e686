// What the send steps (pipeline.ts, early.ts) need of the engine that runs them, and what
// the engine is given by the outbox: kept apart so that the steps never import the engine.
import type { Clock } from '../base/clock.js'
import type { Entry } from './entry.js'
import type { Journal, JournalRecord } from './journal.js'
import type { SendOptions } from './options.js'
import type { Sender, SentLog } from './ports.js'
import type { KnownMd5 } from './snapshot.js'
import type { OutboxTree } from './tree.js'

export interface EngineDeps {
  options: SendOptions
  clock: Clock
  sender: Sender
  sentLog: SentLog
  journal: Journal
  tree: OutboxTree
  trashDir: string
  /** True while any handle is open on a path inside the entry. */
  isOpen(key: string): boolean
  /** True while a handle that may write is open (or opening) inside the entry. */
  hasWriters(key: string): boolean
  /** Why a write into the entry failed (its staged bytes may be partial), or null. */
  writeFailure(key: string): string | null
  /** The permission bits an outbox path shows (the mode its user set, else its kind's default). */
  permOf(p: string, isDir: boolean): number
  /** The entry left the outbox: forget stored attributes under it. */
  forget(key: string): void
  /** An interrupted entry was changed: its marks of unfinished writes can go. */
  clearInterrupted(key: string): void
}

/** What a send needs of the engine that runs it. */
export interface SendHost {
  readonly d: EngineDeps
  readonly halted: boolean
  readonly interrupted: ReadonlySet<string>
  track(p: Promise<unknown>): void
  /** The entry is gone (deleted, renamed, no longer an entry): forget it and its journal. */
  forgetGone(e: Entry, signal: AbortSignal): Promise<void>
  dropJournal(j: JournalRecord): Promise<void>
  recordSent(j: JournalRecord): Promise<void>
  finish(e: Entry, gen: number, j: JournalRecord): Promise<void>
  /** Ends the entry's early uploads (waiting for those under way); the MD5s they worked out. */
  takeOverEarly(e: Entry): Promise<KnownMd5>
}
