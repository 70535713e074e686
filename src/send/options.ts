// Settings of the send path, each with its default and unit in one place. Those a user
// sets are rows of src/config's settings table that feed 'send' (src/cli builds them from
// it); the rest are tuning knobs with safe defaults.
import { UPLOAD_CHUNK_BYTES } from '../api/protocol.js'
import { VERSION } from '../version.js'

const MiB = 1024 * 1024

export interface SendOptions {
  /** ms: an entry is sent once nothing inside it is open and nothing changed for this long. */
  settleMs: number
  /**
   * bytes: chunk size of uploads. Fixed per file for the life of a send (the journal keeps
   * it), because confirmed chunk indices only mean something for one chunk size.
   */
  uploadChunkSize: number
  /**
   * Each file of an entry goes up as soon as it is closed, while the rest is still being
   * copied; the transfer is completed only once the entry has settled. Off: nothing goes
   * up before the entry settles (no bytes spent on a file that then changes).
   */
  uploadWhileCopying: boolean
  /** count: entries uploading at once (the Sender bounds chunks in flight globally). */
  maxConcurrentSends: number
  /** ms: first wait after a network error or overload; doubles on each failure. */
  retryBaseDelayMs: number
  /** ms: longest wait between two tries; a send is retried forever, never dropped. */
  retryMaxDelayMs: number
  /** bytes: writes are refused with ENOSPC when they would leave less free space than this. */
  minFreeBytes: number
  /** ms: free space is asked of the OS at most this often (writes in between are subtracted). */
  freeSpaceCheckMs: number
  /** ms: chmod/chown changes are written to disk at most this often (they are not data). */
  attrSaveDelayMs: number
  /** count: finished sends kept in the status after they leave the outbox. */
  statusHistory: number
  /** Message of sent transfers; null = none. */
  message: string | null
  /** days until a sent transfer expires; -1 = permanent; null = the account's default. */
  days: number | null
  /** null = the account's default. */
  notify: boolean | null
  /** null = the account's default. */
  confirmation: boolean | null
  /** Password protecting sent transfers; null = none. Secret: never in status or logs. */
  password: string | null
  /**
   * Contact group names that make a top-level folder a recipient folder (case-insensitive),
   * besides e-mail addresses. The mount fills it from the account's contact groups.
   */
  recipientGroups: string[]
  /** Version written into `sourcedetails` ("transferfs/<version>"). */
  version: string
}

export const DEFAULT_SEND_OPTIONS: Readonly<SendOptions> = Object.freeze({
  settleMs: 3000,
  uploadChunkSize: UPLOAD_CHUNK_BYTES,
  uploadWhileCopying: true,
  maxConcurrentSends: 2,
  retryBaseDelayMs: 1000,
  retryMaxDelayMs: 5 * 60_000,
  minFreeBytes: 64 * MiB,
  freeSpaceCheckMs: 1000,
  attrSaveDelayMs: 1000,
  statusHistory: 20,
  message: null,
  days: null,
  notify: null,
  confirmation: null,
  password: null,
  recipientGroups: [],
  version: VERSION,
})

/** The settings a user may change while mounted (then `retryFailed` sends refused entries again). */
export type SendSettings = Pick<SendOptions, 'message' | 'days' | 'notify' | 'confirmation' | 'password' | 'recipientGroups'>

export function resolveSendOptions(partial: Partial<SendOptions> = {}): SendOptions {
  const o: SendOptions = { ...DEFAULT_SEND_OPTIONS, ...partial, recipientGroups: [...(partial.recipientGroups ?? DEFAULT_SEND_OPTIONS.recipientGroups)] }
  for (const k of ['uploadChunkSize', 'maxConcurrentSends'] as const) {
    if (!Number.isInteger(o[k]) || o[k] <= 0) throw new RangeError(`send option ${k} must be a positive integer`)
  }
  for (const k of ['settleMs', 'retryBaseDelayMs', 'retryMaxDelayMs', 'minFreeBytes', 'freeSpaceCheckMs', 'attrSaveDelayMs', 'statusHistory'] as const) {
    if (!Number.isFinite(o[k]) || o[k] < 0) throw new RangeError(`send option ${k} must be a non-negative number`)
  }
  return o
}
