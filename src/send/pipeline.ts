// One send of a settled entry: fix the content (its files and sizes; their MD5s are worked
// out meanwhile), then the transfer's steps (transfer-steps.ts: initialize, upload the
// chunks not yet confirmed, Complete, forward to groups), each journaled before the next
// depends on it. A journaled transfer is resumed while the content is the same or has
// only gained files; otherwise it is dropped (never completed by us) and a new one
// initialized, unless it turns out to be sent already, when that send stands.
import path from 'node:path'
import type { Entry } from './entry.js'
import { abandonTransfer, newJournalRecord, type JournalFile, type JournalRecord } from './journal.js'
import { isTemporaryName } from './names.js'
import type { InitializeAnswer } from './ports.js'
import { chunkCount } from '../api/chunk-plan.js'
import { spanLength } from '../base/chunk-grid.js'
import { confirmedBytes, initializeRequest, isRefusal, journalFits, splitRecipients } from './rules.js'
import { sendTransfer, uploadFiles, type FileUpload, type SendStep } from './transfer-steps.js'
import type { SendHost } from './host.js'
import { holdsJournaled, sameFiles, takeSnapshot } from './snapshot.js'
import { entryReaders } from './sent-access.js'

/** bytes: entries up to this size are hashed before their upload starts (~0.1 s here). */
const HASH_FIRST_BYTES = 64 * 1024 * 1024

