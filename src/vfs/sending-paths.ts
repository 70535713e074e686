// Where a path of the mount goes when sending is wired in (the read-only tree, the outbox
// staging, a sent transfer folder, `.status`), and the writable parts' ports.
import { FsError, type NodeAttr, type OpenFlags } from './core.js'
import { splitPath, STATUS_FILE } from './nodes.js'

export const FORWARD_FILE = '.forward'

/** The writable half of a file system, as OutboxFs has it (paths relative to its root). */
export interface StagingTree {
  getattr(p: string): Promise<NodeAttr>
  readdir(p: string): Promise<string[]>
  readlink(p: string): Promise<string>
  open(p: string, flags: OpenFlags): Promise<number>
  create(p: string, mode: number): Promise<number>
  read(p: string, fh: number, length: number, position: number): Promise<Buffer>
  write(p: string, fh: number, data: Buffer, position: number): Promise<number>
  flush(p: string, fh: number): Promise<void>
  fsync(p: string, fh: number, datasync: boolean): Promise<void>
  release(p: string, fh: number): Promise<void>
  truncate(p: string, size: number): Promise<void>
  ftruncate(p: string, fh: number, size: number): Promise<void>
  unlink(p: string): Promise<void>
  mkdir(p: string, mode: number): Promise<void>
  rmdir(p: string): Promise<void>
  rename(from: string, to: string): Promise<void>
  symlink(target: string, p: string): Promise<void>
  chmod(p: string, mode: number): Promise<void>
  chown(p: string, uid: number, gid: number): Promise<void>
  utimens(p: string, atime: Date, mtime: Date): Promise<void>
}

export interface SendingParts {
  outbox: StagingTree
  /** Files added to sent transfers: `/<transfer id>/<name>`. */
  additions: StagingTree
  /** Adds recipients (addresses or contact group names) to a transfer sent from here. */
  forward(transferid: string, to: string[]): Promise<void>
  /** Absolute path `/.status` links to; null: the inner tree's own `.status`. */
  statusLink: string | null
  shutdown(): Promise<void>
}

export type Where =
  | { area: 'inner' }
  | { area: 'status' }
  | { area: 'outbox'; p: string }
  /** Inside a sent transfer folder; `rest` is empty for the folder itself. */
  | { area: 'sent'; folder: string; rest: string[] }
  /** A sent transfer folder's write-only `.forward`. */
  | { area: 'forward'; folder: string }

export function where(path: string): Where {
  const parts = splitPath(path)
  if (parts[0] === 'outbox') return { area: 'outbox', p: '/' + parts.slice(1).join('/') }
  if (parts.length === 1 && parts[0] === STATUS_FILE) return { area: 'status' }
  if (parts[0] === 'sent' && parts.length === 3 && parts[2] === FORWARD_FILE) return { area: 'forward', folder: parts[1] as string }
  if (parts[0] === 'sent' && parts.length >= 2) return { area: 'sent', folder: parts[1] as string, rest: parts.slice(2) }
  return { area: 'inner' }
}

/** The path is not there (ENOENT, or a file where a folder was expected). */
export function isMissingPath(err: unknown): boolean {
  return err instanceof FsError && (err.code === 'ENOENT' || err.code === 'ENOTDIR')
}

/** Addresses from what was written to `.forward`: one per line (commas and blanks split too). */
export function parseAddresses(text: string): string[] {
  return text.split(/[\n,;\s]+/).map((s) => s.trim()).filter((s) => s !== '')
}
