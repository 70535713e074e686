// The send journal: one JSON file per entry being sent, replaced durably before the
// next step depends on it. It records what the send is fixed to (subject, recipients,
// each file's size and MD5, the chunk size), the transfer once initialize answered,
// the chunks the service confirmed, and whether Complete answered.
import { randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { isTempOfDurableWrite, removeDurably, writeFileDurably } from '../base/durable-file.js'
import { readStateFile, stateCount } from '../base/state-file.js'
import type { InitializeAnswer } from './ports.js'

export interface JournalFile {
  /** Name in the transfer ("a.txt", "data/raw.csv"). */
  name: string
  /** Path of the staged file relative to the entry ('' when the entry is the file). */
  rel: string
  size: number
  /** Hex MD5 of the staged bytes; '' until worked out (the upload does not wait for it). */
  md5: string
}

export interface JournalRecord {
  version: 1
  id: string
  /** The outbox path of the entry ("/holiday.jpg", "/a@b.com/report.pdf"). */
  entryKey: string
  subject: string
  recipients: string[]
  chunkSize: number
  files: JournalFile[]
  /**
   * True between asking initialize and recording its answer. Found true after a crash:
   * the service may hold an orphan transfer that is never uploaded to nor completed.
   */
  initializing: boolean
  transfer: InitializeAnswer | null
  /** File name → chunk indices the service confirmed for `transfer`. */
  confirmed: Record<string, number[]>
  /**
   * Complete was asked for `files`. Found true (and `completed` false) after a crash: the
   * service may have completed the transfer without the answer being journaled, so only
   * the service can tell whether it is sent. A record without the field reads as not asked.
   */
  completing?: boolean
  /** Complete answered: the transfer exists with these files; only clean-up is left. */
  completed: boolean
  /**
   * The contact groups among the recipients were forwarded to (after Complete: only
   * forward resolves group names). A record without the field reads as not forwarded.
   */
  groupsForwarded?: boolean
  url: string | null
  /** Which of group and other could read each file in the outbox when the files were fixed (sent-access.ts). */
  readers?: Record<string, number>
  /**
   * Transfers initialized for this entry and then dropped: never completed by us (one whose
   * Complete a crash cut off is asked about first, and dropped only when it is not sent).
   */
  abandoned: string[]
}

export function newJournalRecord(fields: Pick<JournalRecord, 'entryKey' | 'subject' | 'recipients' | 'chunkSize' | 'files'>): JournalRecord {
  return {
    version: 1,
    id: randomBytes(8).toString('hex'),
    ...fields,
    initializing: false,
    transfer: null,
    confirmed: {},
    completed: false,
    url: null,
    abandoned: [],
  }
}

/** Transfers that were initialized for an entry and dropped before Complete. */
export const ABANDONED_LOG = 'abandoned.log'

/** The record's transfer is dropped: never completed, logged as abandoned when the record ends. */
export function abandonTransfer(rec: JournalRecord): void {
  if (rec.transfer) rec.abandoned.push(rec.transfer.transferid)
  Object.assign(rec, { transfer: null, confirmed: {}, initializing: false, completing: false })
}

interface Slot { queued: Promise<void> | null; tail: Promise<void> }

export class Journal {
  private slots = new Map<string, Slot>()
  private halted = false
  private inFlight = new Set<Promise<void>>()

  constructor(readonly dir: string) {}

  private file(id: string): string {
    return path.join(this.dir, `${id}.json`)
  }

  async loadAll(): Promise<JournalRecord[]> {
    await fsp.mkdir(this.dir, { recursive: true })
    const out: JournalRecord[] = []
    for (const name of await fsp.readdir(this.dir)) {
      const full = path.join(this.dir, name)
      if (isTempOfDurableWrite(name)) {
        await fsp.rm(full, { force: true })
        continue
      }
      if (!name.endsWith('.json')) continue
      try {
        const rec = await readStateFile(full)
        if (isJournalRecord(rec)) out.push(rec)
        else throw new Error(`${full}: not a journal record`)
      } catch {
        // A torn file cannot come from writeFileDurably; keep it aside rather than guess.
        await fsp.rename(full, full + '.bad').catch(() => undefined)
      }
    }
    return out
  }

  /**
   * Writes the record as it is when the write starts. Saves of one record are
   * serialized, and a save asked while another waits joins it.
   */
  save(rec: JournalRecord): Promise<void> {
    let slot = this.slots.get(rec.id)
    if (!slot) {
      slot = { queued: null, tail: Promise.resolve() }
      this.slots.set(rec.id, slot)
    }
    if (slot.queued) return slot.queued
    const s = slot
    const p = s.tail.then(() => {
      s.queued = null
      return this.run(() => writeFileDurably(this.file(rec.id), JSON.stringify(rec)))
    })
    s.queued = p
    s.tail = p.catch(() => undefined)
    return p
  }

  /**
   * Ends a record: transfers initialized for the entry and never completed are first
   * appended to `abandoned.log` (one JSON line each), so no transfer the service holds
   * goes unaccounted for.
   */
  async retire(rec: JournalRecord): Promise<void> {
    const ids = [...rec.abandoned]
    if (rec.transfer && !rec.completed) ids.push(rec.transfer.transferid)
    if ((ids.length || rec.initializing) && !this.halted) {
      // completePossible: Complete was asked for the last of them and its answer never journaled.
      const line = JSON.stringify({ entryKey: rec.entryKey, subject: rec.subject, transferids: ids, orphanPossible: rec.initializing, completePossible: !!rec.completing && !rec.completed, at: Date.now() })
      const h = await fsp.open(path.join(this.dir, ABANDONED_LOG), 'a', 0o600)
      try {
        await h.write(line + '\n')
        await h.sync()
      } finally {
        await h.close()
      }
    }
    await this.remove(rec.id)
  }

  remove(id: string): Promise<void> {
    const slot = this.slots.get(id)
    const before = slot ? slot.tail : Promise.resolve()
    const p = before.then(() => this.run(() => removeDurably(this.file(id))))
    this.slots.set(id, { queued: null, tail: p.catch(() => undefined) })
    return p.finally(() => {
      const s = this.slots.get(id)
      if (s && s.queued === null) this.slots.delete(id)
    })
  }

  private run(op: () => Promise<void>): Promise<void> {
    if (this.halted) return Promise.resolve()
    const p = op()
    this.inFlight.add(p)
    void p.catch(() => undefined).finally(() => this.inFlight.delete(p))
    return p
  }

  /** As if the process died: nothing more is written; resolves once writes already begun end. */
  async halt(): Promise<void> {
    this.halted = true
    await Promise.allSettled([...this.inFlight])
  }
}

/** A record as loadAll takes it: the counts the send does arithmetic with are whole numbers (a chunk size above 0). */
function isJournalRecord(v: unknown): v is JournalRecord {
  if (typeof v !== 'object' || v === null) return false
  const r = v as Partial<JournalRecord>
  return r.version === 1 && typeof r.entryKey === 'string' && (stateCount(r.chunkSize) ?? 0) > 0 &&
    Array.isArray(r.files) && r.files.every((f) => typeof f === 'object' && f !== null && stateCount(f.size) !== null) &&
    (r.confirmed === undefined || (typeof r.confirmed === 'object' && r.confirmed !== null &&
      Object.values(r.confirmed).every((list) => Array.isArray(list) && list.every((i) => stateCount(i) !== null))))
}
