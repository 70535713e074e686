// `by-id/<id or trackid>`: any transfer the account may see, opened by its identifier. The
// folder lists nothing: there is no listing of every transfer to give.
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
