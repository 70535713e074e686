// `inbox/`: the account's received transfers, newest first. Listing it counts as the user
// looking (new arrivals are then checked for more often), and makes ready what the user
// is likely to open next: the newest transfers' thumbnails and a connection for the
// newest one's first file.
import type { ArrivalWatch } from '../arrivals.js'
import type { TransferView } from './transfers.js'
import { TransferArea } from './transfers.js'

/** Newest transfers whose files a listing of `inbox/` tells about (for their thumbnails). */
const PREVIEW_AHEAD_TRANSFERS = 20

export function inboxArea(view: TransferView, arrivals: ArrivalWatch | undefined): TransferArea {
  const { store } = view
  return new TransferArea(view, {
    path: 'inbox',
    scope: { kind: 'inbox' },
    names: async () => (await store.inbox()).names,
    find: async (name, probe) => (probe ? store.peekInbox() : await store.inbox())?.byName.get(name),
    listed(path) {
      arrivals?.looked()
      const listing = store.peekInbox()
      if (!listing) return
      if (view.tells) {
        view.tell(listing.names.slice(0, PREVIEW_AHEAD_TRANSFERS).flatMap((name) => {
          const tree = view.openTree(listing.byName.get(name)!)
          return tree ? [{ transfer: tree.transfer, dir: tree.tree, at: `${path}/${name}` }] : []
        }))
      }
      const newest = listing.names[0]
      view.prepare(newest === undefined ? null : view.openTree(listing.byName.get(newest)!)?.tree ?? null)
    },
  })
}
