// `.status`: what the mount is doing (sends, the service's reachability). With sending
// wired in, it is a symbolic link to the status text the mount keeps on disk: a regular
// file here would be read through the kernel's 30 s attribute cache, cut to an old size.
// Otherwise it is a file whose text is made when it is opened.
import { constants as C } from 'node:fs'
import type { StatusSource } from '../catalog.js'
import { FsError, type NodeAttr, type OpenFlags } from '../core.js'
import { memoryNode, O_ACCMODE, type Area, type Names, type OpenNode } from './area.js'
import type { TransferView } from './transfers.js'

export const STATUS_FILE = '.status'

/** `.status` is a file: nothing is below it. */
function itself(names: Names): void {
  if (names.length > 0) throw new FsError('ENOTDIR')
}

export class StatusArea implements Area {
  constructor(
    private readonly view: TransferView,
    private readonly status: StatusSource,
    /** Absolute path the link points to; null: the status text is served here. */
    private readonly link: string | null,
    private readonly now: () => number,
  ) {}

  async getattr(names: Names): Promise<NodeAttr> {
    itself(names)
    if (this.link !== null) return this.view.attr(C.S_IFLNK | 0o777, Buffer.byteLength(this.link), null)
    const now = new Date(this.now())
    return { ...this.view.attr(C.S_IFREG | 0o444, Buffer.byteLength(this.status.text(), 'utf8'), null), mtime: now, atime: now, ctime: now }
  }

  async readdir(names: Names): Promise<string[]> {
    itself(names)
    throw new FsError('ENOTDIR')
  }

  async open(names: Names, flags: OpenFlags): Promise<OpenNode> {
    itself(names)
    if ((flags & O_ACCMODE) !== C.O_RDONLY || (flags & C.O_TRUNC) !== 0) throw new FsError('EROFS')
    return memoryNode(Buffer.from(this.status.text(), 'utf8'))
  }

  async readlink(names: Names): Promise<string> {
    if (names.length > 0 || this.link === null) throw new FsError('EINVAL')
    return this.link
  }

  async truncate(names: Names): Promise<void> {
    itself(names)
    throw new FsError('EROFS')
  }
}
