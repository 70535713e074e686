// Which transfers of an inbox listing are new: each transfer is told once, whichever way
// it was found (the small "newer than" call or a full refresh), and the first listing of
// a mount is the baseline, so what was there before the mount is not news.
import type { Transfer } from '../api/types.js'
import type { FolderListing } from './folder-listing.js'

/** A transfer new in the inbox: its folder's name there. */
export interface Arrival {
  name: string
  transfer: Transfer
}

export class InboxNews {
  private readonly seen = new Set<string>()
  private baselineTaken = false
  /** Told the arrivals of each listing, oldest first. */
  listener: ((arrivals: Arrival[]) => void) | undefined

  /** Takes note of a new inbox listing, telling what no earlier one held. */
  take(listing: FolderListing): void {
    const arrivals: Arrival[] = []
    for (const name of listing.names) {
      const entry = listing.byName.get(name)!
      if (this.seen.has(entry.ref.token)) continue
      this.seen.add(entry.ref.token)
      if (this.baselineTaken && entry.summary) arrivals.push({ name, transfer: entry.summary })
    }
    this.baselineTaken = true
    if (arrivals.length === 0) return
    try {
      this.listener?.(arrivals.reverse())
    } catch {
      // Telling is a nicety; the listing stands.
    }
  }
}
