// `sent/` as the service shows it: the transfers sent from this account, newest first.
// With sending wired in, additions.ts lays the files being added over it.
import { TransferArea, type TransferView } from './transfers.js'

export function sentArea(view: TransferView): TransferArea {
  const { store } = view
  return new TransferArea(view, {
    path: 'sent',
    names: async () => (await store.sent()).names,
    find: async (name, probe) => (probe ? store.peekSent() : await store.sent())?.byName.get(name),
  })
}
