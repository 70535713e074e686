// `by-id/<id or trackid>`: any transfer the account may see, opened by its identifier. The
// folder lists nothing: there is no listing of every transfer to give. Only the owner looks
// transfers up here (its mode, 0544): each look-up is a call with the account's session.
import { TransferArea, type TransferView } from './transfers.js'

export function byIdArea(view: TransferView): TransferArea {
  const { store } = view
  return new TransferArea(view, {
    path: 'by-id',
    ownerLookups: true,
    names: async () => [],
    find: async (name, probe) => (probe ? store.peekById(name) : await store.byId(name)) ?? undefined,
  })
}
