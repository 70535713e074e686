// `.status`: what the mount is doing (sends, the service's reachability). Its text is made
// at each read, so the file is live: opened direct_io, every read reaches us, and its size
// shows as 0, as files in /proc do. A size would be held for 30 s in the kernel's attribute
// cache, and a reader that trusts it (Node's readFile) would cut a text that grew since.
// It names every entry being sent and every link made, private ones included, so it is the
// owner's alone (0400): with allowOther, other users cannot read it. (Filtering it per reader
// would need the caller's uid, which the FUSE binding does not pass to us.)
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
    private readonly now: () => number,
  ) {}

  async getattr(names: Names): Promise<NodeAttr> {
    itself(names)
    const now = new Date(this.now())
    return { ...this.view.attr(C.S_IFREG | 0o400, 0, null), mtime: now, atime: now, ctime: now }
  }

  async readdir(names: Names): Promise<string[]> {
    itself(names)
    throw new FsError('ENOTDIR')
  }

  async open(names: Names, flags: OpenFlags): Promise<OpenNode> {
    itself(names)
    if ((flags & O_ACCMODE) !== C.O_RDONLY || (flags & C.O_TRUNC) !== 0) throw new FsError('EROFS')
    // The text as it is at open, kept for this handle: a reader going through it in pieces sees one state.
    return { ...memoryNode(Buffer.from(this.status.text(), 'utf8')), live: true }
  }

  async truncate(names: Names): Promise<void> {
    itself(names)
    throw new FsError('EROFS')
  }
}
