// What the transfer areas (inbox, sent, by-id, each search) share: a folder of transfers, each a
// folder of the transfer's files read on demand, with `.transfer.json`, `link.url` and a
// locked transfer's write-only `.password`. An area differs only in its TransferListing
// (which transfers, under which names). All of it is read-only but `.password`.
import { constants as C } from 'node:fs'
import type { Transfer } from '../../api/types.js'
import type { FileContent } from '../../read/source.js'
import { FsError, type NodeAttr, type OpenFlags } from '../core.js'
import type { TransferEntry } from '../folder-listing.js'
import { filesBelow, firstFileBelow, type FilesListed, type ListedFile } from '../listed.js'
import type { MetadataStore } from '../metadata.js'
import { mimeTypeOf } from '../mime.js'
import { isDirectory, linkFile, transferJson, transferOf, TreeResolver, type Node, type TransferListing } from '../nodes.js'
import type { VfsSettings } from '../settings.js'
import { filesOfTree, type Covered, type Pinning, type PinTarget, type PinScope } from '../pinning.js'
import { PASSWORD_FILE, type TreeDir } from '../transfer-tree.js'
import { ORIGIN_XATTR, type Shown } from '../shown-xattr.js'
import { withoutQuery } from '../shown-urls.js'
import { EVERYONE, folderMode, OWNER_ONLY, readOnlyFileMode } from '../../base/access-bits.js'
import { PinXattrs } from './pin-xattrs.js'
import { memoryNode, O_ACCMODE, spliced, writeOnly, type Area, type Names, type OpenNode } from './area.js'

/** Longest password a `.password` handle takes: anything longer is not a password. */
const MAX_PASSWORD_BYTES = 4096

/** What the transfer areas show alike: owner, times, and what a listing tells and makes ready. */
export class TransferView {
  /** The pinner, once wired in (pinning.ts); null: nothing can be pinned. */
  pinning: Pinning | null = null

  constructor(
    readonly store: MetadataStore,
    readonly content: FileContent,
    private readonly settings: VfsSettings,
    /** The time shown where no transfer gives one. */
    readonly mountedAt: Date,
    private readonly onFilesListed: FilesListed | undefined,
  ) {}

  /** Someone hears of the files a listing leads to (else there is nothing to gather for tell()). */
  get tells(): boolean {
    return this.onFilesListed !== undefined
  }

  /** Attributes of a node dated by `transfer` (the mount's start when unknown). */
  attr(mode: number, size: number, transfer: Transfer | null): NodeAttr {
    const mtime = this.mtimeOf(transfer)
    return { mode, size, nlink: (mode & C.S_IFMT) === C.S_IFDIR ? 2 : 1, mtime, atime: mtime, ctime: mtime, uid: this.settings.uid, gid: this.settings.gid }
  }

  private mtimeOf(transfer: Transfer | null): Date {
    return transfer && transfer.sentdate > 0 ? new Date(transfer.sentdate) : this.mountedAt
  }

  /** The transfer's details and tree, when they are known and open. */
  openTree(entry: TransferEntry): { transfer: Transfer; tree: TreeDir } | null {
    const contents = this.store.peekContents(entry)
    return contents?.state === 'open' ? contents : null
  }

  /**
   * The files a listing is likely to lead to, to the listener: each folder's files at every
   * depth, at their paths on the mount, so that thumbnails are ready when a file manager
   * opens the folder (it looks for them at once, and makes its own by reading the whole
   * file when none is there). A listener's failure is not the readdir's.
   */
  tell(folders: Array<{ transfer: Transfer; dir: TreeDir; at: string }>): void {
    const listener = this.onFilesListed
    if (!listener) return
    const files: ListedFile[] = []
    for (const f of folders) filesBelow(f.dir, f.at, this.mtimeOf(f.transfer).getTime(), files)
    if (files.length === 0) return
    try {
      listener(files)
    } catch {
      // Thumbnails are a nicety; the listing stands.
    }
  }

