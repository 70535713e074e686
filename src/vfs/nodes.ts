// Names to nodes inside a transfer area (inbox, sent, by-id): the area's own folder, the
// transfers it holds, and their folders and files, walked one name at a time and answered
// from the metadata cache. A first visit of a listing or a transfer waits for the
// service; probe names never do.
import type { Transfer } from '../api/types.js'
import type { Names } from './areas/area.js'
import { FsError } from './core.js'
import type { TransferEntry } from './folder-listing.js'
import type { Contents, MetadataStore } from './metadata.js'
import { isProbeName } from './probe-names.js'
import { withoutQueries, withoutQuery } from './shown-urls.js'
import { LINK_FILE, PASSWORD_FILE, TRANSFER_JSON, type TreeDir, type TreeFile } from './transfer-tree.js'

/** Which transfers an area's folder holds, by name. */
export interface TransferListing {
  /** The names the folder lists, in display order. */
  names(): Promise<string[]>
  /** The transfer a name stands for; a probe name is looked up only in what is known already. */
  find(name: string, probe: boolean): Promise<TransferEntry | undefined>
}

export type Node =
  /** The area's own folder (`inbox/`, `sent/`, `by-id/`). */
  | { kind: 'listing' }
  | { kind: 'transfer'; entry: TransferEntry }
  | { kind: 'folder'; entry: TransferEntry; transfer: Transfer; dir: TreeDir }
  | { kind: 'file'; entry: TransferEntry; transfer: Transfer; file: TreeFile }
  | { kind: 'transfer-json'; entry: TransferEntry; contents: Contents }
  | { kind: 'password'; entry: TransferEntry }
  /** A sent transfer's download link as an Internet shortcut (file managers open it in a browser). */
  | { kind: 'link'; entry: TransferEntry; transfer: Transfer }

export function isDirectory(node: Node): boolean {
  switch (node.kind) {
    case 'file': case 'transfer-json': case 'password': case 'link': return false
    default: return true
  }
}

export class TreeResolver {
  constructor(
    private readonly store: MetadataStore,
    private readonly listing: TransferListing,
  ) {}

  async resolve(names: Names): Promise<Node> {
    let node: Node = { kind: 'listing' }
    for (const name of names) node = await this.child(node, name)
    return node
  }

  /** The names in a folder, in display order. */
  async list(node: Node): Promise<string[]> {
    switch (node.kind) {
      case 'listing': return this.listing.names()
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
      case 'listing': {
        const entry = await this.listing.find(name, probe)
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

/** `link.url`: the freedesktop/Windows Internet shortcut of the transfer's download page (its public address). */
export function linkFile(transfer: Transfer): Buffer {
  return Buffer.from(`[InternetShortcut]\nURL=${withoutQuery(transfer.url ?? '')}\n`, 'utf8')
}

const jsonCache = new WeakMap<object, Buffer>()

/** `.transfer.json`: the transfer's details, pretty, without its key or any address's query (shown-urls.ts). */
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
    json = toJson(withoutQueries(shown))
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
