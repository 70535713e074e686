// Sending one transfer, step by step, as the outbox's pipeline and `transferfs send` both
// do it: initialize, the files going up several at once, Complete, and the forward to
// contact groups; and what the sent log records once Complete answered. The runner keeps
// what it needs of each step in hooks: the pipeline journals, the command shows progress.
import PQueue from 'p-queue'
import type { Transfer } from '../api/types.js'
import { allOrFirstFailure } from '../base/all-or-first-failure.js'
import type { InitializeAnswer, Sender, SentRecord } from './ports.js'
import { PARALLEL_FILE_UPLOADS } from './rules.js'

/** A file going up into a transfer. */
export interface FileUpload {
  /** Its name in the transfer ("a.txt", "photos/b.jpg"). */
  name: string
  filePath: string
  size: number
  /** Chunks the service already holds: not sent again. */
  confirmed: ReadonlySet<number>
  /** The service confirmed chunk `chunk` of this file. */
  onChunkConfirmed(chunk: number): void
}

/**
 * Uploads `files` into transfer `t`, several files at once (the sender bounds the chunks
 * in flight across them), so that many small files do not each wait a round trip. The
 * first file that fails for good stops the others: the transfer cannot be completed.
 */
export async function uploadFiles(sender: Sender, t: InitializeAnswer, files: readonly FileUpload[], chunkSize: number, signal: AbortSignal): Promise<void> {
  await allOrFirstFailure(new PQueue({ concurrency: PARALLEL_FILE_UPLOADS }), files.map((f) => (fileSignal: AbortSignal) =>
    sender.uploadFile({
      transferurl: t.transferurl, transferid: t.transferid, transferkey: t.transferkey,
      fileName: f.name, filePath: f.filePath, size: f.size, chunkSize, confirmed: f.confirmed, signal: fileSignal,
      onChunkConfirmed: (chunk) => f.onChunkConfirmed(chunk),
    })), signal)
}

/** What the sent log records of a transfer whose Complete answered. */
export function sentRecordOf(
  t: InitializeAnswer,
  sent: Pick<SentRecord, 'subject' | 'recipients' | 'files' | 'sentAt' | 'url'>,
): SentRecord {
  return {
    transferid: t.transferid, subject: sent.subject, recipients: sent.recipients,
    files: sent.files.map((f) => ({ name: f.name, size: f.size, md5: f.md5 })), sentAt: sent.sentAt, url: sent.url,
    transferurl: t.transferurl, transferkey: t.transferkey,
  }
}

/** One transfer to send: where it stands, and what is left. */
export interface TransferSend {
  sender: Sender
  signal: AbortSignal
  chunkSize: number
  /** The transfer an earlier run initialized, else null: initialize() makes it. */
  transfer: InitializeAnswer | null
  /** Initializes the transfer; null when the send no longer counts. */
  initialize(): Promise<InitializeAnswer | null>
  /** The files (their chunks not yet confirmed) still to go up into `t`, asked once it exists. */
  uploads(t: InitializeAnswer): FileUpload[]
  /** Complete answered in an earlier run: only the forward may be left. */
  completed: boolean
  /** Contact groups to forward the transfer to once complete: only forward resolves group names. */
  groups: readonly string[]
}

export type SendStep = 'initializing' | 'uploading' | 'completing' | 'forwarding'

/** What the runner keeps of each step; a false answer means the send no longer counts, and it stops there. */
export interface TransferSteps {
  /** A step begins. */
  step?(step: SendStep): void
  uploaded?(): Promise<boolean>
  completed(t: InitializeAnswer, transfer: Transfer): Promise<boolean>
  forwarded?(): Promise<boolean>
}

/**
 * Sends the transfer from where it stands: initialize (unless it exists), upload what is
 * left, Complete (unless it answered before), forward to the groups. True when it ran to
 * the end, false when a hook stopped it.
 */
export async function sendTransfer(s: TransferSend, steps: TransferSteps): Promise<boolean> {
  let t = s.transfer
  if (!s.completed) {
    if (!t) {
      steps.step?.('initializing')
      t = await s.initialize()
      if (!t) return false
    }
    steps.step?.('uploading')
    await uploadFiles(s.sender, t, s.uploads(t), s.chunkSize, s.signal)
    if (steps.uploaded && !(await steps.uploaded())) return false
    steps.step?.('completing')
    const transfer = await s.sender.complete(t.transferid, t.transferkey)
    if (!(await steps.completed(t, transfer))) return false
  }
  if (s.groups.length > 0 && t) {
    steps.step?.('forwarding')
    await s.sender.forward(t.transferid, [...s.groups])
    if (steps.forwarded && !(await steps.forwarded())) return false
  }
  return true
}
