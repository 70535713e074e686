// The mount's filesystem core as a router: each path is split once into its top-level
// area (areas/area.ts) and the names below it, and each operation goes to that area.
// The root folder lists the areas. Open files of every area are in one handle table.
// What an area does not do is answered alike everywhere: a change is EROFS (the tree is
// read-only but where an area says otherwise), a readlink EINVAL, a write on a handle
// not open for writing EBADF.
import type { Bytes } from '../read/bytes.js'
import type { LentAhead } from '../read/source.js'
import { splitPath, type Area, type Names, type OpenNode } from './areas/area.js'
import { FsError, type FileSystemCore, type NodeAttr, type OpenFlags, type StatFs } from './core.js'
import { HandleTable } from './handles.js'
import { WHAT_PINS, type PinTarget } from './pinning.js'
import { SHOWN_XATTR, shownOf, shownText } from './shown-xattr.js'

/** Where a path is: the root folder, a name at the top that is no area, or inside an area. */
type Place =
  | { at: 'root' }
  | { at: 'unknown' }
  | { at: 'area'; area: Area; names: Names }

export abstract class AreaRouter implements FileSystemCore {
  private readonly handles = new HandleTable<OpenNode>()
  /** The top-level names, in the order the root lists them. */
  protected areas: ReadonlyMap<string, Area> = new Map()

  /** The root folder's attributes. */
  protected abstract rootAttr(): NodeAttr
  abstract statfs(path: string): Promise<StatFs>

  private place(path: string): Place {
    const names = splitPath(path)
    const top = names[0]
    if (top === undefined) return { at: 'root' }
    const area = this.areas.get(top)
    return area ? { at: 'area', area, names: names.slice(1) } : { at: 'unknown' }
  }

  /** The area that answers a change at `path`: anything else is read-only (or absent). */
  private changing<K extends keyof Area>(path: string, op: K): { area: Area & Required<Pick<Area, K>>; names: Names } {
    const p = this.place(path)
    if (p.at !== 'area' || !p.area[op]) throw new FsError('EROFS')
    return { area: p.area as Area & Required<Pick<Area, K>>, names: p.names }
  }

  // ---- paths ---------------------------------------------------------------------------------

  async getattr(path: string): Promise<NodeAttr> {
    return this.attrAt(this.place(path))
  }

  private async attrAt(p: Place): Promise<NodeAttr> {
    if (p.at === 'root') return this.rootAttr()
    if (p.at === 'unknown') throw new FsError('ENOENT')
    return p.area.getattr(p.names)
  }

  async readdir(path: string): Promise<string[]> {
    const p = this.place(path)
    if (p.at === 'root') return [...this.areas.keys()]
    if (p.at === 'unknown') throw new FsError('ENOENT')
    return p.area.readdir(p.names, path)
  }

  async open(path: string, flags: OpenFlags): Promise<number> {
    const p = this.place(path)
    if (p.at === 'root') throw new FsError('EISDIR')
    if (p.at === 'unknown') throw new FsError('ENOENT')
    return this.handles.add(await p.area.open(p.names, flags))
  }

  isLive(fh: number): boolean {
    try {
      return this.handles.get(fh).live === true
    } catch {
      return false
    }
  }

  async create(path: string, mode: number): Promise<number> {
    const { area, names } = this.changing(path, 'create')
    return this.handles.add(await area.create(names, mode))
  }

  async readlink(path: string): Promise<string> {
    const p = this.place(path)
    if (p.at !== 'area' || !p.area.readlink) throw new FsError('EINVAL')
    return p.area.readlink(p.names)
  }

  async getxattr(path: string, name: string): Promise<Buffer> {
    const p = this.place(path)
    if (name === SHOWN_XATTR) return shownText(p.at === 'area' && p.area.shown ? await p.area.shown(p.names) : await shownOf((part) => this.getxattr(path, part)))
    if (p.at === 'area' && p.area.getxattr) return p.area.getxattr(p.names, name)
    // Only user.* attributes exist here. Any other namespace (security.selinux, ACLs) is
    // "not supported" rather than "absent": ls and file managers remember that per
    // filesystem and stop asking, where "absent" has them ask again for every entry.
    if (!name.startsWith('user.')) throw new FsError('EOPNOTSUPP')
    await this.attrAt(p)
    throw new FsError('ENODATA')
  }

  async listxattr(path: string): Promise<string[]> {
    const p = this.place(path)
    if (p.at === 'area' && p.area.listxattr) return p.area.listxattr(p.names)
    await this.attrAt(p)
    return []
  }

