// Sending one transfer, step by step, as the outbox's pipeline and `transferfs send` both
// do it: initialize, the files going up several at once, Complete, and the forward to
// contact groups. The runner keeps what it needs of each step in hooks: the pipeline
// journals, the command shows progress and records the transfer.
import PQueue from 'p-queue'
import type { Transfer } from '../api/types.js'
import { allOrFirstFailure } from '../base/all-or-first-failure.js'
import type { InitializeAnswer, Sender } from './ports.js'
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

/** One transfer to send: where it stands, and what is left. */
export interface TransferSend {
  sender: Sender
  signal: AbortSignal
  chunkSize: number
  /** The transfer an earlier run initialized, else null: initialize() makes it. */
  initialized: InitializeAnswer | null
  /** Initializes the transfer; null when the send no longer counts. */
  initialize(): Promise<InitializeAnswer | null>
  /** The files (their chunks not yet confirmed) still to go up into `t`, asked once it exists. */
  uploads(t: InitializeAnswer): FileUpload[]
  /** Complete answered in an earlier run: only the forward may be left. */
  completedBefore: boolean
  /** Contact groups to forward the transfer to once complete: only forward resolves group names. */
  groups: readonly string[]
}

export type SendStep = 'initializing' | 'uploading' | 'completing' | 'forwarding'

/** What the runner keeps of each step; a false answer means the send no longer counts, and it stops there. */
export interface TransferHooks {
  /** A step begins. */
  step?(step: SendStep): void
  /** Every file is up; Complete comes next. */
  uploaded?(): Promise<boolean>
  /** Complete answered: `sent` is the transfer as the service now has it. */
  completed(t: InitializeAnswer, sent: Transfer): Promise<boolean>
  /** The groups were forwarded to. */
  forwarded?(): Promise<boolean>
}

/**
 * Sends the transfer from where it stands: initialize (unless it exists), upload what is
 * left, Complete (unless it answered before), forward to the groups. True when it ran to
 * the end, false when a hook stopped it.
 */
export async function sendTransfer(s: TransferSend, hooks: TransferHooks): Promise<boolean> {
  let t = s.initialized
  if (!s.completedBefore) {
    if (!t) {
      hooks.step?.('initializing')
      t = await s.initialize()
      if (!t) return false
    }
    hooks.step?.('uploading')
    await uploadFiles(s.sender, t, s.uploads(t), s.chunkSize, s.signal)
    if (hooks.uploaded && !(await hooks.uploaded())) return false
    hooks.step?.('completing')
    const sent = await s.sender.complete(t.transferid, t.transferkey)
    if (!(await hooks.completed(t, sent))) return false
  }
  if (s.groups.length > 0 && t) {
    hooks.step?.('forwarding')
    await s.sender.forward(t.transferid, [...s.groups])
    if (hooks.forwarded && !(await hooks.forwarded())) return false
  }
  return true
}
