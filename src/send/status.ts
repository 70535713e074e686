// What is being sent, how far, and what failed: a snapshot for `.status` (text) and
// `transferfs status` (JSON). Never holds a secret (no keys, no password).
import { formatBytes } from '../base/format-bytes.js'
import { plainText } from '../base/shown-text.js'
import type { KeepStatus } from '../keep/status.js'
import type { Entry, FinishedSend } from './entry.js'

export type SendState = 'queued' | 'settling' | 'waiting' | 'sending' | 'done' | 'failed'

export interface SendStatusEntry {
  /** The entry's path in outbox/ ("holiday.jpg", "alice@example.com/report.pdf"). */
  name: string
  state: SendState
  /** Why it is in that state when it is not obvious (open, temporary name, retrying, ...). */
  note: string | null
  bytesSent: number
  bytesTotal: number
  /** bytes per second over the last seconds; null before there is a measure. */
  rate: number | null
  /** seconds; null when unknown. */
  eta: number | null
  lastError: string | null
  transferid: string | null
  url: string | null
}

/** How the mount's talk with the service goes: reads retrying, or the service unreachable. */
export interface ServiceHealth {
  /** `retrying`: some reads meet faults and retry; `offline`: the service cannot be reached at all. */
  state: 'online' | 'retrying' | 'offline'
  /** unix ms: since when, null when online. */
  since: number | null
  /** The last fault, without secrets; null when online. */
  reason: string | null
  /** Reads retrying now. */
  retryingReads: number
}

export interface SendStatus {
  /** unix ms */
  at: number
  entries: SendStatusEntry[]
  /** Absent where nothing reads (a status written by the sender alone). */
  service?: ServiceHealth
  /** Absent where nothing is pinned and no keeper runs. */
  keep?: KeepStatus
}

/** The mount's one line about the service, or null when all is well. */
export function serviceLine(h: ServiceHealth | undefined): string | null {
  if (!h || h.state === 'online') return null
  const since = h.since === null ? '' : ` since ${new Date(h.since).toLocaleTimeString()}`
  if (h.state === 'offline') return `service: unreachable${since} (${h.reason}); cached files stay readable, other reads fail until it is back`
  return `service: retrying ${h.retryingReads} read${h.retryingReads === 1 ? '' : 's'}${since} (${h.reason})`
}

function rateOf(e: Entry): number | null {
  const first = e.samples[0]
  const last = e.samples[e.samples.length - 1]
  if (!first || !last || last[0] <= first[0]) return null
  return ((last[1] - first[1]) * 1000) / (last[0] - first[0])
}

export function buildStatus(now: number, entries: Iterable<Entry>, finished: readonly FinishedSend[]): SendStatus {
  const out: SendStatusEntry[] = []
  for (const e of entries) {
    const rate = e.phase === 'sending' ? rateOf(e) : null
    const left = e.totalBytes - e.sentBytes
    out.push({
      name: e.key.slice(1),
      state: e.phase,
      note: e.note,
      bytesSent: e.sentBytes,
      bytesTotal: e.totalBytes,
      rate,
      eta: rate && rate > 0 ? Math.ceil(left / rate) : null,
      lastError: e.lastError,
      transferid: e.journal?.transfer?.transferid ?? null,
      url: null,
    })
  }
  out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const f of finished) {
    out.push({
      name: f.name, state: 'done', note: f.note, bytesSent: f.totalBytes, bytesTotal: f.totalBytes, rate: null, eta: 0,
      lastError: null, transferid: f.transferid, url: f.url,
    })
  }
  return { at: now, entries: out }
}

function formatDuration(s: number): string {
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
}

/**
 * The text of `.status` and of `transferfs status`: one block per entry, plain enough to
 * grep. Names, notes and the service's errors are each line's plain text (base/shown-text.ts),
 * so a name with a newline in it is still one line.
 */
export function renderStatusText(status: SendStatus): string {
  const count = (s: SendState): number => status.entries.filter((e) => e.state === s).length
  const service = serviceLine(status.service)
  const lines = service ? [service] : []
  lines.push(
    `outbox: ${count('sending')} sending, ${count('queued')} queued, ${count('settling') + count('waiting')} settling, ` +
      `${count('failed')} failed, ${count('done')} done`,
  )
  for (const e of status.entries) {
    let line = `${e.state.padEnd(8)} ${e.name}`
    if (e.state === 'sending' || e.state === 'queued') {
      line += `  ${formatBytes(e.bytesSent)} / ${formatBytes(e.bytesTotal)}`
      if (e.rate !== null) line += `  ${formatBytes(Math.round(e.rate))}/s`
      if (e.eta !== null) line += `  ETA ${formatDuration(e.eta)}`
    }
    if (e.state === 'done') line += `  ${formatBytes(e.bytesTotal)}  transfer ${e.transferid}${e.url ? `  ${e.url}` : ''}`
    lines.push(line)
    if (e.note) lines.push(`         ${e.note}`)
    if (e.lastError) lines.push(`         error: ${e.lastError}`)
  }
  if (status.keep) lines.push(...keepLines(status.keep))
  return lines.map(plainText).join('\n') + '\n'
}

/** The kept-offline block of `.status`: the cache's use, then one line per pin. */
function keepLines(keep: KeepStatus): string[] {
  const { keptBytes, otherBytes, budgetBytes } = keep.cache
  const lines = [`kept offline: ${keep.entries.length} pin${keep.entries.length === 1 ? '' : 's'}; cache: ${formatBytes(keptBytes)} pinned, ${formatBytes(otherBytes)} other, budget ${formatBytes(budgetBytes)}`]
  for (const n of keep.notices ?? []) lines.push(`pins: ${n}`)
  for (const e of keep.entries) {
    let line = `${e.state.padEnd(8)} ${e.name}  ${formatBytes(e.bytesCached)} / ${formatBytes(e.bytesTotal)}, ${e.files} file${e.files === 1 ? '' : 's'}`
    if (e.rate !== null) line += `  ${formatBytes(Math.round(e.rate))}/s`
    if (e.eta !== null) line += `  ETA ${formatDuration(e.eta)}`
    lines.push(line)
    if (e.note) lines.push(`         ${e.note}`)
  }
  return lines
}

export function renderStatusJson(status: SendStatus): string {
  return JSON.stringify(status, null, 2) + '\n'
}
