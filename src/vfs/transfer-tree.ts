// The folders and files inside one transfer, built once per details answer: file names
// holding "/" become folders, every name is made safe, and collisions are numbered in
// file-id order so the same transfer always gives the same tree.
import type { FileDto, Transfer } from '../api/types.js'
import type { RemoteFile } from '../read/source.js'
import { disambiguate, safeName } from './names.js'

export interface TreeFile {
  kind: 'file'
  dto: FileDto
  remote: RemoteFile
}

export interface TreeDir {
  kind: 'dir'
  /** Display order: folders and files in the order their first file came. */
  entries: Map<string, TreeNode>
}

export type TreeNode = TreeFile | TreeDir

/** Names of a transfer folder's own virtual files: real files never take them. */
export const TRANSFER_JSON = '.transfer.json'
export const PASSWORD_FILE = '.password'
/** A sent folder's Internet shortcut to its download page (nodes.ts). */
export const LINK_FILE = 'link.url'
export const RESERVED_NAMES: readonly string[] = [TRANSFER_JSON, PASSWORD_FILE]

export function remoteFileOf(transfer: Transfer, dto: FileDto): RemoteFile {
  const transferId = dto.transferid || transfer.id
  const size = dto.filesize ?? 0
  const md5 = dto.md5 ? dto.md5.toLowerCase() : null
  const fileName = dto.filename ?? ''
  return {
    transferId,
    fileName,
    size,
    md5,
    downloadUrl: dto.downloadurl,
    cacheKey: [transferId, dto.fileid ?? fileName, size, md5 ?? '-'].join(':'),
  }
}

interface RawDir {
  folders: Map<string, RawDir>
  /** In order of arrival; a folder appears once, at its first file. */
  items: Array<{ base: string; node: RawDir | TreeFile }>
}

function newRawDir(): RawDir {
  return { folders: new Map(), items: [] }
}

/** Path components of a service file name; empty ones ("a//b", "/a") carry no name. */
function componentsOf(filename: string): string[] {
  const parts = filename.split('/').filter((part) => part !== '')
  return parts.length > 0 ? parts : ['']
}

function byFileId(a: { dto: FileDto; index: number }, b: { dto: FileDto; index: number }): number {
  const x = a.dto.fileid ?? ''
  const y = b.dto.fileid ?? ''
  if (x !== y) return x < y ? -1 : 1
  return a.index - b.index
}

export function buildTransferTree(transfer: Transfer): TreeDir {
  const files = (transfer.files ?? []).map((dto, index) => ({ dto, index })).sort(byFileId)
  const root = newRawDir()
  for (const { dto } of files) {
    const parts = componentsOf(dto.filename ?? '')
    let dir = root
    for (const part of parts.slice(0, -1)) {
      // Folders merge by their raw name, so two names that only map alike stay apart.
      let child = dir.folders.get(part)
      if (!child) {
        child = newRawDir()
        dir.folders.set(part, child)
        dir.items.push({ base: safeName(part), node: child })
      }
      dir = child
    }
    const file: TreeFile = { kind: 'file', dto, remote: remoteFileOf(transfer, dto) }
    dir.items.push({ base: safeName(parts[parts.length - 1]!), node: file })
  }
  return finish(root, RESERVED_NAMES)
}

function finish(raw: RawDir, reserved: readonly string[] = []): TreeDir {
  const names = disambiguate(raw.items.map((item) => item.base), reserved)
  const entries = new Map<string, TreeNode>()
  raw.items.forEach((item, i) => {
    entries.set(names[i]!, 'kind' in item.node ? item.node : finish(item.node))
  })
  return { kind: 'dir', entries }
}

