// Fetching and verifying blocks. One Fetch = one run of blocks wanted from the
// service; it streams the run with a single Range request (run-stream.ts), hashes each
// piece once it is in (on a worker thread: piece-hash.ts), compares it with its
// GetRangeHash (asked for in parallel) or the file's md5 when the piece is the whole
// file, and hands out a piece's blocks the moment it is verified. Bytes that do
// not match are fetched again; no unverified byte ever leaves this module.
//
// All fetches of the mount share one queue (at most maxConcurrentFetches at once);
// concurrent wants of the same block share one fetch. A fetch lives while some handle
// owns it: when its last owner lets go (close, seek away) it is cancelled, queued or not.
import PQueue from 'p-queue'
import { IntegrityError } from '../api/errors.js'
import { withRetry, type RetryEvent } from '../api/retry.js'
import type { RetryOptions } from '../api/options.js'
import { asNetworkError, contiguousRuns, gaveUp, type Trouble } from './fetch-util.js'
import { spanAt, spansWithin, type Span } from '../base/chunk-grid.js'
import { blockKey, type Block } from './memory-cache.js'
import { noteBlockSum } from './block-sum.js'
import { pieceHash, warmPieceHashers, type PieceHash } from './piece-hash.js'
import type { BlockBuffers, PooledBuffer } from './block-buffers.js'
import { LinkRate } from './link-rate.js'
import { RangeHashes } from './range-hashes.js'
import { streamRun, type PieceState, type RunDeps } from './run-stream.js'
import { readSpan } from './span-read.js'
import type { ReadOptions } from './options.js'
import type { RangeSource, RemoteFile } from './source.js'

/** Priorities in the shared queue: a read someone waits for goes before a prefetch. */
export const DEMAND = 1
export const PREFETCH = 0
/** Pinned files' background fetches: below every reader's fetch, so an open file's reads go first. */
export const BACKGROUND = -1

type Settings = Pick<
  ReadOptions,
  'pieceSize' | 'blockSize' | 'maxConcurrentFetches' | 'maxConcurrentHashes' | 'deadlineMs' | 'retryBaseDelayMs' | 'retryMaxDelayMs' |
  'stallTimeoutMs' | 'hashTimeoutMs'
>

/** What the fetcher tells about fetches that meet trouble: one word when retrying starts, one when it ends. */
export interface FetchEvents {
  retrying?(fetch: Fetch, error: unknown): void
  recovered?(fetch: Fetch, tries: number, ms: number): void
  failed?(fetch: Fetch, error: unknown): void
}

/** Where verified blocks go (the caches), called before any waiter is resolved. */
export type VerifiedSink = (file: RemoteFile, block: number, data: Block) => void

interface PendingBlock {
  promise: Promise<Block>
  resolve: (b: Block) => void
  reject: (e: unknown) => void
  fetch: Fetch
}

let nextFetchId = 0

export class Fetch {
  readonly id = `fetch-${++nextFetchId}`
  readonly controller = new AbortController()
  readonly owners = new Set<object>()
  done = false
  /** ms since the epoch: the fetch gives up retrying then; a reader joining or bytes verified move it on. */
  deadlineAt = 0
  /** While retrying: since when, how many tries failed, and the last reason. */
  trouble: Trouble | null = null

  constructor(
    readonly file: RemoteFile,
    /** Blocks [first, end). */
    readonly first: number,
    readonly end: number,
    private readonly onOrphaned: (f: Fetch) => void,
  ) {}

  own(owner: object): void {
    if (!this.done) this.owners.add(owner)
  }

  /** The owner no longer needs it; the last one out cancels it. */
  release(owner: object): void {
    if (!this.owners.delete(owner) || this.owners.size > 0 || this.done) return
    this.onOrphaned(this)
  }

  covers(block: number): boolean {
    return block >= this.first && block < this.end
  }
}

/** Counters for tests and the status command. */
export interface FetchStats {
  fetches: number
  /** Random reads served by a small verified range of their own. */
  spans: number
  bytesReceived: number
  mismatches: number
  retries: number
}