export async function runSend(host: SendHost, e: Entry, gen: number, signal: AbortSignal): Promise<void> {
  const stale = (): boolean => host.halted || e.gen !== gen
  const known = await host.takeOverEarly(e)
  if (stale()) return
  const info = host.d.tree.describe(e.key)
  const snap = info ? await takeSnapshot(info.realPath, info.subject, signal, known) : { kind: 'missing' as const }
  if (stale()) return
  if (!info || snap.kind === 'missing') {
    // Gone (deleted, renamed, or no longer an entry): nothing to send under this name.
    return host.forgetGone(e, signal)
  }
  const wait = (note: string): void => {
    e.phase = 'waiting'
    e.note = note
  }
  if (snap.kind === 'symlink') return wait('a symbolic link is not sent')
  const writeFailure = host.d.writeFailure(e.key)
  if (writeFailure !== null) {
    e.phase = 'failed'
    e.lastError = writeFailure
    e.note = 'not sent: copy it again in full, or remove it'
    return
  }
  if (host.interrupted.has(e.key)) {
    return wait('was being written when transferfs stopped and may be incomplete: copy it again, or rename it to send it as it is')
  }
  if (isTemporaryName(info.subject)) return wait('temporary name: sent once renamed')
  if (snap.files.length === 0) return wait('empty: nothing to send yet')

  const o = host.d.options
  let j = e.journal
  // A journaled send goes on only for the same content, MD5s included: files only added
  // since (early uploads journal each file as it goes up) join its transfer, but a file
  // that may be partly uploaded must be unchanged. (One journaled before its MD5 was
  // known never matches: a new transfer is sent instead.) A small entry is hashed before
  // its first byte goes, which costs it little and journals its MD5s with the transfer;
  // a big one is hashed while it goes up.
  if (j || snap.files.reduce((n, f) => n + f.size, 0) <= HASH_FIRST_BYTES) await snap.hashed
  if (stale()) return
  if (j && !(journalFits(j, info, o) && sameFiles(j.files, snap.files))) {
    // The content changed since this send was journaled. Whether it may join the transfer
    // depends on whether that is sent already, which a crash while Complete was asked leaves open.
    await learnIfSent(host, j, signal)
    if (stale()) return
  }
  if (j && !(journalFits(j, info, o) && (j.completed ? sameFiles(j.files, snap.files) : holdsJournaled(snap.files, j.files)))) {
    if (j.completed) {
      // Complete answered for older content: that send stands, its groups told too; the
      // new content is a new send.
      const groups = groupsDue(host, j)
      if (groups.length > 0 && j.transfer) {
        await host.d.sender.forward(j.transfer.transferid, groups)
        if (!(await noteForwarded(host, j))) return
      }
      await host.recordSent(j)
      await host.d.journal.retire(j)
      j = null
    } else {
      abandonTransfer(j)
      Object.assign(j, { subject: info.subject, recipients: info.recipients, chunkSize: o.uploadChunkSize, files: snap.files })
    }
  }
  if (j && !j.completed) j.files = snap.files
  if (!j) j = newJournalRecord({ entryKey: e.key, subject: info.subject, recipients: info.recipients, chunkSize: o.uploadChunkSize, files: snap.files })
  // A completed send's files are fixed: its readers were taken with them.
  if (!j.completed || !j.readers) j.readers = entryReaders(e.key, j.files, host.d.permOf)
  e.journal = j
  const rec = j
  e.totalBytes = rec.files.reduce((s, f) => s + f.size, 0)
  e.sentBytes = confirmedBytes(rec)
  e.samples = [[host.d.clock.now(), e.sentBytes]]
  if (stale()) return

  const send: JournaledSend = { host, e, rec, realPath: info.realPath, subject: info.subject, stale }
  const notes: Record<SendStep, string> = {
    initializing: 'initializing', uploading: 'uploading', completing: 'completing', forwarding: 'forwarding to contact groups',
  }
  const ran = await sendTransfer({
    sender: host.d.sender, signal, chunkSize: rec.chunkSize, initialized: rec.transfer, completedBefore: rec.completed,
    initialize: () => initializeJournaled(send, signal),
    // Files go up several at once (the sender bounds the chunks in flight across them), so
    // a folder of small files does not wait a round trip and a journal write per file.
    uploads: (t) => journaledUploads(send, t, pendingFiles(rec)),
    groups: groupsDue(host, rec),
  }, {
    step: (step) => {
      e.note = notes[step]
    },
    uploaded: async () => {
      if (stale()) return false
      // The MD5s the sent transfer is recorded with, of the bytes just uploaded (any change
      // meanwhile made this send stale). Complete is journaled as asked before it goes: a
      // crash before its answer is journaled leaves the transfer possibly sent (learnIfSent).
      await snap.hashed
      rec.completing = true
      await host.d.journal.save(rec)
      return !stale()
    },
    completed: async (_t, sent) => {
      if (host.halted) return false
      // From here the transfer exists as sent, whatever happens to the entry meanwhile.
      rec.completed = true
      rec.url = sent.url ?? null
      await host.d.journal.save(rec)
      return !host.halted
    },
    forwarded: () => noteForwarded(host, rec),
  })
  if (ran) await host.finish(e, gen, rec)
}

/** Contact groups among the recipients not yet told of the transfer (only forward resolves group names). */
function groupsDue(host: SendHost, rec: JournalRecord): string[] {
  return host.d.tree.existing || rec.groupsForwarded ? [] : splitRecipients(rec.recipients).groups
}

/**
 * The groups were forwarded to. Journaled after the call: a crash in between forwards
 * again (the group gets the e-mail twice), which beats a group that never hears of it.
 */
async function noteForwarded(host: SendHost, rec: JournalRecord): Promise<boolean> {
  if (host.halted) return false
  rec.groupsForwarded = true
  await host.d.journal.save(rec)
  return !host.halted
}

/**
 * A journaled send whose Complete was asked, and whose answer a crash kept from the
 * journal, may be sent already: the service says. Sent: the journal is completed, that
 * send stands. Still started: it takes files again. Cancelled, deleted, or refused (say
 * the password changed since): it is dropped, never completed by us. Transfers added to
 * (sent already) are not asked about: their Complete only says files were added.
 */
