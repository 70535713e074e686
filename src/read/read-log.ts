// What the read path tells of reads in trouble: one line when a fetch starts retrying and
// one when it ends (not one per try), and the state of those retrying for `.status`.
import type { Logger } from '../base/log.js'
import type { Fetch, FetchEvents } from './fetcher.js'

/** Reads that are retrying now, for `.status` and `transferfs status`. */
export interface ReadHealth {
  /** Fetches retrying now. */
  retrying: number
  /** ms since the epoch: since when the oldest of them retries; null when none does. */
  since: number | null
  /** The last reason of the oldest of them. */
  reason: string | null
}

/** Retrying is worth one line when it starts and one when it ends, not one per try. */
export function troubleLog(log: Logger, deadlineMs: number): FetchEvents {
  const what = (f: Fetch) => `reading ${f.file.fileName} (transfer ${f.file.transferId})`
  return {
    retrying: (f, e) => log.info(`${what(f)}: ${reasonOf(e)}; retrying for up to ${Math.round(deadlineMs / 1000)} s`),
    recovered: (f, tries, ms) => log.info(`${what(f)}: recovered after ${tries} failed tries in ${(ms / 1000).toFixed(1)} s`),
    failed: (f, e) => log.warn(`${what(f)}: gave up: ${reasonOf(e)}`),
  }
}

/** A failure as one short line (messages carry no query strings, so no tokens). */
export function reasonOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e)
}
