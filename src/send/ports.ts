// What the send core needs from the outside, as ports the mount adapts: the service
// (Sender) and the list the vfs reads for sent/ (SentLog). Time is the ground floor's Clock.
import type { InitializeRequest, InitializeResult, Transfer } from '../api/types.js'

export type InitializeAnswer = Pick<InitializeResult, 'transferid' | 'transferkey' | 'transferurl'>

export interface UploadFileRequest {
  transferurl: string
  transferid: string
  transferkey: string
  /** The file's name in the transfer ("report.pdf", "data/raw.csv"). */
  fileName: string
  /** The staged bytes on local disk. */
  filePath: string
  size: number
  /** Every chunk but the last is exactly this long; the last is the rest (1 chunk for 0 bytes). */
  chunkSize: number
  /** Chunk indices the service already holds from an earlier try: do not send them again. */
  confirmed: ReadonlySet<number>
  /** Called once the service acknowledged a chunk (the core journals it). */
  onChunkConfirmed(index: number): void
  /** Aborted when the entry changed or the core stops; the upload should end soon after. */
  signal: AbortSignal
}

/**
 * The Transfer Service as the send core uses it. The adapter over src/api does the
 * chunked upload: an MD5 per chunk, retries of 406/449 and network errors, and at most
 * 4 chunks in flight across the whole mount (a shared queue, since several entries may
 * upload at once). Errors: ServiceError / NetworkError from src/api/errors.ts.
 */
export interface Sender {
  initialize(req: InitializeRequest, signal: AbortSignal): Promise<InitializeAnswer>
  uploadFile(req: UploadFileRequest): Promise<void>
  /** Safe to repeat: completing a complete transfer answers 200 again and sends nothing. */
  complete(transferid: string, transferkey: string): Promise<Transfer>
  /** The service's status of a transfer initialized here (STATUS_COMPLETE: it is sent), and its link. */
  transferStatus(transferid: string, password: string | null, signal: AbortSignal): Promise<Pick<Transfer, 'status' | 'url'>>
  /** Adds recipients (addresses or contact group names) to a complete transfer; each gets an e-mail. */
  forward(transferid: string, to: string[]): Promise<void>
}

/** One transfer sent from this machine, as the vfs lists it under sent/. */
export interface SentRecord {
  transferid: string
  subject: string
  recipients: string[]
  files: Array<{ name: string; size: number; md5: string }>
  /** unix ms, this machine's clock. */
  sentAt: number
  url: string | null
  /**
   * Upload address and key, so files copied into its `sent/` folder can be added later.
   * Secret (the sent log is private to the user, like the journal); absent in old records.
   */
  transferurl?: string
  transferkey?: string
  /** Which of group and other could read each file in the outbox (sent-access.ts); absent in old records. */
  readers?: Record<string, number>
}

export interface SentLog {
  has(transferid: string): Promise<boolean>
  /** Durable when it resolves. */
  record(entry: SentRecord): Promise<void>
  list(): Promise<SentRecord[]>
}
