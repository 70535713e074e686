// One try at a run of pieces: streamed with one Range request, its bytes copied as they
// arrive into the pooled buffers of their blocks (block-buffers.ts), each piece sent to be
// judged against its hash the moment it is complete. How a try is retried, and what a
// judged piece becomes, is the fetcher's (fetcher.ts).
import { NetworkError } from '../api/errors.js'
import type { BodySink } from '../api/range-sockets.js'
import type { Span } from '../base/chunk-grid.js'
import type { BlockBuffers, PooledBuffer } from './block-buffers.js'
import { copyInto } from './bytes.js'
import { abortable } from './fetch-util.js'
import type { LinkRate } from './link-rate.js'
import type { RangeSource, RemoteFile } from './source.js'

/** Pieces of one fetch received and not yet judged against their hash, at most, before it reads on. */
export const MAX_UNJUDGED_PIECES = 2

/** A piece of a fetch, and how its last try went. */
export interface PieceState {
  span: Span
  done: boolean
  /** Why the last try of this piece did not verify it. */
  failure: Error | null
}

/** The piece a run is receiving: its blocks' buffers and the bytes in so far. */
interface OpenPiece {
  state: PieceState
  buffers: PooledBuffer[]
  filled: number
}

export interface RunDeps {
  source: RangeSource
  buffers: BlockBuffers
  blockSize: number
  stallTimeoutMs: number
  stats: { bytesReceived: number }
  /** Told when a stream is under way and what it receives: the link's rate, for the prefetch. */
  rate: LinkRate
}

/** Judges a complete piece; its buffers are the judge's from then on. */
export type Judge = (state: PieceState, buffers: PooledBuffer[], signal: AbortSignal) => Promise<void>

/**
 * Streams the pieces of one contiguous run of `fetch` (its file and signal) with one Range
 * request, sending each to be judged as it completes. Resolves when every piece of the run
 * is received and judged (verified, or counted as a mismatch); rejects on a network failure
 * or stall.
 */
export async function streamRun(d: RunDeps, fetch: { file: RemoteFile; controller: AbortController }, run: PieceState[], judge: Judge): Promise<void> {
  const { file } = fetch
  const { blockSize, stallTimeoutMs } = d
  const attempt = new AbortController()
  const signal = AbortSignal.any([fetch.controller.signal, attempt.signal])
  // The stall watch: one timer that looks at when bytes last came, rather than a timer
  // set again for each of the 65,536 buffers of a GiB. It sleeps while the fetch waits
  // for its pieces to be judged (the sender is held back then, not stalled).
  let lastData = Date.now()
  let waiting = false
  let timer: NodeJS.Timeout | undefined
  const watch = (ms: number): void => {
    timer = setTimeout(() => {
      const quiet = Date.now() - lastData
      if (waiting) watch(stallTimeoutMs)
      else if (quiet >= stallTimeoutMs) attempt.abort(new NetworkError(`no data for ${stallTimeoutMs} ms`, 'ETIMEDOUT'))
      else watch(stallTimeoutMs - quiet)
    }, ms)
  }
  const runStart = run[0]!.span.start
  const runEnd = run[run.length - 1]!.span.end
  let at = runStart
  const verifications: Promise<void>[] = []
  const unjudged = new Set<Promise<void>>()
  let index = 0
  let piece: OpenPiece | null = null
  let over = false
  const open = (state: PieceState): OpenPiece => {
    const buffers: PooledBuffer[] = []
    for (let at = state.span.start; at < state.span.end; at += blockSize) buffers.push(d.buffers.take())
    return { state, buffers, filled: 0 }
  }
  // Bytes received stay unverified until their range hash comes: with the service's
  // hashes running behind, a fetch streaming on would pile up tens of MiB nobody may
  // read yet. It waits instead (the socket's flow control slows the sender), which
  // bounds each fetch's unverified bytes to a few pieces.
  const judged = async (): Promise<void> => {
    waiting = true
    try {
      while (unjudged.size >= MAX_UNJUDGED_PIECES) await abortable(Promise.race(unjudged), signal)
    } finally {
      waiting = false
      lastData = Date.now()
    }
  }
  /**
   * Takes bytes of the run as they arrive: copied into their piece's blocks, unless the
   * source decrypted them there already (room); a complete piece goes to be judged. Refused
   * once the try is over: its buffers went back to the pool, and bytes a source still hands
   * over after an abort (what it had received before it saw the abort) would land in
   * blocks another fetch has filled and verified since.
   */
  const receive: BodySink = (received: Buffer): Promise<void> | undefined => {
    if (over) throw new NetworkError('bytes after the try was over', 'ECANCELED')
    lastData = Date.now()
    let data = received
    d.stats.bytesReceived += data.length
    d.rate.received(data.length)
    if (at + data.length > runEnd) throw new NetworkError('range longer than asked', 'EPROTO')
    while (data.length > 0) {
      piece ??= open(run[index]!)
      const span = piece.state.span
      const take = Math.min(data.length, span.end - span.start - piece.filled)
      let offset = piece.filled
      let given = 0
      while (given < take) {
        const into = offset % blockSize
        const n = Math.min(take - given, blockSize - into)
        const memory = piece.buffers[Math.floor(offset / blockSize)]!.memory
        // Bytes the socket decrypted into this very place (room) are where they belong.
        if (data.buffer !== memory.buffer || data.byteOffset + given !== memory.byteOffset + into) copyInto(data.subarray(given, given + n), memory, into)
        given += n
        offset += n
      }
      piece.filled += take
      at += take
      data = data.subarray(take)
      if (piece.filled === span.end - span.start) {
        const verification = judge(piece.state, piece.buffers, signal)
        verifications.push(verification)
        unjudged.add(verification)
        const settled = () => void unjudged.delete(verification)
        verification.then(settled, settled)
        piece = null
        index++
      }
    }
    return unjudged.size >= MAX_UNJUDGED_PIECES ? judged() : undefined
  }
  // Where the next bytes of the run go: the rest of the block they belong in, so a socket
  // decrypts them straight into it (range-sockets.ts) rather than into a buffer of its own
  // to be copied from (~0.15 CPU-s per GiB on a cold read, as shared memory is copied
  // word by word). Within the piece, so no byte past the run is ever written there.
  receive.room = (): Buffer | undefined => {
    if (over || at >= runEnd) return undefined
    piece ??= open(run[index]!)
    const into = piece.filled % blockSize
    const n = Math.min(blockSize - into, piece.state.span.end - piece.state.span.start - piece.filled)
    return piece.buffers[Math.floor(piece.filled / blockSize)]!.memory.subarray(into, into + n)
  }
  watch(stallTimeoutMs)
  const streamEnded = d.rate.begin()
  try {
    await abortable(d.source.streamRange(file, runStart, runEnd, receive, signal), signal)
    if (at < runEnd) throw new NetworkError(`range ended at ${at} of ${runEnd}`, 'ECONNRESET')
  } finally {
    over = true
    streamEnded()
    clearTimeout(timer)
    // A piece cut off: its buffers go back (set by receive, which the compiler does not follow).
    for (const b of (piece as OpenPiece | null)?.buffers ?? []) d.buffers.drop(b)
    // Pieces received before a failure are still judged; their outcome stands.
    await Promise.allSettled(verifications)
  }
}
