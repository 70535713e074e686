// How fast the link delivers, and how far ahead of a reader that makes worth fetching. Pure
// state and arithmetic, no I/O.
//
// Every fetch of a mount goes over one link to the service. Fetching further ahead than the
// link can deliver in a short while does not make a reader faster: the fetches share the link,
// so those far ahead take their share from the one the reader waits on, and whatever they hold
// when the reader stops was fetched for nothing (through 12.5 MB/s, `head -c 256M` of a cold
// file fetched 1.13–1.27× what it read and ran at 0.78–0.88× the link with 100 MiB kept ahead).
// So the lookahead is what the link delivers in a short horizon, plus a piece.

/** ms of busy time over which the estimate forgets: older samples weigh e^-1 after this long. */
const TIME_CONSTANT_MS = 1000
/** ms of busy time before the estimate means anything (a first fetch's request latency would dominate). */
const MIN_BUSY_MS = 100
/** ms between folds of received bytes into the estimate (a socket hands bytes on every 16–64 KiB). */
const FOLD_MS = 10

/**
 * Bytes per second the mount's range streams receive while at least one is in flight: the
 * bytes they received over the wall time during which any was under way (time with no stream
 * is the readers' or the queue's, not the link's), exponentially weighted over busy time. With
 * several streams at once it is their sum, the link's whole rate. A stream held back while its
 * pieces wait for their hashes counts as under way: that too is what a reader gets.
 */
export class LinkRate {
  private streams = 0
  /** ms: the last fold. */
  private at = 0
  /** Bytes received since the last fold. */
  private pending = 0
  /** Weighted bytes and busy ms: their ratio is the rate. */
  private bytes = 0
  private busyMs = 0

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** A range stream begins; the function returned says it has ended (once is enough). */
  begin(): () => void {
    this.fold()
    this.streams++
    let ended = false
    return () => {
      if (ended) return
      ended = true
      this.fold()
      this.streams--
    }
  }

  /** `n` bytes of a stream arrived. */
  received(n: number): void {
    this.pending += n
    if (this.now() - this.at >= FOLD_MS) this.fold()
  }

  /** Bytes per second while streaming, or null while too little has been seen to tell. */
  get bytesPerSecond(): number | null {
    this.fold()
    return this.busyMs >= MIN_BUSY_MS ? (this.bytes / this.busyMs) * 1000 : null
  }

  private fold(): void {
    const now = this.now()
    const dt = now - this.at
    this.at = now
    if (this.streams === 0) {
      // Nothing was in flight since the last fold: no busy time, and no bytes to count.
      this.pending = 0
      return
    }
    const keep = Math.exp(-dt / TIME_CONSTANT_MS)
    this.bytes = this.bytes * keep + this.pending
    this.busyMs = this.busyMs * keep + dt
    this.pending = 0
  }
}

export interface LookaheadPolicy {
  /** Bytes one GetRangeHash verifies: a reader gets nothing of a piece until all of it is in. */
  pieceSize: number
  /** ms of the link's delivery kept ahead of a reader beyond one piece. */
  prefetchHorizonMs: number
  /** Bytes the kernel's readahead may ask ahead of a reader at once (options.ts). */
  sequentialSlack: number
}

/**
 * Bytes worth keeping fetched or in flight ahead of one of `readers` sequential readers when
 * the link delivers `bytesPerSecond` (null: not known yet, no limit from the link). A reader
 * waits for whole pieces, so the stream it reads from runs up to a piece ahead of its reads;
 * the next fetch must be asked before that stream ends, by the horizon's worth of bytes, for
 * the link to stay busy while the request and its hash calls make their round trips. The
 * readers share the link, so each keeps its share of it ahead. Never less than the kernel's
 * readahead may ask at once: its reads past the prefetch would each start a fetch of their
 * own, cutting the run's fetches into many smaller ones (at a 1 GiB readahead a cold `cat`
 * of 1 GiB took 34 range requests where 26 do).
 */
export function linkLookahead(bytesPerSecond: number | null, readers: number, policy: LookaheadPolicy): number {
  if (bytesPerSecond === null) return Infinity
  const share = bytesPerSecond / Math.max(1, readers)
  return Math.max(policy.sequentialSlack, policy.pieceSize + Math.ceil((share * policy.prefetchHorizonMs) / 1000))
}

