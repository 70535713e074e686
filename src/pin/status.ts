// What the pinner tells of the pins it keeps, for `.status` and `transferfs status`: the
// pinner's own answer, which the mount's status (status/mount-status.ts) carries beside the sends.
/** One pin, fetched or being fetched onto this machine. */
export interface PinStatusEntry {
  /** Its path on the mount when pinned ("inbox/Photos from Ann"). */
  name: string
  /** `fetching` now, `waiting` for its turn, `pinned` (all on disk), `failed` (a definitive answer), `no room` for what arrived in it. */
  state: 'fetching' | 'waiting' | 'pinned' | 'failed' | 'no room'
  files: number
  bytesCached: number
  bytesTotal: number
  /** bytes per second over the last seconds; null before there is a measure. */
  rate: number | null
  /** seconds; null when unknown. */
  eta: number | null
  note: string | null
}

/** What is pinned on this machine, and the disk cache's use. */
export interface PinStatus {
  entries: PinStatusEntry[]
  /** Bytes set aside for pinned files (their whole size), other cached bytes, and the budget (diskCacheBytes). */
  cache: { pinnedBytes: number; otherBytes: number; budgetBytes: number }
  /** What went wrong with the saved pins themselves (a damaged pins file set aside); absent when nothing did. */
  notices?: string[]
}
