// Pinning transfers on this machine, as the tree sees it: which node a pin names
// (its scope), the files a node covers as known now, and the two extended attributes that
// carry it, so that scripts and file managers need no command: `user.transferfs.pin` (set to
// pin, removed to unpin) and `user.transferfs.state` (what the cache holds of the node). The
// pins themselves, their fetching and their budget are the pinner's (src/pin), wired in as
// the Pinning port.
import type { Transfer } from '../api/types.js'
import type { RemoteFile } from '../read/source.js'
import { FsError } from './core.js'
import type { Place, TransferRef } from './folder-listing.js'
import type { TreeDir } from './transfer-tree.js'

export const PIN_XATTR = 'user.transferfs.pin'
export const STATE_XATTR = 'user.transferfs.state'
/** What the user may pin, said when they try something else. */
export const WHAT_PINS = 'pin a file, a folder of a transfer, a transfer, inbox/ or a search folder'

/**
 * What a pin covers, by identity rather than by the name the mount shows (names can change
 * when another transfer of the same subject arrives): the whole inbox, a search's results,
 * or a transfer (from `inbox/`, `sent/` or `by-id/`) or a folder or file inside it, named by
 * the path below the transfer's folder.
 */
export type PinScope =
  | { kind: 'inbox' }
  | { kind: 'search'; words: string }
  | { kind: 'transfer'; place: Place; ref: TransferRef; below: string[] }

/** What a node covers: its files, and the transfers they belong to (saved with a pin, to show them offline). */
export interface Covered {
  files: RemoteFile[]
  transfers: Transfer[]
}

/**
 * The transfers pinned on this machine, as the metadata store asks: an expired one that is
 * pinned stays listed and readable; while the service cannot be reached, the pinned ones are
 * listed and opened from what was saved with their pins.
 */
export interface PinnedTransfers {
  has(transferid: string): boolean
  /** The pinned transfers a folder shows: received ones in inbox/, sent ones in sent/. */
  listed(place: 'inbox' | 'sent'): Transfer[]
  details(transferid: string): Transfer | undefined
}

export const NONE_PINNED: PinnedTransfers = { has: () => false, listed: () => [], details: () => undefined }

/** A node the user may pin: its scope, where it is on the mount, and the files known below it now. */
export interface PinTarget {
  scope: PinScope
  /** Its path on the mount, from the mount's root ("inbox/Photos from Ann"): how status names it. */
  label: string
  /**
   * The files below it and the transfers they are of: a transfer's are asked of the service
   * when not known yet; a listing's are those of the transfers opened so far.
   */
  covered(): Promise<Covered>
  /**
   * The files below it known now, without asking the service (what the state attribute sums
   * up): null for a transfer whose files are not known yet (not opened in this mount).
   */
  known(): Promise<Covered | null>
}

export interface Pinning {
  /** Pinned itself (not merely covered by a pin of a folder above it). */
  isPinned(scope: PinScope): boolean
  /** Covered by any pin: the node or a folder above it is pinned. */
  isCovered(file: RemoteFile): boolean
  /** `user.transferfs.state` of the node. */
  stateOf(target: PinTarget): Promise<string>
  /** Pins the node; throws FsError('ENOSPC') with how much room is missing when it cannot fit. */
  pin(target: PinTarget): Promise<void>
  unpin(target: PinTarget): Promise<void>
}

/** Every file of a transfer's tree, or of a folder in it. */
export function filesOfTree(dir: TreeDir, out: RemoteFile[] = []): RemoteFile[] {
  for (const child of dir.entries.values()) {
    if (child.kind === 'dir') filesOfTree(child, out)
    else out.push(child.remote)
  }
  return out
}

/** Same identity: the same pin. */
export function sameScope(a: PinScope, b: PinScope): boolean {
  if (a.kind !== b.kind) return false
  if (a.kind === 'search') return a.words === (b as { words: string }).words
  if (a.kind === 'transfer') {
    const t = b as typeof a
    return a.ref.key === t.ref.key && a.below.length === t.below.length && a.below.every((n, i) => n === t.below[i])
  }
  return true
}

/**
 * The value of `user.transferfs.pin` set on a node: "1" (or "yes", "true", "on", or nothing)
 * pins, "0" ("no", "false", "off") unpins, as removing the attribute does. Anything else is
 * a mistake, answered EINVAL rather than guessed at.
 */
export function pinWanted(value: Buffer): boolean {
  const v = value.toString('utf8').trim().toLowerCase()
  if (v === '' || v === '1' || v === 'yes' || v === 'true' || v === 'on') return true
  if (v === '0' || v === 'no' || v === 'false' || v === 'off') return false
  throw new FsError('EINVAL', `${PIN_XATTR} takes 1 (pin) or 0 (unpin), not "${value.toString('utf8').slice(0, 40)}"`)
}
