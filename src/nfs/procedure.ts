// What every NFS and MOUNT procedure is given and returns. A procedure reads its arguments
// at once (an XdrError there is GARBAGE_ARGS), then does its work and returns what writes its
// results after the status word. A failure is thrown: an NfsStatusError, or whatever the core
// threw, which status.ts maps.
import { constants as C } from 'node:fs'
import type { Logger } from '../base/log.js'
import type { FileSystemCore, NodeAttr } from '../vfs/core.js'
import { MAX_HANDLE_BYTES, type FileHandles } from './handles.js'
import type { Listings } from './listings.js'
import type { OpenFiles } from './open-files.js'
import type { Credential } from './rpc.js'
import { NFS3, NfsStatusError, statusOf } from './status.js'
import type { WriteFiles } from './write-files.js'
import type { XdrReader, XdrWriter } from './xdr.js'

export interface NfsContext {
  readonly core: FileSystemCore
  readonly handles: FileHandles
  /** Files held open for READ between calls (NFS has no open or close). */
  readonly reads: OpenFiles
  /** Files held open between WRITEs until their writes are committed. */
  readonly writes: WriteFiles
  /** Folders' entries held between the pages of a listing. */
  readonly listings: Listings
  readonly log: Logger
  /** The only uid (besides root's) whose AUTH_UNIX calls are served; null: any. */
  readonly ownerUid: number | null
}

/** Writes a procedure's results after its status word. */
export type Body = (w: XdrWriter) => void

export type Procedure = (args: XdrReader, cx: NfsContext, cred: Credential) => Promise<Body>

/** The results of a procedure that has none (NULL, UMNT). */
export const NO_RESULTS: Body = () => {}

/** The path a handle argument names; STALE when it names nothing (the client then looks it up again). */
export function readHandle(r: XdrReader, cx: NfsContext): string {
  const p = cx.handles.pathOf(r.opaque(MAX_HANDLE_BYTES))
  if (p === null) throw new NfsStatusError(NFS3.STALE)
  return p
}

/**
 * The longest name taken: a path holds at most PATH_MAX bytes with its NUL, so on the FUSE mount
 * a longer name is ENAMETOOLONG before anyone is asked. A shorter one goes to the core, which
 * answers as it does there (a lookup past NAME_MAX finds nothing, a create past it is refused).
 */
const LONGEST_NAME_BYTES = 4095
/** Names are read up to this length, so that a longer one is answered NAMETOOLONG rather than GARBAGE_ARGS. */
const NAME_READ_MAX = 4096

/** A name argument: one component, neither empty nor holding a slash or a NUL. */
export function readName(r: XdrReader): string {
  const bytes = r.opaque(NAME_READ_MAX)
  if (bytes.length > LONGEST_NAME_BYTES) throw new NfsStatusError(NFS3.NAMETOOLONG)
  const name = bytes.toString('utf8')
  if (name === '' || name.includes('/') || name.includes('\0')) throw new NfsStatusError(NFS3.INVAL)
  return name
}

/** Bytes of a live file's text read to learn its size (`.status` is a few KiB). */
const LIVE_SIZE_MAX_BYTES = 1024 * 1024

/** The attributes of `p` as NFS clients are given them: a live file (`.status`) with the size of its text. */
export async function attrOf(cx: NfsContext, p: string): Promise<NodeAttr> {
  const a = await cx.core.getattr(p)
  if (a.size !== 0 || (a.mode & C.S_IFMT) !== C.S_IFREG || (a.mode & 0o444) === 0) return a
  const size = await cx.reads.liveSize(p, LIVE_SIZE_MAX_BYTES).catch(() => null)
  return size === null ? a : { ...a, size }
}

/** The attributes of `p`, or null when they cannot be had (a reply's optional attributes). */
export function attrOrNull(cx: NfsContext, p: string): Promise<NodeAttr | null> {
  return attrOf(cx, p).catch(() => null)
}

/**
 * The attributes of the entry a handle names. An entry the tree no longer has is STALE: its
 * handle is what is out of date, not a name the client gave.
 */
export async function attrOfHandle(cx: NfsContext, p: string): Promise<NodeAttr> {
  try {
    return await attrOf(cx, p)
  } catch (err) {
    if (statusOf(err) === NFS3.NOENT) throw new NfsStatusError(NFS3.STALE)
    throw err
  }
}