  /**
   * A listing leads to reads of what it shows: the read path gets ready for the first
   * file (a connection to its file server), so the first read does not wait for that.
   */
  prepare(dir: TreeDir | null): void {
    const file = dir && firstFileBelow(dir)
    if (file) this.content.prepare(file)
  }
}

/** A transfer area: the listing's transfers as folders. */
export class TransferArea implements Area {
  private readonly tree: TreeResolver

  constructor(
    private readonly view: TransferView,
    private readonly listing: TransferListing & {
      /** The area's own folder was listed (at `path`): what the area tells and readies. */
      listed?(path: string): void
      /** The area's path on the mount ("inbox", "search/invoice acme"): how a pin below it is named. */
      path: string
      /** What pinning the area's own folder keeps; absent: it cannot be pinned (sent/, by-id/). */
      scope?: PinScope
      /** A name looked up in the area's own folder may call the service (search/, by-id/): only the owner may. */
      ownerLookups?: boolean
    },
  ) {
    this.tree = new TreeResolver(view.store, listing)
  }

  async getattr(names: Names): Promise<NodeAttr> {
    return this.attrOf(await this.tree.resolve(names))
  }

  async readdir(names: Names, path: string): Promise<string[]> {
    const node = await this.tree.resolve(names)
    if (!isDirectory(node)) throw new FsError('ENOTDIR')
    const listed = await this.tree.list(node)
    const at = path.replace(/\/+$/, '')
    if (node.kind === 'listing') this.listing.listed?.(at)
    else if (node.kind === 'folder') {
      this.view.tell([{ transfer: node.transfer, dir: node.dir, at }])
      this.view.prepare(node.dir)
    } else if (node.kind === 'transfer') {
      const open = this.view.openTree(node.entry)
      if (open) this.view.tell([{ transfer: open.transfer, dir: open.tree, at }])
      this.view.prepare(open?.tree ?? null)
    }
    return listed
  }

  async open(names: Names, flags: OpenFlags): Promise<OpenNode> {
    const node = await this.tree.resolve(names)
    const access = flags & O_ACCMODE
    if (node.kind === 'password') {
      if (access !== C.O_WRONLY) throw new FsError('EACCES', '.password is write-only')
      return this.passwordNode(node.entry)
    }
    if (isDirectory(node)) throw new FsError('EISDIR')
    if (access !== C.O_RDONLY || (flags & C.O_TRUNC) !== 0) throw new FsError('EROFS')
    switch (node.kind) {
      case 'file': {
        const size = node.file.remote.size
        const content = this.view.content.open(node.file.remote)
        return {
          read: (position, length) => (position >= size || length <= 0 ? Buffer.alloc(0) : content.read(position, Math.min(length, size - position))),
          lendAhead: (length) => content.lendAhead?.(length),
          release: async () => content.close(),
          abandon: () => content.close(),
        }
      }
      case 'transfer-json': return memoryNode(transferJson(node.entry, node.contents))
      case 'link': return memoryNode(linkFile(node.transfer))
      default: throw new FsError('EISDIR')
    }
  }

  /**
   * `.password`: each write tries what has been written so far (one trailing newline
   * trimmed) as the password, so a wrong one fails the write itself with EACCES: shells
   * report a failed write, but ignore a failed close.
   */
  private passwordNode(entry: TransferEntry): OpenNode {
    let written: Buffer = Buffer.alloc(0)
    return {
      read: writeOnly(PASSWORD_FILE),
      write: async (data, position) => {
        const next = spliced(written, data, position, MAX_PASSWORD_BYTES)
        const password = next.toString('utf8').replace(/\r?\n$/, '')
        if (password !== '') {
          try {
            await this.view.store.unlock(entry, password)
          } catch (error) {
            written = Buffer.alloc(0)
            throw error
          }
        }
        written = next
        return data.length
      },
      ftruncate: async (size) => {
        written = written.subarray(0, Math.min(size, written.length))
      },
      release: async () => undefined,
    }
  }

