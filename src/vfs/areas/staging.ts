// The writable part of the mount as the send side has it: a tree of staged files (OutboxFs
// in src/send), with paths relative to its own root and its own open-file numbers, and the
// ports the mount's writable areas need from sending.
import type { NodeAttr, OpenFlags } from '../core.js'
import type { OpenNode } from './area.js'
import { sendStateText, sendSummaryText, type SendProgress } from '../state-words.js'

/** The writable half of a file system, as OutboxFs has it (paths relative to its root). */
export interface StagingTree {
  getattr(p: string): Promise<NodeAttr>
  readdir(p: string): Promise<string[]>
  readlink(p: string): Promise<string>
  open(p: string, flags: OpenFlags): Promise<number>
  create(p: string, mode: number): Promise<number>
  read(p: string, fh: number, position: number, length: number): Promise<Buffer>
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
  utimens(p: string, atime: Date | null, mtime: Date | null): Promise<void>
  /** The sends of this tree as its status has them (the same entries `.status` shows), from memory. */
  sends(): readonly SendProgress[]
}

export interface SendingParts {
  outbox: StagingTree
  /** Files added to sent transfers: `/<transfer id>/<name>`. */
  additions: StagingTree
  /** Adds recipients (addresses or contact group names) to a transfer sent from here. */
  forward(transferid: string, to: string[]): Promise<void>
  /** The text of `/.status`: the mount's status (the sends, the service's health, the pins). */
  statusText(): string
  shutdown(): Promise<void>
}

/** A file the staging tree opened, as the mount's handle table keeps it. */
export function stagedNode(tree: StagingTree, p: string, fh: number): OpenNode {
  return {
    read: (position, length) => tree.read(p, fh, position, length),
    write: (data, position) => tree.write(p, fh, data, position),
    flush: () => tree.flush(p, fh),
    fsync: (datasync) => tree.fsync(p, fh, datasync),
    ftruncate: (size) => tree.ftruncate(p, fh, size),
    release: () => tree.release(p, fh),
  }
}

/**
 * `user.transferfs.state` of a staged path, from the sends its tree knows (never the service):
 * a send's own state for its entry and anything inside it (a file in a folder being sent
 * shows the folder's send); for a folder holding entries (outbox/, a recipient folder), their
 * states summed up; `waiting` for a file no send has picked up yet. The sends that finished
 * have left the tree, so only those still in it count.
 */
export function stagedState(tree: StagingTree, p: string, isDir: boolean): string {
  const key = p.replace(/^\/+|\/+$/g, '')
  const live = tree.sends().filter((s) => s.state !== 'done')
  // The innermost send holding the path: the additions' tree also tracks each transfer's own
  // staging folder, above the files added to it.
  const own = live.filter((s) => key === s.name || key.startsWith(s.name + '/')).sort((a, b) => b.name.length - a.name.length)[0]
  if (own) return sendStateText(own)
  const under = live.filter((s) => key === '' || s.name.startsWith(key + '/'))
  if (under.length > 0 || isDir) return sendSummaryText(under)
  return 'waiting'
}
