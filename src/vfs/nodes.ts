// Paths to nodes: the shape of the tree, walked one name at a time, answered from the
// metadata cache. A first visit of a listing or a transfer waits for the service; probe
// names never do.
import type { Transfer } from '../api/types.js'
import { FsError } from './core.js'
import type { TransferEntry } from './folder-listing.js'
import type { Contents, MetadataStore } from './metadata.js'
import { isProbeName } from './probe-names.js'
import { LINK_FILE, PASSWORD_FILE, TRANSFER_JSON, type TreeDir, type TreeFile } from './transfer-tree.js'

export type TopFolder = 'root' | 'inbox' | 'sent' | 'outbox' | 'by-id'

export type Node =
  | { kind: TopFolder }
  | { kind: 'status' }
  | { kind: 'transfer'; entry: TransferEntry }
  | { kind: 'folder'; entry: TransferEntry; transfer: Transfer; dir: TreeDir }
  | { kind: 'file'; entry: TransferEntry; transfer: Transfer; file: TreeFile }
  | { kind: 'transfer-json'; entry: TransferEntry; contents: Contents }
  | { kind: 'password'; entry: TransferEntry }
  /** A sent transfer's download link as an Internet shortcut (file managers open it in a browser). */
  | { kind: 'link'; entry: TransferEntry; transfer: Transfer }

export const STATUS_FILE = '.status'
export const ROOT_NAMES: readonly string[] = ['inbox', 'sent', 'outbox', 'by-id', STATUS_FILE]

export function splitPath(path: string): string[] {
  return path.split('/').filter((part) => part !== '')
}

export function isDirectory(node: Node): boolean {
  switch (node.kind) {
    case 'status': case 'file': case 'transfer-json': case 'password': case 'link': return false
    default: return true
  }
}

export class TreeResolver {
  constructor(private readonly store: MetadataStore) {}

  async resolve(path: string): Promise<Node> {
    let node: Node = { kind: 'root' }
    for (const name of splitPath(path)) node = await this.child(node, name)
    return node
  }

  /** The names in a folder, in display order. */
  async list(node: Node): Promise<string[]> {
    switch (node.kind) {
      case 'root': return [...ROOT_NAMES]
      case 'inbox': return (await this.store.inbox()).names
      case 'sent': return (await this.store.sent()).names
      // The sending layer (sending.ts) lists the outbox; by-id opens transfers by name but lists none.
      case 'outbox': case 'by-id': return []
      case 'transfer': {
        const contents = await this.store.contents(node.entry)
        if (contents.state === 'locked') return [TRANSFER_JSON, PASSWORD_FILE]
        if (contents.state === 'open') {
          const names = [TRANSFER_JSON, ...contents.tree.entries.keys()]
          return hasLinkFile(node.entry, contents.transfer, contents.tree) ? [TRANSFER_JSON, LINK_FILE, ...names.slice(1)] : names
        }
        return [TRANSFER_JSON]
      }
      case 'folder': return [...node.dir.entries.keys()]
      default: throw new FsError('ENOTDIR')
    }
  }

  private async child(node: Node, name: string): Promise<Node> {
    const probe = isProbeName(name)
    switch (node.kind) {
      case 'root':
        if (name === STATUS_FILE) return { kind: 'status' }
        if (name === 'inbox' || name === 'sent' || name === 'outbox' || name === 'by-id') return { kind: name }
        throw new FsError('ENOENT')
      case 'inbox':
      case 'sent': {
        const listing = node.kind === 'inbox'
          ? (probe ? this.store.peekInbox() : await this.store.inbox())
          : (probe ? this.store.peekSent() : await this.store.sent())
        const entry = listing?.byName.get(name)
        if (!entry) throw new FsError('ENOENT')
        return { kind: 'transfer', entry }
      }
      case 'outbox':
        throw new FsError('ENOENT')
      case 'by-id': {
        const entry = probe ? this.store.peekById(name) : await this.store.byId(name)
        if (!entry) throw new FsError('ENOENT')
        return { kind: 'transfer', entry }
      }
      case 'transfer': {
        const contents = probe ? this.store.peekContents(node.entry) : await this.store.contents(node.entry)
        if (!contents) throw new FsError('ENOENT')
        if (name === TRANSFER_JSON) return { kind: 'transfer-json', entry: node.entry, contents }
        if (contents.state === 'locked' && name === PASSWORD_FILE) return { kind: 'password', entry: node.entry }
        if (contents.state !== 'open') throw new FsError('ENOENT')
        if (name === LINK_FILE && hasLinkFile(node.entry, contents.transfer, contents.tree)) return { kind: 'link', entry: node.entry, transfer: contents.transfer }
        return this.inTree(node.entry, contents.transfer, contents.tree, name)
      }
      case 'folder':
        return this.inTree(node.entry, node.transfer, node.dir, name)
      default:
        throw new FsError('ENOTDIR')
    }
  }

  private inTree(entry: TransferEntry, transfer: Transfer, dir: TreeDir, name: string): Node {
    const found = dir.entries.get(name)
    if (!found) throw new FsError('ENOENT')
    return found.kind === 'dir'
      ? { kind: 'folder', entry, transfer, dir: found }
      : { kind: 'file', entry, transfer, file: found }
  }
}

/**
 * A sent folder shows `link.url` when the transfer has a link and no file of its own
 * takes the name (the link is in `.transfer.json` either way).
 */
function hasLinkFile(entry: TransferEntry, transfer: Transfer, tree: TreeDir): boolean {
  return entry.place === 'sent' && !!transfer.url && !tree.entries.has(LINK_FILE)
}

/** `link.url`: the freedesktop/Windows Internet shortcut of the transfer's download page. */
export function linkFile(transfer: Transfer): Buffer {
  return Buffer.from(`[InternetShortcut]\nURL=${transfer.url ?? ''}\n`, 'utf8')
}

const jsonCache = new WeakMap<object, Buffer>()

/** `.transfer.json`: the transfer's details, pretty, without its key. */
export function transferJson(entry: TransferEntry, contents: Contents): Buffer {
  const source: Transfer | null =
    contents.state === 'open' || contents.state === 'closed' ? contents.transfer : entry.summary
  if (!source) {
    const stub = entry.ref.via === 'id' ? { id: entry.ref.token } : { trackid: entry.ref.token }
    return toJson({ ...stub, passwordprotected: contents.state === 'locked' })
  }
  let json = jsonCache.get(source)
  if (!json) {
    const { key: _key, ...shown } = source
    json = toJson(shown)
    jsonCache.set(source, json)
  }
  return json
}

function toJson(value: unknown): Buffer {
  return Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8')
}

/** The transfer whose dates a node shows: its details when known, else its listing entry. */
export function transferOf(node: Node): Transfer | null {
  switch (node.kind) {
    case 'folder': case 'file': case 'link': return node.transfer
    case 'transfer-json':
      return node.contents.state === 'open' || node.contents.state === 'closed' ? node.contents.transfer : node.entry.summary
    case 'transfer': case 'password': return node.entry.summary
    default: return null
  }
}
