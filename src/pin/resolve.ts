// The files a pin's scope covers now, asked of the metadata store (which asks the service
// only for what it does not know): every transfer of the inbox or of a search's results, or
// one transfer, or a folder or file inside it. A transfer that is locked, closed or gone
// covers nothing now (what it covered before stays pinned: pin-store.ts).
import type { TransferEntry } from '../vfs/folder-listing.js'
import { filesOfTree, type Covered, type PinScope } from '../vfs/pinning.js'
import type { MetadataStore } from '../vfs/metadata.js'
import type { TreeDir, TreeNode } from '../vfs/transfer-tree.js'

export async function coveredBy(store: MetadataStore, scope: PinScope): Promise<Covered> {
  const covered: Covered = { files: [], transfers: [] }
  if (scope.kind === 'transfer') await addTransfer(store, { ref: scope.ref, place: scope.place, summary: null }, scope.below, covered)
  else {
    // A search is asked again: its cached result would not hold what has just arrived.
    const listing = scope.kind === 'inbox' ? await store.inbox() : await store.searchAgain(scope.words)
    for (const name of listing.names) await addTransfer(store, listing.byName.get(name)!, [], covered)
  }
  return covered
}

async function addTransfer(store: MetadataStore, entry: TransferEntry, below: readonly string[], out: Covered): Promise<void> {
  const contents = await store.contents(entry)
  if (contents.state !== 'open') return
  let node: TreeNode | undefined = contents.tree
  for (const name of below) node = node?.kind === 'dir' ? node.entries.get(name) : undefined
  if (!node) return
  if (node.kind === 'file') out.files.push(node.remote)
  else filesOfTree(node as TreeDir, out.files)
  out.transfers.push(contents.transfer)
}