  /**
   * The attributes of the node at `names` when a file copied over it may replace it; null
   * for the files the mount makes of the transfer's details (`.transfer.json`, `link.url`,
   * `.password`), which are not the transfer's to replace.
   */
  async replaceableAttr(names: Names): Promise<NodeAttr | null> {
    const node = await this.tree.resolve(names)
    return node.kind === 'transfer-json' || node.kind === 'link' || node.kind === 'password' ? null : this.attrOf(node)
  }

  async truncate(names: Names, _size: number): Promise<void> {
    const node = await this.tree.resolve(names)
    if (node.kind === 'password') return
    throw new FsError(isDirectory(node) ? 'EISDIR' : 'EROFS')
  }

  async getxattr(names: Names, name: string): Promise<Buffer> {
    // Only user.* attributes exist here (the router's rule, checked before the lookup).
    if (!name.startsWith('user.')) throw new FsError('EOPNOTSUPP')
    const node = await this.tree.resolve(names)
    const value = this.xattrsOf(node).get(name)
    if (value !== undefined) return Buffer.from(value, 'utf8')
    const pin = await this.pinXattrs(names, node).get(name)
    if (pin === undefined) throw new FsError('ENODATA')
    return pin
  }

  /** user.transferfs.shown's parts with one lookup of the node (a file manager reads it for each entry it lists). */
  async shown(names: Names): Promise<Shown> {
    const node = await this.tree.resolve(names)
    return { ...(await this.pinXattrs(names, node).shown()), page: pageOf(node) !== undefined }
  }

  async listxattr(names: Names): Promise<string[]> {
    const node = await this.tree.resolve(names)
    return [...this.xattrsOf(node).keys(), ...this.pinXattrs(names, node).names()]
  }

  async setxattr(names: Names, name: string, value: Buffer): Promise<void> {
    return this.pinXattrs(names, await this.tree.resolve(names)).set(name, value)
  }

  async removexattr(names: Names, name: string): Promise<void> {
    return this.pinXattrs(names, await this.tree.resolve(names)).remove(name)
  }

  /** What pinning the node at `names` keeps, or null when it cannot be pinned. */
  async pinTarget(names: Names): Promise<PinTarget | null> {
    return this.targetOf(names, await this.tree.resolve(names))
  }

  private pinXattrs(names: Names, node: Node): PinXattrs {
    return new PinXattrs(this.view.pinning, this.targetOf(names, node))
  }

  private targetOf(names: Names, node: Node): PinTarget | null {
    const label = [this.listing.path, ...names].join('/')
    const { store } = this.view
    switch (node.kind) {
      case 'listing': {
        const { scope } = this.listing
        return scope ? { scope, label, covered: () => this.knownCovered(), known: () => this.knownCovered() } : null
      }
      case 'transfer': {
        const { entry } = node
        return {
          scope: { kind: 'transfer', place: entry.place, ref: entry.ref, below: [] }, label,
          covered: async () => {
            const contents = await store.contents(entry)
            return contents.state === 'open' ? { files: filesOfTree(contents.tree), transfers: [contents.transfer] } : { files: [], transfers: [] }
          },
          known: async () => {
            const contents = store.peekContents(entry)
            if (!contents) return null
            return contents.state === 'open' ? { files: filesOfTree(contents.tree), transfers: [contents.transfer] } : { files: [], transfers: [] }
          },
        }
      }
      case 'folder': case 'file': {
        const { entry } = node
        const covered = { files: node.kind === 'folder' ? filesOfTree(node.dir) : [node.file.remote], transfers: [node.transfer] }
        return { scope: { kind: 'transfer', place: entry.place, ref: entry.ref, below: names.slice(1) }, label, covered: async () => covered, known: async () => covered }
      }
      default: return null
    }
  }

