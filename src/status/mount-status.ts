// The mount's status: a snapshot for `.status` (text) and `transferfs status` (JSON, through
// status.json), with a section for each part of the mount: the sends (filled by send/status.ts),
// the pins and the cache's use (pin/status.ts, the pinner's own answer), and the service's
// health (cli/compose.ts). This module is the snapshot's shape and its renderings; it sits
// below send/, which fills and writes it, and above pin/, whose section it carries. Never
// holds a secret (no keys, no password).
import { formatBytes } from '../base/format-bytes.js'
import { plainText } from '../base/shown-text.js'
import type { PinStatus } from '../pin/status.js'

export type SendState = 'queued' | 'settling' | 'waiting' | 'sending' | 'done' | 'failed'

/** One entry of the sends section. */
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

/** The service section: how the mount's talk with the service goes (reads retrying, or the service unreachable). */
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

/** What is being sent, how far, and what failed, at one moment: the sends section alone (one outbox's answer). */
export interface SendStatus {
  /** unix ms */
  at: number
  /** The sends; the JSON key stays `entries`, which scripts reading status.json know. */
  entries: SendStatusEntry[]
}

/** The whole mount's status: the sends, then the service and the pins where the mount has them. */
export interface MountStatus extends SendStatus {
  /** Absent where nothing reads (a status written by the sender alone). */
  service?: ServiceHealth
  /** Absent where nothing is pinned and no pinner runs. Earlier versions wrote it as `keep` (status-file.ts reads that too). */
  pins?: PinStatus
}

/** The mount's one line about the service, or null when all is well. */
export function serviceLine(h: ServiceHealth | undefined): string | null {
  if (!h || h.state === 'online') return null
  const since = h.since === null ? '' : ` since ${new Date(h.since).toLocaleTimeString()}`
  if (h.state === 'offline') return `service: unreachable${since} (${h.reason}); cached files stay readable, other reads fail until it is back`
  return `service: retrying ${h.retryingReads} read${h.retryingReads === 1 ? '' : 's'}${since} (${h.reason})`
}

function formatDuration(s: number): string {
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
}

/**
 * The text of `.status` and of `transferfs status`: the service's line, then one block per
 * send, then the pins; plain enough to grep. Names, notes and the service's errors are each
 * line's plain text (base/shown-text.ts), so a name with a newline in it is still one line.
 */
export function renderStatusText(status: MountStatus): string {
  const service = serviceLine(status.service)
  const lines = service ? [service] : []
  lines.push(...sendLines(status.entries))
  if (status.pins) lines.push(...pinLines(status.pins))
  return lines.map(plainText).join('\n') + '\n'
}

/** The sends block: the outbox's counts, then each send with its progress, note and error. */
function sendLines(entries: readonly SendStatusEntry[]): string[] {
  const count = (s: SendState): number => entries.filter((e) => e.state === s).length
  const lines = [
    `outbox: ${count('sending')} sending, ${count('queued')} queued, ${count('settling') + count('waiting')} settling, ` +
      `${count('failed')} failed, ${count('done')} done`,
  ]
  for (const e of entries) {
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
  return lines
}

/** The pins' block: the cache's use, then one line per pin. */
function pinLines(pins: PinStatus): string[] {
  const { pinnedBytes, otherBytes, budgetBytes } = pins.cache
  const lines = [`kept offline: ${pins.entries.length} pin${pins.entries.length === 1 ? '' : 's'}; cache: ${formatBytes(pinnedBytes)} pinned, ${formatBytes(otherBytes)} other, budget ${formatBytes(budgetBytes)}`]
  for (const n of pins.notices ?? []) lines.push(`pins: ${n}`)
  for (const e of pins.entries) {
    let line = `${e.state.padEnd(8)} ${e.name}  ${formatBytes(e.bytesCached)} / ${formatBytes(e.bytesTotal)}, ${e.files} file${e.files === 1 ? '' : 's'}`
    if (e.rate !== null) line += `  ${formatBytes(Math.round(e.rate))}/s`
    if (e.eta !== null) line += `  ETA ${formatDuration(e.eta)}`
    lines.push(line)
    if (e.note) lines.push(`         ${e.note}`)
  }
  return lines
}

export function renderStatusJson(status: MountStatus): string {
  return JSON.stringify(status, null, 2) + '\n'
}
