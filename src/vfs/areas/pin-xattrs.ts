// The pin and state attributes of a transfer area's nodes (pinning.ts): answered from the
// pinner when one is wired in; without one the tree has neither and stays read-only.
import { FsError } from '../core.js'
import { PIN_XATTR, pinWanted, STATE_XATTR, WHAT_PINS, type Pinning, type PinTarget } from '../pinning.js'
import type { Shown } from '../shown-xattr.js'

/** A node's pin attributes, where `pinning` is the mount's pinner (null: none wired in) and `target` what the node is to it (null: nothing to pin). */
export class PinXattrs {
  constructor(
    private readonly pinning: Pinning | null,
    private readonly target: PinTarget | null,
  ) {}

  /** The value, or undefined when the name is none of ours. */
  async get(name: string): Promise<Buffer | undefined> {
    const { pinning, target } = this
    if (!pinning || !target) return undefined
    if (name === STATE_XATTR) return Buffer.from(await pinning.stateOf(target), 'utf8')
    if (name === PIN_XATTR) {
      if (!pinning.isPinned(target.scope)) throw new FsError('ENODATA')
      return Buffer.from('1', 'utf8')
    }
    return undefined
  }

  /** The state and whether the node is pinned itself, as user.transferfs.shown tells them. */
  async shown(): Promise<Omit<Shown, 'page'>> {
    const { pinning, target } = this
    if (!pinning || !target) return { pinned: false }
    return { state: await pinning.stateOf(target), pinned: pinning.isPinned(target.scope) }
  }

  names(): string[] {
    const { pinning, target } = this
    if (!pinning || !target) return []
    return pinning.isPinned(target.scope) ? [PIN_XATTR, STATE_XATTR] : [STATE_XATTR]
  }

  async set(name: string, value: Buffer): Promise<void> {
    const { pinning, target } = this.ours(name)
    if (pinWanted(value)) await pinning.pin(target)
    else await pinning.unpin(target)
  }

  async remove(name: string): Promise<void> {
    const { pinning, target } = this.ours(name)
    if (!pinning.isPinned(target.scope)) throw new FsError('ENODATA')
    await pinning.unpin(target)
  }

  /** Only the pin can be changed; anything else stays read-only, as without a pinner. */
  private ours(name: string): { pinning: Pinning; target: PinTarget } {
    const { pinning, target } = this
    if (!pinning || name !== PIN_XATTR) throw new FsError(pinning && name === STATE_XATTR ? 'EPERM' : 'EROFS', name === STATE_XATTR ? `${STATE_XATTR} is read-only: set ${PIN_XATTR} to pin` : undefined)
    if (!target) throw new FsError('EINVAL', `this cannot be pinned: ${WHAT_PINS}`)
    return { pinning, target }
  }
}
