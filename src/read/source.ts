// What the read path needs from the service, and nothing more. The mount wires the
// client (src/api) into this port; tests of src/read drive it with the real client
// against the local service, or with a small in-memory source for pure chunk logic.
import type { BodySink } from '../api/range-sockets.js'
import type { Bytes } from './bytes.js'

/** One file of one transfer, as the read path knows it. */
export interface RemoteFile {
  transferId: string
  /** The service's file name (FileDto.filename): GetRangeHash's `thefilename`. */
  fileName: string
  size: number
  /** Lowercase hex MD5 of the whole file, when the service gave one. */
  md5: string | null
  /** FileDto.downloadurl, used as returned (it may carry a signed token). */
  downloadUrl: string
  /**
   * Identity of these exact bytes: transfer id, file id, size and md5 (or another
   * version mark). A replaced file gets a new key, so cached bytes of the old one
   * can never be served for it.
   */
  cacheKey: string
}

/** Whether the service can be reached at all (the client's connectivity). */
export interface Reachability {
  readonly online: boolean
  /** Calls `fn` on every change; returns the way to stop. */
  onChange(fn: (state: { online: boolean }) => void): () => void
  /** The error a read refused for being offline gets. */
  offlineError(): Error
}

/** One try of each: the read path retries, under the one failure policy. */
export interface RangeSource {
  /**
   * Bytes [start, end) of the file handed to `sink` in order as they arrive (for hashing
   * while receiving, and for serving a verified prefix before the whole range is in). The
   * bytes are valid only during the call: the sink copies what it keeps. A promise the sink
   * returns holds the rest back until it settles. Fewer bytes than asked end it with an error.
   */
  streamRange(file: RemoteFile, start: number, end: number, sink: BodySink, signal?: AbortSignal): Promise<void>
  /** Lowercase hex MD5 of bytes [position, position + length), from GetRangeHash. */
  rangeHash(file: RemoteFile, position: number, length: number, signal?: AbortSignal): Promise<string>
  /** Absent: the source is always reachable (an in-memory source). */
  readonly reachability?: Reachability
  /** A read of `file` is likely soon: open what its first request needs (a connection) ahead. */
  prepare?(file: RemoteFile): void
}

/**
 * What the filesystem core asks of the read path: an open file's bytes. One handle
 * per open(2), so the read path can see sequential access per handle and prefetch.
 */
export interface FileContent {
  open(file: RemoteFile): ContentHandle
  /** A read of `file` is likely soon (its folder was listed): get ready for it. */
  prepare(file: RemoteFile): void
}

/** Bytes of a file from `start`, lent (bytes.ts) for libfuse's threads to answer reads from. */
export interface LentAhead {
  start: number
  bytes: Bytes
}

export interface ContentHandle {
  /**
   * Up to `length` bytes at `position` (fewer only at end of file), verified; as parts, not
   * copied together. At once, without a promise, when they are at hand.
   */
  read(position: number, length: number): Bytes | Promise<Bytes>
  /**
   * After a read of `length` bytes of a sequential reader's run was answered: what follows
   * the run's furthest read, lent (bytes.ts), as far as it is at hand (the rest of its block
   * and, for a reader asking less than a block at a time, the blocks after it), a block or
   * part of one each. Undefined when none is. Nothing is fetched or recorded: the run moves on
   * at its next read.
   */
  lendAhead?(length: number): LentAhead[] | undefined
  /** The handle is gone (release): stop its prefetch. */
  close(): void
}

/** A pin refused: the disk cache (or the disk) lacks `needed` more bytes for it. */
export class NoRoomError extends Error {
  readonly code = 'ENOSPC'
  /** `message` says how much more room is needed and what the cache holds, e.g. "needs 1.2 GiB more room in the cache (diskCacheBytes 10 GiB, 9.1 GiB kept)". */
  constructor(message: string, readonly needed: number) {
    super(message)
    this.name = 'NoRoomError'
  }
}

/** How much of a file the cache holds. */
export interface CachedShare {
  bytes: number
  size: number
}

/** What pinning files (keeping them offline) asks of the read path. */
export interface CachePinning {
  /** Bytes of the file's verified blocks in the disk cache now (memory-only blocks do not count: they do not survive). */
  cachedBytes(file: RemoteFile): number
  /** True while the file is pinned. */
  isPinned(file: RemoteFile): boolean
  /**
   * Pins the files: their blocks are never evicted, from now on and across mounts (the pinned
   * list is saved in the cache folder), and their whole size is set aside in the budget,
   * fetched or not. All or none: when they do not all fit in diskCacheBytes less what is pinned
   * already, or in the disk's free space (less the margin the mount gives) plus the unpinned
   * cached bytes that could be evicted, throws NoRoomError and pins none. Files pinned already
   * cost nothing more.
   */
  pin(files: readonly RemoteFile[]): Promise<void>
  /** Pinned no more: their cached blocks become ordinary cached blocks (evicted least recently used first). */
  unpin(files: readonly RemoteFile[]): Promise<void>
  /**
   * Pins none but these (of those pinned already): the pinned list saved in the cache folder may
   * name files no pin covers any more (pins removed while unmounted), whose room would
   * otherwise stay set aside for good.
   */
  pinOnly(files: readonly RemoteFile[]): Promise<void>
  /**
   * Fetches every block of a pinned file that is not in the disk cache, verified through the
   * same fetcher, hashes and caches as reads (a block in flight for a reader is joined, never
   * fetched twice), below every read: it waits while any reader's fetch (demand or prefetch)
   * is in flight or started in the last moment, and fetches in small runs (a few MiB) at
   * BACKGROUND priority, one at a time, so an open file's reads go first. Resolves once every
   * block is on disk (written, not merely fetched: a block the disk cache skipped for a full
   * write backlog is written again). Follows the read path's failure policy: faults of the
   * connection retried until the deadline, over and over while the signal is not aborted (a
   * network loss pauses it; it goes on when the service is back), as is a busy service (429,
   * 503); a definitive answer (a ServiceError such as the transfer gone) rejects at once, and
   * another error answer (a 500) once it lasted until the policy gave up. Rejects with the
   * signal's reason when aborted.
   * onProgress gets the file's bytes on disk after each run.
   */
  fetchAll(file: RemoteFile, options: { signal: AbortSignal; onProgress?: (bytesOnDisk: number) => void }): Promise<void>
  /** Drops the cached blocks of a file that is not pinned, from memory and disk; the bytes freed (0 for a pinned file). */
  free(file: RemoteFile): Promise<number>
  /** The disk cache: bytes set aside for pinned files (their whole size), other cached bytes, and the budget (diskCacheBytes). */
  cacheUse(): { pinnedBytes: number; otherBytes: number; budgetBytes: number }
}