  async setxattr(path: string, name: string, value: Buffer): Promise<void> {
    const { area, names } = this.changing(path, 'setxattr')
    return area.setxattr(names, name, value)
  }

  async removexattr(path: string, name: string): Promise<void> {
    const { area, names } = this.changing(path, 'removexattr')
    return area.removexattr(names, name)
  }

  /** What pinning the node at `path` keeps (pinning.ts); EINVAL naming what can be pinned when it cannot be. */
  async pinTargetAt(path: string): Promise<PinTarget> {
    const p = this.place(path)
    if (p.at === 'unknown') throw new FsError('ENOENT')
    const target = p.at === 'area' && p.area.pinTarget ? await p.area.pinTarget(p.names) : null
    if (!target) {
      if (p.at === 'area') await p.area.getattr(p.names)
      throw new FsError('EINVAL', `${path} cannot be pinned: ${WHAT_PINS}`)
    }
    return target
  }

  async truncate(path: string, size: number): Promise<void> {
    const p = this.place(path)
    if (p.at === 'root') throw new FsError('EISDIR')
    if (p.at === 'unknown') throw new FsError('ENOENT')
    if (!p.area.truncate) throw new FsError('EROFS')
    return p.area.truncate(p.names, size)
  }

  async unlink(path: string): Promise<void> {
    const { area, names } = this.changing(path, 'unlink')
    return area.unlink(names)
  }

  async mkdir(path: string, mode: number): Promise<void> {
    const { area, names } = this.changing(path, 'mkdir')
    return area.mkdir(names, mode)
  }

  async rmdir(path: string): Promise<void> {
    const { area, names } = this.changing(path, 'rmdir')
    return area.rmdir(names)
  }

  async symlink(target: string, path: string): Promise<void> {
    const { area, names } = this.changing(path, 'symlink')
    return area.symlink(target, names)
  }

  async rename(from: string, to: string): Promise<void> {
    const a = this.place(from)
    const b = this.place(to)
    if (a.at === 'area' && b.at === 'area' && a.area === b.area) {
      if (!a.area.rename) throw new FsError('EROFS')
      return a.area.rename(a.names, b.names)
    }
    if ((a.at === 'area' && a.area.movesByCopy) || (b.at === 'area' && b.area.movesByCopy)) throw new FsError('EXDEV')
    throw new FsError('EROFS')
  }

  async chmod(path: string, mode: number): Promise<void> {
    const { area, names } = this.changing(path, 'chmod')
    return area.chmod(names, mode)
  }

  async chown(path: string, uid: number, gid: number): Promise<void> {
    const { area, names } = this.changing(path, 'chown')
    return area.chown(names, uid, gid)
  }

  async utimens(path: string, atime: Date | null, mtime: Date | null): Promise<void> {
    const { area, names } = this.changing(path, 'utimens')
    return area.utimens(names, atime, mtime)
  }

  // ---- open files ------------------------------------------------------------------------------

  read(_path: string, fh: number, position: number, length: number): Bytes | Promise<Bytes> {
    // Bytes may come at once; a failure (an unknown handle) still comes as a rejection.
    try {
      return this.handles.get(fh).read(position, length)
    } catch (err) {
      return Promise.reject(err)
    }
  }

  lendAhead(fh: number, length: number): LentAhead[] | undefined {
    return this.handles.find(fh)?.lendAhead?.(length)
  }

  async write(_path: string, fh: number, data: Buffer, position: number): Promise<number> {
    const node = this.handles.get(fh)
    if (!node.write) throw new FsError('EBADF', 'not open for writing')
    return node.write(data, position)
  }

  async flush(_path: string, fh: number): Promise<void> {
    await this.handles.get(fh).flush?.()
  }

  async fsync(_path: string, fh: number, datasync: boolean): Promise<void> {
    await this.handles.get(fh).fsync?.(datasync)
  }

  async ftruncate(_path: string, fh: number, size: number): Promise<void> {
    const node = this.handles.get(fh)
    if (!node.ftruncate) throw new FsError('EROFS')
    return node.ftruncate(size)
  }

  async release(_path: string, fh: number): Promise<void> {
    return this.handles.remove(fh).release()
  }

  get openHandles(): number {
    return this.handles.size
  }

  /** Lets go of what files still open hold (the kernel will not release them now). */
  async shutdown(): Promise<void> {
    for (const node of this.handles.values()) node.abandon?.()
  }
}
