// The sends section of the mount's status (status/mount-status.ts), built from the engine's
// entries and the sends it finished.
import type { SendStatus, SendStatusEntry } from '../status/mount-status.js'
import type { Entry, FinishedSend } from './entry.js'

function rateOf(e: Entry): number | null {
  const first = e.samples[0]
  const last = e.samples[e.samples.length - 1]
  if (!first || !last || last[0] <= first[0]) return null
  return ((last[1] - first[1]) * 1000) / (last[0] - first[0])
}

export function buildSendStatus(now: number, entries: Iterable<Entry>, finished: readonly FinishedSend[]): SendStatus {
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