export class BlockFetcher {
  private readonly queue: PQueue
  private readonly pending = new Map<string, PendingBlock>()
  /** Prefetches waiting for a slot, oldest first. */
  private readonly deferred = new Set<Fetch>()
  private prefetches = 0
  private readonly prefetchSlots: number
  private readonly hashes: RangeHashes
  readonly stats: FetchStats = { fetches: 0, spans: 0, bytesReceived: 0, mismatches: 0, retries: 0 }
  /** What the range streams receive per second: how far ahead a reader's prefetch goes (handle.ts). */
  readonly linkRate = new LinkRate()
  /** Readers' fetches and random reads' spans under way: background fetches wait until there are none. */
  private readonly foreground = new Set<object>()
  /** ms since the epoch: when a reader's fetch or span last started or ended (0: never). */
  lastForegroundAt = 0

  /** Fetches retrying now (for the status). */
  readonly retrying = new Set<Fetch>()
  private readonly policy: RetryOptions
  private readonly runDeps: RunDeps

  constructor(
    private readonly source: RangeSource,
    private readonly settings: Settings,
    private readonly sink: VerifiedSink,
    /** Where fetched blocks are put as they arrive. */
    private readonly buffers: BlockBuffers,
    private readonly events: FetchEvents = {},
  ) {
    this.policy = { maxTries: Infinity, baseDelayMs: settings.retryBaseDelayMs, maxDelayMs: settings.retryMaxDelayMs, deadlineMs: settings.deadlineMs }
    this.queue = new PQueue({ concurrency: settings.maxConcurrentFetches })
    this.prefetchSlots = Math.max(1, settings.maxConcurrentFetches - 1)
    this.hashes = new RangeHashes(source, settings, this.policy)
    warmPieceHashers()
    this.runDeps = {
      source, buffers, blockSize: settings.blockSize, stallTimeoutMs: settings.stallTimeoutMs, stats: this.stats, rate: this.linkRate,
    }
  }

  /** Readers' fetches and spans under way (BACKGROUND fetches not counted). */
  get foregroundInFlight(): number {
    return this.foreground.size
  }

  /** The block's verified bytes when it is being fetched, without joining the fetch: its owners and priority stay as they are. */
  waitFor(file: RemoteFile, block: number): Promise<Block> | undefined {
    return this.pending.get(blockKey(file.cacheKey, block))?.promise
  }

  /** True when the block is being fetched. */
  inFlight(file: RemoteFile, block: number): boolean {
    return this.pending.has(blockKey(file.cacheKey, block))
  }

  /**
   * The block's verified bytes if a fetch of it is under way, with `owner` added to that
   * fetch's owners (a prefetch someone now waits for also moves up the queue).
   */
  join(file: RemoteFile, block: number, owner: object): { promise: Promise<Block>; fetch: Fetch } | undefined {
    const p = this.pending.get(blockKey(file.cacheKey, block))
    if (!p) return undefined
    p.fetch.own(owner)
    this.extend(p.fetch)
    if (this.deferred.delete(p.fetch)) this.enqueue(p.fetch, DEMAND)
    else {
      try {
        this.queue.setPriority(p.fetch.id, DEMAND)
      } catch {
        // already running or done: nothing to raise
      }
    }
    return { promise: p.promise, fetch: p.fetch }
  }

  /** Starts fetching blocks [first, end) of `file`, none of which may be in flight; owned by `owner`. */
  start(file: RemoteFile, first: number, end: number, owner: object, priority: number): Fetch {
    const fetch = new Fetch(file, first, end, (f) => this.cancel(f))
    fetch.own(owner)
    this.extend(fetch)
    for (let b = first; b < end; b++) {
      let resolve!: (b: Block) => void
      let reject!: (e: unknown) => void
      const promise = new Promise<Block>((res, rej) => {
        resolve = res
        reject = rej
      })
      // A prefetched block may fail with nobody waiting; that is not an unhandled error.
      promise.catch(() => {})
      this.pending.set(blockKey(file.cacheKey, b), { promise, resolve, reject, fetch })
    }
    this.stats.fetches++
    if (priority !== BACKGROUND) this.foregroundBegins(fetch)
    if (priority === DEMAND || this.prefetches < this.prefetchSlots) this.enqueue(fetch, priority)
    else {
      // Prefetches never take the last slot, so a read someone waits for never queues
      // behind whole chunks crawling over a slow link; the rest wait here, in order.
      this.deferred.add(fetch)
      fetch.controller.signal.addEventListener(
        'abort',
        () => {
          if (this.deferred.delete(fetch)) this.settle(fetch, fetch.controller.signal.reason)
        },
        { once: true },
      )
    }
    return fetch
  }

