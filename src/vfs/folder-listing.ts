// A folder of transfers as the tree lists it (inbox/, sent/): each transfer under a
// stable, unique folder name, found by that name, by its id or by its trackid.
import type { Transfer } from '../api/types.js'
import { disambiguate, transferFolderName } from './names.js'

export type Place = 'inbox' | 'sent' | 'by-id'

/** How a transfer's details are fetched: by its id or by a recipient's trackid. */
export interface TransferRef {
  key: string
  via: 'id' | 'trackid'
  token: string
}

/** A transfer folder of the tree. `summary` is what a listing said (null when unknown). */
export interface TransferEntry {
  ref: TransferRef
  place: Place
  summary: Transfer | null
}

export interface FolderListing {
  /** Display order: newest first. */
  names: string[]
  byName: Map<string, TransferEntry>
  /** Entries by transfer id and by trackid, for by-id look-ups without a call. */
  byIdentifier: Map<string, TransferEntry>
}

function bySentDate(a: { sentdate: number; id: string }, b: { sentdate: number; id: string }): number {
  if (a.sentdate !== b.sentdate) return a.sentdate - b.sentdate
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

export function buildListing(place: Place, items: Array<{ ref: TransferRef; summary: Transfer | null }>): FolderListing {
  const seen = new Set<string>()
  const unique = items.filter((item) => !seen.has(item.ref.key) && seen.add(item.ref.key))
  // Names are given oldest first, so a new arrival never renames an older folder.
  const ordered = unique
    .map((item) => ({ ...item, sentdate: item.summary?.sentdate ?? 0, id: item.ref.token }))
    .sort(bySentDate)
  const names = disambiguate(
    ordered.map((item) =>
      item.summary
        ? transferFolderName(item.summary.sentdate, item.summary.subject, item.summary.id)
        : transferFolderName(null, '(password protected)', item.ref.token),
    ),
  )
  const byName = new Map<string, TransferEntry>()
  const byIdentifier = new Map<string, TransferEntry>()
  ordered.forEach((item, i) => {
    const entry: TransferEntry = { ref: item.ref, place, summary: item.summary }
    byName.set(names[i]!, entry)
    byIdentifier.set(item.ref.token, entry)
    if (item.summary?.trackid) byIdentifier.set(item.summary.trackid, entry)
  })
  return { names: names.slice().reverse(), byName, byIdentifier }
}
