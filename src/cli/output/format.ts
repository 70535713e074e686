// How times and speeds read in tables: dates in the local time zone (JSON output keeps the
// service's unix milliseconds), speeds per second in the units sizes take (base/format-bytes.ts).
import { formatBytes } from '../../base/format-bytes.js'
import { UsageError } from './exit-codes.js'

/** "2026-01-31 14:05" in the local time zone; "-" for no date. */
export function formatDate(ms: number | null | undefined): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) return '-'
  const d = new Date(ms)
  const two = (x: number) => String(x).padStart(2, '0')
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`
}

/** The service's kBps (kilobytes per second) as a speed a person reads. */
export function formatSpeed(kBps: number | null | undefined): string {
  if (typeof kBps !== 'number' || !Number.isFinite(kBps) || kBps < 0) return '-'
  return `${formatBytes(kBps * 1000)}/s`
}

const DURATION_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 }

/**
 * A point in time from the command line: an ISO date or date-time ("2026-01-31",
 * "2026-01-31T08:00"), or an age ("7d", "12h", "30m", "2w") meaning that long ago.
 * A bare date is midnight in the local time zone.
 */
export function parseSince(text: string, now: number = Date.now()): number {
  const t = text.trim()
  const age = /^(\d+)\s*([mhdw])$/i.exec(t)
  if (age) return now - Number(age[1]) * DURATION_MS[age[2]!.toLowerCase()]!
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(t)
  if (day) {
    const d = new Date(Number(day[1]), Number(day[2]) - 1, Number(day[3]))
    if (!Number.isNaN(d.getTime()) && d.getDate() === Number(day[3])) return d.getTime()
  } else if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(t)) {
    const ms = Date.parse(t.replace(' ', 'T'))
    if (!Number.isNaN(ms)) return ms
  }
  throw new UsageError(`--since ${JSON.stringify(text)} is neither a date (2026-01-31, 2026-01-31T08:00) nor an age (7d, 12h, 30m, 2w)`)
}
