// `search/<words>`: looking up any name here runs the service's inbox search for its words
// (`search/invoice acme`, typed in a shell or a file manager's location bar). The result is
// a folder of the transfers found, named and read as under `inbox/`: the same details and
// read cache, so nothing is fetched twice. Nothing found is an empty folder. `search/`
// lists the searches made during this mount, newest first. The names file managers probe
// for search nothing (as everywhere, they are looked up only in what is known). Only the
// owner searches: other users may list `search/` but look nothing up in it (its mode, 0544).
import { FsError, type NodeAttr, type OpenFlags } from '../core.js'
import { byteLength, NAME_MAX_BYTES } from '../names.js'
import { isProbeName } from '../probe-names.js'
import type { PinTarget } from '../pinning.js'
import type { Shown } from '../shown-xattr.js'
import type { Area, Names, OpenNode } from './area.js'
import { TransferArea, type TransferView } from './transfers.js'

export class SearchArea implements Area {
  /** `search/` itself, a folder of the searches made (each name below it is routed here, not looked up in it). */
  private readonly top: TransferArea

  constructor(private readonly view: TransferView) {
    this.top = new TransferArea(view, { path: 'search', ownerLookups: true, names: async () => view.store.searchNames(), find: async () => undefined })
  }

  async getattr(names: Names): Promise<NodeAttr> {
    const [area, below] = await this.at(names)
    return area.getattr(below)
  }

  async readdir(names: Names, path: string): Promise<string[]> {
    const [area, below] = await this.at(names)
    return area.readdir(below, path)
  }

  async open(names: Names, flags: OpenFlags): Promise<OpenNode> {
    const [area, below] = await this.at(names)
    return area.open(below, flags)
  }

  /** A found transfer's `.password` is truncated before it is written, as under inbox/. */
  async truncate(names: Names, size: number): Promise<void> {
    const [area, below] = await this.at(names)
    return area.truncate(below, size)
  }

  async getxattr(names: Names, name: string): Promise<Buffer> {
    const [area, below] = await this.at(names)
    return area.getxattr(below, name)
  }

  async shown(names: Names): Promise<Shown> {
    const [area, below] = await this.at(names)
    return area.shown(below)
  }

  async listxattr(names: Names): Promise<string[]> {
    const [area, below] = await this.at(names)
    return area.listxattr(below)
  }

  async setxattr(names: Names, name: string, value: Buffer): Promise<void> {
    const [area, below] = await this.at(names)
    return area.setxattr(below, name, value)
  }

  async removexattr(names: Names, name: string): Promise<void> {
    const [area, below] = await this.at(names)
    return area.removexattr(below, name)
  }

  /** What pinning the node at `names` keeps (pinning.ts), or null when it cannot be pinned. */
  async pinTarget(names: Names): Promise<PinTarget | null> {
    const [area, below] = await this.at(names)
    return area.pinTarget(below)
  }

  /** The area that answers for `names`, and the names below it. */
  private async at(names: Names): Promise<[TransferArea, Names]> {
    const [words, ...below] = names
    return words === undefined ? [this.top, names] : [await this.results(words), below]
  }

  /** The found transfers as a transfer area: searched now, unless cached or a probe name. */
  private async results(words: string): Promise<TransferArea> {
    // The kernel refuses longer names itself; a caller without one gets the same answer.
    if (byteLength(words) > NAME_MAX_BYTES) throw new FsError('ENAMETOOLONG')
    const { store } = this.view
    const found = isProbeName(words) ? store.peekSearch(words) : await store.search(words)
    if (!found) throw new FsError('ENOENT')
    return new TransferArea(this.view, {
      path: `search/${words}`,
      scope: { kind: 'search', words },
      names: async () => (await store.search(words)).names,
      find: async (name, probe) => (probe ? store.peekSearch(words) : await store.search(words))?.byName.get(name),
    })
  }
}
