// Fetching and verifying blocks. One Fetch = one run of blocks wanted from the
// service; it streams the run with a single Range request, hashes each piece as its
// bytes arrive (one MD5 update per network buffer, so the JS thread never hashes a
// whole chunk at once), compares each piece with its GetRangeHash (asked for in
// parallel) or the file's md5 when the piece is the whole file, and hands out a piece's
// blocks the moment it is verified. Bytes that do not match are fetched again; no
// unverified byte ever leaves this module.
//
// All fetches of the mount share one queue (at most maxConcurrentFetches at once);
// concurrent wants of the same block share one fetch. A fetch lives while some handle
// owns it: when its last owner lets go (close, seek away) it is cancelled, queued or not.
import { createHash, type Hash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { LRUCache } from 'lru-cache'
import PQueue from 'p-queue'
import { IntegrityError, NetworkError } from '../api/errors.js'
import { abortable, asNetworkError, contiguousRuns, retryable } from './fetch-util.js'
import { blockSpan, piecesOf, type Span } from './geometry.js'
import { blockKey } from './memory-cache.js'
import type { ReadOptions } from './options.js'
import type { RangeSource, RemoteFile } from './source.js'

/** Priorities in the shared queue: a read someone waits for goes before a prefetch. */
export const DEMAND = 1
export const PREFETCH = 0

type Settings = Pick<
  ReadOptions,
  'pieceSize' | 'blockSize' | 'maxConcurrentFetches' | 'maxConcurrentHashes' | 'maxTries' | 'retryBaseDelayMs' | 'stallTimeoutMs' | 'hashTimeoutMs'
>

/** Where verified blocks go (the caches), called before any waiter is resolved. */
export type VerifiedSink = (file: RemoteFile, block: number, data: Buffer) => void

interface PendingBlock {
  promise: Promise<Buffer>
  resolve: (b: Buffer) => void
  reject: (e: unknown) => void
  fetch: Fetch
}

interface PieceState {
  span: Span
  /** Mismatches so far. */
  mismatches: number
  done: boolean
}

let nextFetchId = 0

export class Fetch {
  readonly id = `fetch-${++nextFetchId}`
  readonly controller = new AbortController()
  readonly owners = new Set<object>()
  done = false

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
  bytesReceived: number
  mismatches: number
  retries: number
}

export class BlockFetcher {
  private readonly queue: PQueue
  private readonly hashQueue: PQueue
  private readonly pending = new Map<string, PendingBlock>()
  /** Prefetches waiting for a slot, oldest first. */
  private readonly deferred = new Set<Fetch>()
  private prefetches = 0
  private readonly prefetchSlots: number
  private readonly hashRequests = new Map<string, Promise<string>>()
  /** Expected piece hashes: immutable for a cacheKey, so worth keeping across fetches. */
  private readonly hashes = new LRUCache<string, string>({ max: 20_000 })
  readonly stats: FetchStats = { fetches: 0, bytesReceived: 0, mismatches: 0, retries: 0 }

  constructor(
    private readonly source: RangeSource,
    private readonly settings: Settings,
    private readonly sink: VerifiedSink,
  ) {
    this.queue = new PQueue({ concurrency: settings.maxConcurrentFetches })
    this.prefetchSlots = Math.max(1, settings.maxConcurrentFetches - 1)
    this.hashQueue = new PQueue({ concurrency: settings.maxConcurrentHashes })
  }

  /** True when the block is being fetched. */
  inFlight(file: RemoteFile, block: number): boolean {
    return this.pending.has(blockKey(file.cacheKey, block))
  }

  /**
   * The block's verified bytes if a fetch of it is under way, with `owner` added to that
   * fetch's owners (a prefetch someone now waits for also moves up the queue).
   */
  join(file: RemoteFile, block: number, owner: object): { promise: Promise<Buffer>; fetch: Fetch } | undefined {
    const p = this.pending.get(blockKey(file.cacheKey, block))
    if (!p) return undefined
    p.fetch.own(owner)
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
    for (let b = first; b < end; b++) {
      let resolve!: (b: Buffer) => void
      let reject!: (e: unknown) => void
      const promise = new Promise<Buffer>((res, rej) => {
        resolve = res
        reject = rej
      })
      // A prefetched block may fail with nobody waiting; that is not an unhandled error.
      promise.catch(() => {})
      this.pending.set(blockKey(file.cacheKey, b), { promise, resolve, reject, fetch })
    }
    this.stats.fetches++
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

  private settle(fetch: Fetch, error: unknown): void {
    if (error !== null) this.failRemaining(fetch, error)
    fetch.done = true
    fetch.owners.clear()
  }

  private deliver(file: RemoteFile, block: number, data: Buffer): void {
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

  private async run(fetch: Fetch): Promise<void> {
    const { file } = fetch
    const { blockSize, pieceSize, maxTries } = this.settings
    const start = fetch.first * blockSize
    const end = blockSpan(fetch.end - 1, file.size, blockSize).end
    const pieces: PieceState[] = piecesOf(start, end, pieceSize).map((span) => ({ span, mismatches: 0, done: false }))
    const signal = fetch.controller.signal
    for (const p of pieces) void this.expectedHash(file, p.span, signal).catch(() => {})
    let failuresWithoutProgress = 0
    let lastError: unknown = null
    for (;;) {
      const remaining = pieces.filter((p) => !p.done)
      if (remaining.length === 0) return
      signal.throwIfAborted()
      if (failuresWithoutProgress > 0 || remaining.some((p) => p.mismatches > 0)) {
        this.stats.retries++
        const attempt = Math.max(failuresWithoutProgress, ...remaining.map((p) => p.mismatches))
        await sleep(this.settings.retryBaseDelayMs * 2 ** (attempt - 1), undefined, { signal })
      }
      const before = pieces.filter((p) => p.done).length
      let failed = false
      for (const run of contiguousRuns(remaining)) {
        try {
          await this.streamRun(fetch, run)
        } catch (e) {
          if (signal.aborted) throw signal.reason
          if (!retryable(e)) throw e
          lastError = e
          failed = true
          break
        }
      }
      for (const p of pieces) {
        if (!p.done && p.mismatches >= maxTries) {
          p.done = true
          this.failRemaining(fetch, lastMismatch.get(p) ?? new IntegrityError('piece does not match its hash', '', ''), p.span)
        }
      }
      const progressed = pieces.filter((p) => p.done).length > before
      failuresWithoutProgress = failed ? (progressed ? 1 : failuresWithoutProgress + 1) : 0
      if (failuresWithoutProgress >= maxTries) throw asNetworkError(lastError)
    }
  }

  /**
   * Streams the pieces of one contiguous run with one Range request, verifying each as
   * it completes. Resolves when every piece of the run is received and judged (verified,
   * or counted as a mismatch); rejects on a network failure or stall.
   */
  private async streamRun(fetch: Fetch, run: PieceState[]): Promise<void> {
    const { file } = fetch
    const { blockSize, stallTimeoutMs } = this.settings
    const attempt = new AbortController()
    const signal = AbortSignal.any([fetch.controller.signal, attempt.signal])
    let timer: NodeJS.Timeout | undefined
    const arm = (): void => {
      clearTimeout(timer)
      timer = setTimeout(() => attempt.abort(new NetworkError(`no data for ${stallTimeoutMs} ms`, 'ETIMEDOUT')), stallTimeoutMs)
    }
    const runStart = run[0]!.span.start
    const runEnd = run[run.length - 1]!.span.end
    const verifications: Promise<void>[] = []
    let index = 0
    let piece: { state: PieceState; hash: Hash; blocks: Buffer[]; filled: number } | null = null
    const open = (state: PieceState) => {
      const blocks: Buffer[] = []
      for (let at = state.span.start; at < state.span.end; at += blockSize) {
        blocks.push(Buffer.allocUnsafe(Math.min(blockSize, state.span.end - at)))
      }
      return { state, hash: createHash('md5'), blocks, filled: 0 }
    }
    arm()
    const iterator = this.source.streamRange(file, runStart, runEnd, signal)[Symbol.asyncIterator]()
    try {
      let at = runStart
      while (at < runEnd) {
        const next = await abortable(iterator.next(), signal)
        arm()
        if (next.done) throw new NetworkError(`range ended at ${at} of ${runEnd}`, 'ECONNRESET')
        let data: Buffer = next.value
        this.stats.bytesReceived += data.length
        if (at + data.length > runEnd) throw new NetworkError('range longer than asked', 'EPROTO')
        while (data.length > 0) {
          piece ??= open(run[index]!)
          const span = piece.state.span
          const take = Math.min(data.length, span.end - span.start - piece.filled)
          const part = data.subarray(0, take)
          piece.hash.update(part)
          let offset = piece.filled
          let copied = 0
          while (copied < take) {
            const block = piece.blocks[Math.floor(offset / blockSize)]!
            const into = offset % blockSize
            const n = part.copy(block, into, copied, Math.min(take, copied + block.length - into))
            copied += n
            offset += n
          }
          piece.filled += take
          at += take
          data = data.subarray(take)
          if (piece.filled === span.end - span.start) {
            verifications.push(this.verify(fetch, piece.state, piece.hash.digest('hex'), piece.blocks, signal))
            piece = null
            index++
          }
        }
      }
    } catch (e) {
      iterator.return?.().catch(() => {})
      throw e
    } finally {
      clearTimeout(timer)
      // Pieces received before a failure are still judged; their outcome stands.
      await Promise.allSettled(verifications)
    }
  }

  private async verify(fetch: Fetch, state: PieceState, actual: string, blocks: Buffer[], signal: AbortSignal): Promise<void> {
    const { file } = fetch
    let expected: string
    try {
      expected = await this.expectedHash(file, state.span, signal)
    } catch (e) {
      // Could not learn the hash: the piece is retried like a network failure would be.
      if (signal.aborted) return
      state.mismatches++
      lastMismatch.set(state, asNetworkError(e))
      return
    }
    if (expected !== actual) {
      this.stats.mismatches++
      state.mismatches++
      this.hashes.delete(hashKey(file, state.span))
      lastMismatch.set(state, new IntegrityError(`bytes ${state.span.start}-${state.span.end - 1} of ${file.fileName} do not match their hash`, expected, actual))
      return
    }
    state.done = true
    const first = Math.floor(state.span.start / this.settings.blockSize)
    blocks.forEach((data, i) => this.deliver(file, first + i, data))
  }

  private expectedHash(file: RemoteFile, span: Span, signal: AbortSignal): Promise<string> {
    if (span.start === 0 && span.end === file.size && file.md5) return Promise.resolve(file.md5.toLowerCase())
    const key = hashKey(file, span)
    const known = this.hashes.get(key)
    if (known !== undefined) return Promise.resolve(known)
    const asked = this.hashRequests.get(key)
    if (asked) return asked
    const timeout = AbortSignal.any([signal, AbortSignal.timeout(this.settings.hashTimeoutMs)])
    const request = this.hashQueue
      .add(() => abortable(this.source.rangeHash(file, span.start, span.end - span.start, timeout), timeout), { signal: timeout })
      .then((h) => {
        const hex = h.trim().toLowerCase()
        this.hashes.set(key, hex)
        return hex
      })
      .finally(() => this.hashRequests.delete(key))
    this.hashRequests.set(key, request)
    return request
  }
}

// The last reason each piece failed verification, for the error a reader finally gets.
const lastMismatch = new WeakMap<PieceState, Error>()

function hashKey(file: RemoteFile, span: Span): string {
  return `${file.cacheKey}\u0000${span.start}\u0000${span.end}`
}