  /**
   * Cancels a fetch nobody owns. A cancelled fetch settles only when its run notices the
   * abort (a stream read, hash request or retry sleep returning), which may be several reads
   * later; until then its blocks must not stay joinable, or a later read would wait on a
   * doomed fetch and get its AbortError. Nobody waits on them now (every waiter is an owner),
   * so they leave `pending` at once and the next want of them starts a fresh fetch.
   */
  private cancel(fetch: Fetch): void {
    const reason = new DOMException('no reader left', 'AbortError')
    this.failRemaining(fetch, reason)
    fetch.controller.abort(reason)
  }

  private enqueue(fetch: Fetch, priority: number): void {
    const prefetch = priority === PREFETCH
    if (prefetch) this.prefetches++
    this.queue
      .add(() => this.run(fetch), { priority, id: fetch.id, signal: fetch.controller.signal })
      .then(
        () => this.settle(fetch, null),
        (e: unknown) => this.settle(fetch, e),
      )
      .finally(() => {
        if (!prefetch) return
        this.prefetches--
        for (const next of this.deferred) {
          if (this.prefetches >= this.prefetchSlots) break
          this.deferred.delete(next)
          this.enqueue(next, PREFETCH)
        }
      })
  }

  /** Someone waits on the fetch, or it made progress: it may retry for another deadlineMs. */
  private extend(fetch: Fetch): void {
    fetch.deadlineAt = Math.max(fetch.deadlineAt, Date.now() + this.settings.deadlineMs)
  }

  private settle(fetch: Fetch, error: unknown): void {
    if (error !== null) this.failRemaining(fetch, error)
    fetch.done = true
    if (this.foreground.delete(fetch)) this.lastForegroundAt = Date.now()
    fetch.owners.clear()
    this.troubleEnded(fetch, error, fetch.controller.signal.aborted)
  }

  /** `fetch` ended (error null: it succeeded): if it was retrying, that it recovered or failed is told. */
  private troubleEnded(fetch: Fetch, error: unknown, aborted: boolean): void {
    if (!this.retrying.delete(fetch)) return
    const t = fetch.trouble!
    if (error === null) this.events.recovered?.(fetch, t.tries, Date.now() - t.since)
    else if (!aborted) this.events.failed?.(fetch, error)
  }

  /** Counts a failed try of `fetch`, the first of a run reported; its trouble so far. */
  private troubled(fetch: Fetch, e: RetryEvent): Trouble {
    this.stats.retries++
    if (fetch.trouble) {
      fetch.trouble.tries++
      fetch.trouble.error = e.error
      return fetch.trouble
    }
    fetch.trouble = { since: Date.now(), tries: 1, error: e.error }
    this.retrying.add(fetch)
    this.events.retrying?.(fetch, e.error)
    return fetch.trouble
  }

  private deliver(file: RemoteFile, block: number, data: Block): void {
    const key = blockKey(file.cacheKey, block)
    this.sink(file, block, data)
    const p = this.pending.get(key)
    this.pending.delete(key)
    p?.resolve(data)
  }

  private failRemaining(fetch: Fetch, error: unknown, span?: Span): void {
    const { blockSize } = this.settings
    const first = span ? Math.floor(span.start / blockSize) : fetch.first
    const end = span ? Math.ceil(span.end / blockSize) : fetch.end
    for (let b = first; b < end; b++) {
      const key = blockKey(fetch.file.cacheKey, b)
      const p = this.pending.get(key)
      if (p?.fetch !== fetch) continue
      this.pending.delete(key)
      p.reject(error)
    }
  }

  /**
   * Fetches and verifies every piece of the fetch, retrying what failed (the one failure
   * policy: transient faults until the fetch's deadline, a definitive answer at once).
   * Pieces verified by an earlier try stay done; a try streams only the rest.
   */
  private async run(fetch: Fetch): Promise<void> {
    const { file } = fetch
    const { blockSize, pieceSize } = this.settings
    const start = fetch.first * blockSize
    const end = spanAt(fetch.end - 1, file.size, blockSize).end
    const pieces: PieceState[] = spansWithin(start, end, pieceSize).map((span) => ({ span, done: false, failure: null }))
    const signal = fetch.controller.signal
    for (const p of pieces) void this.expectedHash(fetch, p.span).catch(() => {})
    const verified = () => pieces.reduce((n, p) => n + (p.done ? 1 : 0), 0)
    try {
      await withRetry(async () => {
        for (const run of contiguousRuns(pieces.filter((p) => !p.done))) await streamRun(this.runDeps, fetch, run, (state, buffers, s) => this.verify(fetch, state, buffers, s))
        const failed = pieces.find((p) => !p.done)
        if (failed) throw failed.failure ?? new IntegrityError('piece not verified', '', '')
      }, {
        kind: 'download', policy: this.policy, signal,
        deadline: () => fetch.deadlineAt,
        progress: verified,
        onRetry: (e) => this.troubled(fetch, e),
      })
    } catch (e) {
      if (signal.aborted) throw signal.reason
      throw gaveUp(file, e, fetch.trouble)
    }
  }

