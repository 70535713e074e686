// `outbox/`: files copied here are staged on disk and sent as transfers (src/send's
// OutboxFs does all of it; this maps the mount's names to the staging tree's paths), each
// node's `user.transferfs.state` saying how its send goes.
// A move into or out of it is a copy: the staged bytes live outside the transfer areas.
import { constants as C } from 'node:fs'
import type { NodeAttr, OpenFlags } from '../core.js'
import { FsError } from '../core.js'
import type { Area, Names, OpenNode } from './area.js'
import { stagedNode, stagedState, type StagingTree } from './staging.js'
import { STATE_XATTR } from '../pinning.js'

const staged = (names: Names): string => '/' + names.join('/')

export class OutboxArea implements Area {
  readonly movesByCopy = true

  constructor(private readonly tree: StagingTree) {}

  getattr(names: Names): Promise<NodeAttr> { return this.tree.getattr(staged(names)) }
  readdir(names: Names): Promise<string[]> { return this.tree.readdir(staged(names)) }
  readlink(names: Names): Promise<string> { return this.tree.readlink(staged(names)) }

  async open(names: Names, flags: OpenFlags): Promise<OpenNode> {
    const p = staged(names)
    return stagedNode(this.tree, p, await this.tree.open(p, flags))
  }

  async create(names: Names, mode: number): Promise<OpenNode> {
    const p = staged(names)
    return stagedNode(this.tree, p, await this.tree.create(p, mode))
  }

  // Extended attributes are not stored: only the send's state is answered, and setting one
  // is "not supported", so cp -a and mv fall back to chmod (storing system.posix_acl_* would
  // have cp -a set modes through the ACL instead).
  async getxattr(names: Names, name: string): Promise<Buffer> {
    if (name !== STATE_XATTR) throw new FsError('ENODATA')
    const attr = await this.tree.getattr(staged(names))
    return Buffer.from(stagedState(this.tree, staged(names), (attr.mode & C.S_IFMT) === C.S_IFDIR), 'utf8')
  }

  async listxattr(names: Names): Promise<string[]> {
    await this.tree.getattr(staged(names))
    return [STATE_XATTR]
  }
  async setxattr(): Promise<void> { throw new FsError('EOPNOTSUPP') }
  async removexattr(): Promise<void> { throw new FsError('EOPNOTSUPP') }

  truncate(names: Names, size: number): Promise<void> { return this.tree.truncate(staged(names), size) }
  unlink(names: Names): Promise<void> { return this.tree.unlink(staged(names)) }
  mkdir(names: Names, mode: number): Promise<void> { return this.tree.mkdir(staged(names), mode) }
  rmdir(names: Names): Promise<void> { return this.tree.rmdir(staged(names)) }
  rename(from: Names, to: Names): Promise<void> { return this.tree.rename(staged(from), staged(to)) }
  symlink(target: string, names: Names): Promise<void> { return this.tree.symlink(target, staged(names)) }
  chmod(names: Names, mode: number): Promise<void> { return this.tree.chmod(staged(names), mode) }
  chown(names: Names, uid: number, gid: number): Promise<void> { return this.tree.chown(staged(names), uid, gid) }
  utimens(names: Names, atime: Date | null, mtime: Date | null): Promise<void> { return this.tree.utimens(staged(names), atime, mtime) }
}