export async function learnIfSent(host: SendHost, j: JournalRecord, signal: AbortSignal): Promise<void> {
  if (!j.completing || j.completed || !j.transfer || host.d.tree.existing) return
  try {
    const t = await host.d.sender.transferStatus(j.transfer.transferid, host.d.options.password, signal)
    if (t.status === 'STATUS_COMPLETE') Object.assign(j, { completed: true, url: t.url ?? null })
    else if (t.status !== 'STATUS_STARTED') abandonTransfer(j)
  } catch (err) {
    if (!isRefusal(err)) throw err
    abandonTransfer(j)
  }
  j.completing = false
  await host.d.journal.save(j)
}

/** One entry's send as its steps see it (the pipeline's at the settle, or an early upload's). */
interface JournaledSend {
  host: SendHost
  e: Entry
  rec: JournalRecord
  /** Where the entry's files are, and its name (a folder added to a sent transfer keeps it as the files' path). */
  realPath: string
  subject: string
  /** The send no longer counts: halted, the entry changed, or early uploads ended. */
  stale: () => boolean
}

/** The journaled files with chunks the service has not confirmed yet. */
function pendingFiles(rec: JournalRecord): JournalFile[] {
  return rec.files.filter((f) => new Set(rec.confirmed[f.name] ?? []).size < chunkCount(f.size, rec.chunkSize))
}

/**
 * Initializes the journaled send's transfer, journaling the ask before it goes (a crash
 * in between may leave an orphan transfer, which the journal then owns up to). Null when
 * the send went stale meanwhile; a transfer that came back for a stale send is recorded
 * as abandoned. `size`: what initialize is told, when the journal does not list every file yet.
 */
export async function initializeJournaled(s: Pick<JournaledSend, 'host' | 'rec' | 'stale'>, signal: AbortSignal, size?: number): Promise<InitializeAnswer | null> {
  const { host, rec, stale } = s
  rec.initializing = true
  await host.d.journal.save(rec)
  if (stale()) return null
  const answer = await host.d.sender.initialize(initializeRequest(rec, host.d.options, host.d.tree.existing, size), signal)
  if (host.halted) return null
  rec.initializing = false
  if (stale()) {
    rec.abandoned.push(answer.transferid)
    await host.d.journal.save(rec)
    return null
  }
  rec.transfer = answer
  await host.d.journal.save(rec)
  return stale() ? null : answer
}

/** Uploads `files` of the entry to transfer `t`, journaling each chunk the service confirms. */
export function uploadJournaled(s: JournaledSend, t: InitializeAnswer, files: readonly JournalFile[], signal: AbortSignal): Promise<void> {
  return uploadFiles(s.host.d.sender, t, journaledUploads(s, t, files), s.rec.chunkSize, signal)
}

/**
 * `files` as uploads into `t`, each chunk the service confirms journaled, unless the send
 * went stale or its journal moved to another transfer meanwhile.
 */
function journaledUploads(s: JournaledSend, t: InitializeAnswer, files: readonly JournalFile[]): FileUpload[] {
  const { host, e, rec } = s
  return files.map((f) => ({
    // Added to an existing transfer, a folder keeps its name as the files' path in it.
    name: host.d.tree.existing && f.rel ? `${s.subject}/${f.name}` : f.name,
    filePath: f.rel ? path.join(s.realPath, f.rel) : s.realPath, size: f.size, confirmed: new Set(rec.confirmed[f.name] ?? []),
    onChunkConfirmed: (index) => {
      if (s.stale() || rec.transfer !== t) return
      const list = (rec.confirmed[f.name] ??= [])
      if (list.includes(index)) return
      list.push(index)
      e.sentBytes += spanLength(index, f.size, rec.chunkSize)
      sample(e, host.d.clock.now())
      host.track(host.d.journal.save(rec))
    },
  }))
}

function sample(e: Entry, now: number): void {
  e.samples.push([now, e.sentBytes])
  while (e.samples.length > 2 && (e.samples[0] as [number, number])[0] < now - 20_000) e.samples.shift()
}
