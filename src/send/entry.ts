// The state the engine keeps per outbox entry, and what it remembers of finished sends.
import type { JournalRecord } from './journal.js'
import type { CancelTimer } from '../base/clock.js'

export type EntryPhase = 'settling' | 'waiting' | 'queued' | 'sending' | 'failed'

export interface Entry {
  key: string
  /** Bumped by every content change; a send belongs to the generation it started in. */
  gen: number
  lastActivity: number
  phase: EntryPhase
  note: string | null
  lastError: string | null
  attempts: number
  timer: CancelTimer | null
  abort: AbortController | null
  running: Promise<void> | null
  finishing: Promise<void> | null
  journal: JournalRecord | null
  sentBytes: number
  totalBytes: number
  samples: Array<[number, number]>
  queuedAt: number
}

export interface FinishedSend {
  name: string
  transferid: string
  url: string | null
  recipients: string[]
  totalBytes: number
  finishedAt: number
  note: string | null
}
