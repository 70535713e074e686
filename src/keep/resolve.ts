// The files a pin's scope covers now, asked of the metadata store (which asks the service
// only for what it does not know): every transfer of the inbox or of a search's results, or
// one transfer, or a folder or file inside it. A transfer that is locked, closed or gone
// covers nothing now (what it covered before stays kept: pin-store.ts).
import type { RemoteFile } from '../read/source.js'
import type { TransferEntry } from '../vfs/folder-listing.js'
import { filesOfTree, type PinScope } from '../vfs/keeping.js'
import type { MetadataStore } from '../vfs/metadata.js'
import type { TreeDir, TreeNode } from '../vfs/transfer-tree.js'

export async function filesOfScope(store: MetadataStore, scope: PinScope): Promise<RemoteFile[]> {
  if (scope.kind === 'transfer') return filesOfTransfer(store, { ref: scope.ref, place: scope.place, summary: null }, scope.below)
  const listing = scope.kind === 'inbox' ? await store.inbox() : await store.search(scope.words)
  const files: RemoteFile[] = []
  for (const name of listing.names) files.push(...(await filesOfTransfer(store, listing.byName.get(name)!, [])))
  return files
}

async function filesOfTransfer(store: MetadataStore, entry: TransferEntry, below: readonly string[]): Promise<RemoteFile[]> {
  const contents = await store.contents(entry)
  if (contents.state !== 'open') return []
  let node: TreeNode | undefined = contents.tree
  for (const name of below) node = node?.kind === 'dir' ? node.entries.get(name) : undefined
  if (!node) return []
  return node.kind === 'file' ? [node.remote] : filesOfTree(node as TreeDir)
}