  /**
   * Judges a received piece against its expected hash and hands its blocks on when they
   * match. Either way the fetch's hold on the piece's buffers ends here.
   */
  private async verify(fetch: Fetch, state: PieceState, buffers: PooledBuffer[], signal: AbortSignal): Promise<void> {
    const { file } = fetch
    const { blockSize } = this.settings
    const first = Math.floor(state.span.start / blockSize)
    const parts = buffers.map((memory, i) => ({ memory: memory.memory, length: spanAt(first + i, file.size, blockSize).end - (first + i) * blockSize }))
    let expected: string
    let actual: PieceHash
    try {
      ;[expected, actual] = await Promise.all([this.expectedHash(fetch, state.span), pieceHash(parts)])
    } catch (e) {
      // Could not learn a hash within the deadline: the piece is tried again like any fault.
      for (const b of buffers) this.buffers.drop(b)
      if (!signal.aborted) state.failure = asNetworkError(e)
      return
    }
    if (expected !== actual.md5) {
      for (const b of buffers) this.buffers.drop(b)
      this.stats.mismatches++
      // Either side may be the damaged one: the bytes and the hash are both asked again.
      this.hashes.forget(file, state.span)
      state.failure = new IntegrityError(`bytes ${state.span.start}-${state.span.end - 1} of ${file.fileName} do not match their hash`, expected, actual.md5)
      return
    }
    state.done = true
    state.failure = null
    this.extend(fetch)
    const blocks = buffers.map((buffer, i) => this.buffers.seal(buffer, parts[i]!.length))
    blocks.forEach((block, i) => {
      const sum = actual.sums[i]
      if (sum) noteBlockSum(block, sum)
      this.deliver(file, first + i, block)
    })
    // The fetch holds the blocks until the next turn of the event loop: every read waiting
    // for one holds it as its promise settles, before that. Then the caches and those reads
    // hold them, or nobody does and their buffers are free again.
    setImmediate(() => {
      for (const block of blocks) this.buffers.release(block)
    })
  }

  /**
   * Bytes of `span` fetched and verified on their own, not cached: what a random read
   * needs (a few KiB) instead of whole blocks (see span-read.ts); in the same queue as
   * every fetch, ahead of prefetches.
   */
  verifiedSpan(file: RemoteFile, span: Span, signal: AbortSignal): Promise<Buffer[]> {
    this.stats.spans++
    // Its trouble is told and shown as a fetch's: the span stands as a fetch of its blocks there.
    const { blockSize } = this.settings
    const asFetch = new Fetch(file, Math.floor(span.start / blockSize), Math.ceil(span.end / blockSize), () => {})
    this.foregroundBegins(asFetch)
    return readSpan({
      source: this.source, hashes: this.hashes, policy: this.policy, stats: this.stats, stallTimeoutMs: this.settings.stallTimeoutMs,
      deadlineMs: this.settings.deadlineMs, enqueue: (fn) => this.queue.add(fn, { priority: DEMAND, signal }),
      troubled: (e) => this.troubled(asFetch, e),
    }, file, span, signal).then(
      (parts) => {
        this.troubleEnded(asFetch, null, false)
        return parts
      },
      (e: unknown) => {
        this.troubleEnded(asFetch, e, signal.aborted)
        throw e
      },
    ).finally(() => {
      this.foreground.delete(asFetch)
      this.lastForegroundAt = Date.now()
    })
  }

  private foregroundBegins(work: object): void {
    this.foreground.add(work)
    this.lastForegroundAt = Date.now()
  }

  /** The piece's expected MD5, retried under the fetch's deadline; a failed try counts as the fetch's trouble. */
  private expectedHash(fetch: Fetch, span: Span): Promise<string> {
    return this.hashes.expected(fetch.file, span, {
      signal: fetch.controller.signal,
      deadline: () => fetch.deadlineAt,
      onRetry: (e) => this.troubled(fetch, e),
    })
  }
}