  /** The files of the listing's transfers whose details are known now (no call per transfer). */
  private async knownCovered(): Promise<Covered> {
    const covered: Covered = { files: [], transfers: [] }
    for (const name of await this.listing.names()) {
      const entry = await this.listing.find(name, true)
      const open = entry && this.view.openTree(entry)
      if (!open) continue
      filesOfTree(open.tree, covered.files)
      covered.transfers.push(open.transfer)
    }
    return covered
  }

  private attrOf(node: Node): NodeAttr {
    const transfer = transferOf(node)
    // The kernel lets a user set an attribute (the pin) only where they may write: with a pinner,
    // the folders that can be pinned are the owner's to write, though nothing but the pin is
    // taken there (EROFS). Files are read-only, so that editors open them so.
    const owner = this.view.pinning ? 0o700 : 0o500
    const readers = this.readersOf(node)
    switch (node.kind) {
      case 'listing':
        // Each name looked up here may be a call to the service with the account's session:
        // other users may list what is there, but look up nothing (the kernel refuses them).
        if (this.listing.ownerLookups) return this.view.attr(C.S_IFDIR | 0o544, 0, transfer)
        return this.view.attr(C.S_IFDIR | (this.listing.scope ? folderMode(owner, EVERYONE) : 0o555), 0, transfer)
      case 'transfer': return this.view.attr(C.S_IFDIR | folderMode(node.entry.place === 'sent' ? 0o700 : owner, readers), 0, transfer)
      case 'folder': return this.view.attr(C.S_IFDIR | folderMode(owner, readers), 0, transfer)
      case 'file': return this.view.attr(C.S_IFREG | readOnlyFileMode(readers), node.file.remote.size, transfer)
      case 'transfer-json': return this.view.attr(C.S_IFREG | readOnlyFileMode(readers), transferJson(node.entry, node.contents).length, transfer)
      case 'link': return this.view.attr(C.S_IFREG | readOnlyFileMode(readers), linkFile(node.transfer).length, transfer)
      case 'password': return this.view.attr(C.S_IFREG | 0o200, 0, transfer)
      default: return this.view.attr(C.S_IFDIR | 0o555, 0, transfer)
    }
  }

  /**
   * Which of group and other may read a node below the listing (access-bits.ts): no one but
   * the owner for a password-protected transfer, locked or not (unlocked, its files and the
   * addresses in its details are the password's worth); a transfer sent from this machine as
   * its outbox entry allowed (the sent log's record); everyone otherwise.
   */
  private readersOf(node: Node): number {
    if (node.kind === 'listing') return EVERYONE
    const transfer = transferOf(node)
    // A locked one is known by that alone when no listing described it (by-id/, a sent one).
    if (node.entry.summary?.passwordprotected || transfer?.passwordprotected) return OWNER_ONLY
    if (this.view.store.peekContents(node.entry)?.state === 'locked') return OWNER_ONLY
    if (node.entry.place !== 'sent') return EVERYONE
    const sent = this.view.store.sentReaders(transfer?.id ?? node.entry.ref.token)
    if (!sent) return EVERYONE
    return node.kind === 'file' ? (sent.files.get(node.file.remote.fileName) ?? OWNER_ONLY) : sent.any
  }

  private xattrsOf(node: Node): Map<string, string> {
    const attrs = new Map<string, string>()
    if (node.kind === 'file' && node.file.remote.md5) attrs.set('user.md5', node.file.remote.md5)
    const page = pageOf(node)
    if (page) attrs.set(ORIGIN_XATTR, withoutQuery(page))
    if (node.kind === 'file') attrs.set('user.mime_type', mimeTypeOf(node.file.remote.fileName))
    return attrs
  }
}

/**
 * The transfer's address a node carries (ORIGIN_XATTR): its files, and its own folder too, from
 * the listing that named it (never a call to the service), so a file manager's "Copy link" on
 * the folder is one read.
 */
function pageOf(node: Node): string | undefined {
  if (node.kind === 'transfer') return transferOf(node)?.url || undefined
  if (node.kind === 'file') return node.transfer.url || undefined
  return undefined
}
