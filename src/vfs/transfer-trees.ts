// Each transfer's tree (transfer-tree.ts), built once per list of files. Details come back
// as a new object at every refresh (each listing TTL, each inbox page), most often listing
// the very same files: those keep the tree they had, so a transfer of many files costs its
// build once, not at every refresh. The tree is built on the thread that answers every
// FUSE operation; a transfer whose tree is unusually large or slow to build is named in
// the log, once.
import { hash } from 'node:crypto'
import type { Transfer } from '../api/types.js'
import { plainText } from '../base/shown-text.js'
import type { Logger } from '../base/log.js'
import { buildTransferTree, type TreeDir } from './transfer-tree.js'

/** Files from which a transfer's tree is worth a line in the log. */
export const LARGE_TREE_FILES = 5000
/** Milliseconds of building from which a transfer's tree is worth a line in the log. */
export const SLOW_TREE_MS = 200

/**
 * What a tree is built from: the transfer's id and every field of every file, in order.
 * Equal fingerprints give equal trees, file records (what `.transfer.json`, thumbnails and
 * reads use) included, so the one built before serves as it is.
 */
export function filesFingerprint(transfer: Transfer): string {
  return hash('sha256', `${transfer.id}\0${JSON.stringify(transfer.files ?? [])}`, 'hex')
}

export class TransferTrees {
  private readonly byDetails = new WeakMap<Transfer, TreeDir>()
  private readonly lastById = new Map<string, { fingerprint: string; tree: TreeDir }>()
  private readonly told = new Set<string>()

  constructor(private readonly log: Logger, private readonly now: () => number = () => performance.now()) {}

  /** The tree of these details: the one they were given, the one the same files had, or a new one. */
  of(transfer: Transfer): TreeDir {
    let tree = this.byDetails.get(transfer)
    if (tree) return tree
    const fingerprint = filesFingerprint(transfer)
    const last = this.lastById.get(transfer.id)
    tree = last?.fingerprint === fingerprint ? last.tree : this.build(transfer)
    this.lastById.set(transfer.id, { fingerprint, tree })
    this.byDetails.set(transfer, tree)
    return tree
  }

  private build(transfer: Transfer): TreeDir {
    const started = this.now()
    const tree = buildTransferTree(transfer)
    const ms = this.now() - started
    const files = transfer.files?.length ?? 0
    if ((files > LARGE_TREE_FILES || ms > SLOW_TREE_MS) && !this.told.has(transfer.id)) {
      this.told.add(transfer.id)
      this.log.warn(`transfer ${plainText(transfer.id)} holds ${files} files; its folder tree took ${Math.round(ms)} ms to build`)
    }
    return tree
  }
}
