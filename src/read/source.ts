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

export interface ContentHandle {
  /**
   * Up to `length` bytes at `position` (fewer only at end of file), verified; as parts, not
   * copied together. At once, without a promise, when they are at hand.
   */
  read(position: number, length: number): Bytes | Promise<Bytes>
  /**
   * The rest of the block a sequential reader's read ended in, from `position`, lent
   * (bytes.ts), when the block is at hand. Undefined otherwise. Nothing
   * is fetched or recorded: the reader's run moves on at its next read.
   */
  lendAhead?(position: number): Bytes | undefined
  /** The handle is gone (release): stop its prefetch. */
  close(): void
}
