// The steps of sending one transfer that the outbox's pipeline and `transferfs send`
// share: the files going up several at once, and what the sent log records once
// Complete answered. The pipeline journals around them; the command shows progress.
import PQueue from 'p-queue'
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
}

/**
 * Uploads `files` into transfer `t`, several files at once (the sender bounds the chunks
 * in flight across them), so that many small files do not each wait a round trip. The
 * first file that fails for good stops the others: the transfer cannot be completed.
 * `onChunk` hears of each chunk the service confirms, by the file's index in `files`.
 */
export async function uploadFiles(
  sender: Sender, t: InitializeAnswer, files: readonly FileUpload[], chunkSize: number, signal: AbortSignal,
  onChunk: (file: number, chunk: number) => void,
): Promise<void> {
  await allOrFirstFailure(new PQueue({ concurrency: PARALLEL_FILE_UPLOADS }), files.map((f, i) => (fileSignal: AbortSignal) =>
    sender.uploadFile({
      transferurl: t.transferurl, transferid: t.transferid, transferkey: t.transferkey,
      fileName: f.name, filePath: f.filePath, size: f.size, chunkSize, confirmed: f.confirmed, signal: fileSignal,
      onChunkConfirmed: (chunk) => onChunk(i, chunk),
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
