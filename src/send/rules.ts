// The rules of one send that need no state: which errors are refusals (the one failure
// policy's word), what initialize is asked.
import { ServiceError } from '../api/errors.js'
import { spanLength } from '../base/chunk-grid.js'
import type { InitializeRequest } from '../api/types.js'
import type { JournalRecord } from './journal.js'
import { isEmailAddress } from './names.js'
import type { SendOptions } from './options.js'
import type { EntryInfo } from './tree.js'

/** A refusal: the service said no for a reason a retry cannot change (bad address, too large, ...). */
export { isRefusal } from '../api/failure.js'

export function failureReason(err: unknown): string {
  if (err instanceof ServiceError) {
    const what = err.responsestatus ?? `HTTP ${err.httpStatus}`
    const why = err.errormessage ?? err.message
    return why && why !== what ? `${what}: ${why}` : what
  }
  if (err instanceof Error) return `${err.name}: ${err.message}`
  return String(err)
}

/** Files of one transfer uploaded at once (the service recommends 2 to 4). */
export const PARALLEL_FILE_UPLOADS = 4

/**
 * A recipient list split the way the service takes it: initialize accepts e-mail
 * addresses only; contact group names are resolved by forward alone, so they are
 * forwarded to once the transfer is complete.
 */
export function splitRecipients(recipients: readonly string[]): { addresses: string[]; groups: string[] } {
  return { addresses: recipients.filter(isEmailAddress), groups: recipients.filter((r) => !isEmailAddress(r)) }
}

/** The settings that shape a new transfer (from the settings, or `transferfs send`'s flags). */
export type TransferSettings = Pick<SendOptions, 'message' | 'days' | 'notify' | 'confirmation' | 'password' | 'version'>

/** What initialize is asked for a new transfer; `to` holds e-mail addresses only (see splitRecipients). */
export function newTransferRequest(subject: string, transfersize: number, to: readonly string[], o: TransferSettings): InitializeRequest {
  const req: InitializeRequest = { subject, transfersize, sourcedetails: `transferfs/${o.version}` }
  if (to.length) req.to = [...to]
  if (o.message !== null) req.message = o.message
  if (o.days !== null) req.days = o.days
  if (o.notify !== null) req.notify = o.notify
  if (o.confirmation !== null) req.confirmation = o.confirmation
  if (o.password !== null) req.password = o.password
  return req
}

/**
 * `existing`: the entry adds files to a sent transfer, whose id is its one "recipient".
 * `size`: the transfer's expected size, when the journal does not list all its files yet.
 */
export function initializeRequest(j: JournalRecord, o: TransferSettings, existing = false, size = j.files.reduce((s, f) => s + f.size, 0)): InitializeRequest {
  const to = existing ? j.recipients : splitRecipients(j.recipients).addresses
  return newTransferRequest(j.subject, size, to, o)
}

/** The journaled send is for this entry as it is named and set now (subject, recipients, chunk size). */
export function journalFits(j: JournalRecord, info: Pick<EntryInfo, 'subject' | 'recipients'>, o: Pick<SendOptions, 'uploadChunkSize'>): boolean {
  return j.subject === info.subject && j.chunkSize === o.uploadChunkSize && j.recipients.join(',') === info.recipients.join(',')
}

export function confirmedBytes(j: JournalRecord): number {
  let n = 0
  for (const f of j.files) for (const i of new Set(j.confirmed[f.name] ?? [])) n += spanLength(i, f.size, j.chunkSize)
  return n
}
