// The words of `user.transferfs.state`, in one place: what the cache holds of a received file
// or folder (and whether it is pinned), how far a send is, and a folder's summing up of its
// children. Pure: every answer is worked out from what the caller already knows in memory,
// so reading a state never fetches content nor calls the service.

/**
 * What the attribute says of a file or folder the service has, from what the cache holds of
 * its files and whether it is pinned; `failed`: why fetching some of its files stopped (it is
 * tried again when pinned again or at the next mount). `pinnedFiles`, for a folder not pinned
 * as a whole: how many of its `files` some pin covers, said as "3 of 5 files pinned".
 */
export function stateText(pinned: boolean, cachedBytes: number, sizeBytes: number, failed: string | null = null, some?: { pinnedFiles: number; files: number }): string {
  const percent = sizeBytes > 0 ? Math.floor((100 * cachedBytes) / sizeBytes) : 100
  const complete = cachedBytes >= sizeBytes
  if (pinned && !complete && failed !== null) return `pinned, failed: ${failed}`
  if (pinned) return complete ? 'pinned' : `pinned, fetching ${percent}%`
  if (some && some.pinnedFiles > 0) return `${some.pinnedFiles} of ${some.files} files pinned`
  if (complete && sizeBytes > 0) return 'cached'
  return cachedBytes > 0 ? `partial ${percent}%` : 'online'
}

/** A send as the state words need it: a subset of the status's entry (status/mount-status.ts). */
export interface SendProgress {
  /** The entry's path below its staging root ("holiday.jpg", "alice@example.com/report.pdf"). */
  name: string
  state: 'settling' | 'waiting' | 'queued' | 'sending' | 'done' | 'failed'
  bytesSent: number
  bytesTotal: number
  lastError: string | null
}

/** Words at most of a failure's reason: the attribute is a state, the status has the whole text. */
const REASON_WORDS = 6
const REASON_CHARS = 60

/**
 * A failure's reason in a few words: the service's own words when it gave some ("Refused:
 * the address is not valid" gives "the address is not valid"), cut at a few words.
 */
export function shortReason(lastError: string | null): string {
  if (!lastError) return 'refused by the service'
  const colon = lastError.indexOf(': ')
  const words = (colon >= 0 && colon < lastError.length - 2 ? lastError.slice(colon + 2) : lastError).replace(/\s+/g, ' ').trim()
  const cut = words.split(' ').slice(0, REASON_WORDS).join(' ')
  const short = cut.length > REASON_CHARS ? cut.slice(0, REASON_CHARS - 1) + '…' : cut
  return short.length < words.length && !short.endsWith('…') ? short + '…' : short
}

const percentOf = (sent: number, total: number): number => (total > 0 ? Math.min(100, Math.floor((100 * sent) / total)) : 0)

/** One send's state: `waiting` (settling, queued, or retrying after a network fault), `sending N%`, `sent`, `failed: reason`. */
export function sendStateText(s: SendProgress): string {
  switch (s.state) {
    case 'sending': return `sending ${percentOf(s.bytesSent, s.bytesTotal)}%`
    case 'done': return 'sent'
    case 'failed': return `failed: ${shortReason(s.lastError)}`
    default: return 'waiting'
  }
}

/**
 * A folder's state from the sends below it: the one state when they share it (`waiting`,
 * `sent`), else each kind counted: "2 of 4 sent, 1 sending 40%, 1 failed", where the
 * percentage is over the bytes of the sends under way, and `already` sent files (a sent
 * transfer's, as sent/ shows it) count as sent. An empty folder: `empty`.
 */
export function sendSummaryText(sends: readonly SendProgress[], already = 0): string {
  const total = sends.length + already
  if (total === 0) return 'empty'
  const sending = sends.filter((s) => s.state === 'sending')
  const failed = sends.filter((s) => s.state === 'failed')
  const sent = already + sends.filter((s) => s.state === 'done').length
  const waiting = total - sent - sending.length - failed.length
  if (total === 1 && sends[0]) return sendStateText(sends[0])
  if (sent === total) return 'sent'
  if (waiting === total) return 'waiting'
  if (failed.length === total && failed.every((f) => f.lastError === failed[0]?.lastError)) return sendStateText(failed[0]!)
  const parts: string[] = []
  if (sent > 0) parts.push(`${sent} of ${total} sent`)
  if (sending.length > 0) {
    const pct = percentOf(sending.reduce((n, s) => n + s.bytesSent, 0), sending.reduce((n, s) => n + s.bytesTotal, 0))
    parts.push(`${sending.length} sending ${pct}%`)
  }
  if (waiting > 0) parts.push(`${waiting} waiting`)
  if (failed.length > 0) parts.push(`${failed.length} failed`)
  return parts.join(', ')
}
