// The pin and state attributes of a transfer area's nodes (keeping.ts): answered from the
// keeper when one is wired in; without one the tree has neither and stays read-only.
import { FsError } from '../core.js'
import { PIN_XATTR, pinWanted, STATE_XATTR, WHAT_PINS, type Keeping, type KeepTarget } from '../keeping.js'

/** A node's pin attributes, where `keeping` is the mount's keeper (null: none wired in) and `target` what the node is to it (null: nothing to pin). */
export class KeepXattrs {
  constructor(
    private readonly keeping: Keeping | null,
    private readonly target: KeepTarget | null,
  ) {}

  /** The value, or undefined when the name is none of ours. */
  async get(name: string): Promise<Buffer | undefined> {
    const { keeping, target } = this
    if (!keeping || !target) return undefined
    if (name === STATE_XATTR) return Buffer.from(await keeping.stateOf(target), 'utf8')
    if (name === PIN_XATTR) {
      if (!keeping.isPinned(target.scope)) throw new FsError('ENODATA')
      return Buffer.from('1', 'utf8')
    }
    return undefined
  }

  names(): string[] {
    const { keeping, target } = this
    if (!keeping || !target) return []
    return keeping.isPinned(target.scope) ? [PIN_XATTR, STATE_XATTR] : [STATE_XATTR]
  }

  async set(name: string, value: Buffer): Promise<void> {
    const { keeping, target } = this.ours(name)
    if (pinWanted(value)) await keeping.pin(target)
    else await keeping.unpin(target)
  }

  async remove(name: string): Promise<void> {
    const { keeping, target } = this.ours(name)
    if (!keeping.isPinned(target.scope)) throw new FsError('ENODATA')
    await keeping.unpin(target)
  }

  /** Only the pin can be changed; anything else stays read-only, as without a keeper. */
  private ours(name: string): { keeping: Keeping; target: KeepTarget } {
    const { keeping, target } = this
    if (!keeping || name !== PIN_XATTR) throw new FsError(keeping && name === STATE_XATTR ? 'EPERM' : 'EROFS', name === STATE_XATTR ? `${STATE_XATTR} is read-only: set ${PIN_XATTR} to pin` : undefined)
    if (!target) throw new FsError('EINVAL', `this cannot be pinned: ${WHAT_PINS}`)
    return { keeping, target }
  }
}
