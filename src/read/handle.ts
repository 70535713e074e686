// One open file's reads (ContentHandle), over what the read path shares among its files
// (OpenFile: the caches, the fetcher, the disk stream's buffers; content.ts). A read is
// served from verified bytes only: memory cache, then a fetch already under way, then the
// disk cache, then a new fetch sized by the handle's access pattern (a random read: its
// own verified span; the head of a file or an established run: whole blocks). Sequential
// handles prefetch ahead; a handle that closes or jumps away lets go of its fetches, and a
// fetch nobody holds any more is cancelled. While the service is known to be unreachable,
// a handle that has had no bytes yet fails at once (see Handle.answered).
import { spanAt } from '../base/chunk-grid.js'
import { AccessPattern } from './access-pattern.js'
import type { BlockBuffers } from './block-buffers.js'
import { sliceParts, type Bytes } from './bytes.js'
import type { DiskBlockCache } from './disk-cache.js'
import { DiskStream, type BlockPool } from './disk-stream.js'
import { DEMAND, PREFETCH, type BlockFetcher, type Fetch } from './fetcher.js'
import { alignedSpan, blocksOf, planFetch } from './geometry.js'
import { holdEach, holdInMemory, lendHeld } from './held-blocks.js'
import { linkLookahead } from './link-rate.js'
import { blockKey, type Block, type MemoryBlockCache } from './memory-cache.js'
import type { ReadOptions } from './options.js'
import type { ContentHandle, LentAhead, RangeSource, RemoteFile } from './source.js'

/** What a handle uses of the read path it belongs to (content.ts: ReadPath). */
export interface OpenFile {
  readonly options: ReadOptions
  readonly memory: MemoryBlockCache
  readonly fetcher: BlockFetcher
  readonly disk: DiskBlockCache | null
  readonly source: RangeSource
  /** Handles reading sequentially now: they share prefetchBytes. */
  readonly streaming: Set<object>
  readonly pool: BlockPool
  readonly buffers: BlockBuffers
  cached(file: RemoteFile, block: number): boolean
  present(file: RemoteFile, block: number): boolean
  loadFromDisk(file: RemoteFile, block: number): Promise<Block | undefined>
}

/** Blocks of the disk cache a sequential reader has loaded ahead of it (by its disk stream). */
const DISK_LOAD_AHEAD_BLOCKS = 8

/** Why work for a read that has ended stops (one object: a DOMException per read cost a stack trace each). */
const READ_ENDED = new DOMException('the read ended', 'AbortError')

/** One read's claim on the fetches it waits for; `over` once the read has answered. */
interface ReadToken {
  over: boolean
}

/**
 * Bytes lent past a run's furthest read, in blocks, for a reader asking less than a block at a
 * time: enough for the kernel's next window of readahead to find its reads lent up to a 1 MiB
 * readahead on libfuse 2 (its default is the kernel's 128 KiB: src/config/settings.ts,
 * READ_AHEAD_KB_BY_LIBRARY). A larger readahead sends more of its reads to JS, and is answered
 * all the same.
 */
const LENT_AHEAD_BLOCKS = 2

export class Handle implements ContentHandle {
  private readonly pattern: AccessPattern
  /** Fetches this handle started or joined, kept alive for it until it closes or jumps away. */
  private readonly owned = new Set<Fetch>()
  private closed = false
  /**
   * A read of this handle has been answered: a reader under way, whose reads ride out an
   * outage until their deadline. A handle that has had nothing yet is a cold read, which
   * fails at once while the service is known to be unreachable.
   */
  private answered = false
  /** Blocks before this one the current run's prefetch has made sure of (cached or started). */
  private prefetchedTo = 0
  /** Likewise for blocks loaded ahead from the disk cache. */
  private diskLoadedTo = 0
  /** Blocks read straight from the disk cache, made at the first such read. */
  private stream: DiskStream | null = null

  constructor(
    private readonly path: OpenFile,
    private readonly file: RemoteFile,
  ) {
    this.pattern = new AccessPattern(path.options)
  }

  /**
   * Answered at once (not through a promise) when the bytes are at hand: in memory for a
   * sequential reader (inMemory), or with the disk stream (DiskStream.read).
   */
  read(position: number, length: number): Bytes | Promise<Bytes> {
    const { file } = this
    const { blockSize } = this.path.options
    const { first, end } = blocksOf(position, length, file.size, blockSize)
    if (end <= first) return Buffer.alloc(0)
    const sequential = this.pattern.observe(position, length)
    if (!sequential) {
      this.letGo((f) => f.end <= first || f.first >= end)
      this.prefetchedTo = 0
      this.diskLoadedTo = 0
      this.path.streaming.delete(this)
      this.stream?.reset()
    }
    const stop = Math.min(file.size, position + length)
    if (sequential) {
      const atHand = this.inMemory(first, end, position, stop)
      if (atHand) return atHand
    }
    if (!sequential || !this.onlyOnDisk(first, end)) return this.fetched(first, end, position, stop, length, sequential)
    const lent = this.diskStream().read(first, end, position, stop)
    if (!(lent instanceof Promise)) return lent ? this.streamedRead(lent) : this.fetched(first, end, position, stop, length, sequential)
    return lent.then((l) => (l ? this.streamedRead(l) : this.fetched(first, end, position, stop, length, sequential)))
  }

  /**
   * What follows the furthest read of this handle's run, lent, after a read of `length` bytes
   * of the run was answered; undefined when the handle has no run under way or nothing of it
   * is at hand. Nothing is fetched or recorded: the FUSE adapter lends the bytes to libfuse's
   * threads, which answer the reader's next reads from them without asking here
   * (src/fuse/read-windows.ts), and the run moves on at the next read that does. Counted as
   * read at once, they put the run's end past the furthest read, and a read of the kernel's
   * readahead sent before them and answered after fell behind the slack: a jump, whose
   * cancelled prefetches were fetched again (6–16% of a cold read's bytes).
   * - The rest of the block the furthest read ended in, when it is in memory or the block
   *   the disk stream holds.
   * - For a reader asking less than a block at a time (libfuse 2's 128 KiB), the blocks up
   *   to LENT_AHEAD_BLOCKS past the furthest read as far as they are in memory, the last but
   *   for its last `length` bytes, whose read reaches JS and lends the next ones. The kernel's
   *   readahead sends a window's reads together, in any order, and the next window as soon as
   *   the first read of one is answered: lent from the read each ended at, only the furthest
   *   lent, and lent one block ahead, the next window was under way before its block was
   *   lent (1,255 and ~4,200 of a cold `cat`'s 8,192 reads per GiB answered by libfuse's
   *   threads at a 1 MiB readahead).
   * libfuse 3's 1 MiB requests are whole blocks, and lending them the next block measured no
   * gain (cold, O_DIRECT: 4.1–5.1 CPU-s per GiB with, 4.4–4.8 without, four runs each).
   */
  lendAhead(length: number): LentAhead[] | undefined {
    const { file } = this
    const { blockSize } = this.path.options
    const position = this.pattern.position
    if (this.closed || !this.pattern.established || position >= file.size) return undefined
    const out: LentAhead[] = []
    const first = Math.floor(position / blockSize)
    // The blocks of [position, reach), each lent as far as it is at hand, the last but for the reader's last `length` bytes.
    const restOfBlock = position % blockSize === 0 ? position : (first + 1) * blockSize
    const reach = Math.min(file.size, length < blockSize ? position + LENT_AHEAD_BLOCKS * blockSize : restOfBlock)
    for (let block = first; block * blockSize < reach; block++) {
      const span = spanAt(block, file.size, blockSize)
      const from = Math.max(span.start, position)
      const to = span.end < reach || span.end === file.size || block === first ? span.end : span.end - length
      if (to <= from) break
      const bytes = block === first ? this.stream?.lendHeld(block, from - span.start, to - span.start) ?? this.lendInMemory(block, from, to) : this.lendInMemory(block, from, to)
      if (!bytes) break
      out.push({ start: from, bytes })
    }
    return out.length > 0 ? out : undefined
  }

  /** The stream of this handle's blocks from the disk cache (made at its first use). */
  private diskStream(): DiskStream {
    const { path, file } = this
    return (this.stream ??= new DiskStream(path.disk!, path.pool, file.cacheKey, file.size, path.options.blockSize, DISK_LOAD_AHEAD_BLOCKS))
  }

  /** Bytes [position, stop) of `block`, lent, when it is in memory. */
  private lendInMemory(block: number, position: number, stop: number): Buffer[] | undefined {
    const held = this.holdInMemory(block, block + 1)
    return held && this.lend(held, block, position, stop)
  }

  /**
   * A sequential read's bytes lent at once when every block is in memory, or undefined.
   * libfuse 2 asks 128 KiB at a time, so on a cold read seven of the eight reads of a block
   * find it in memory; through fetched, each paid a promise chain and a deadline timer.
   */
  private inMemory(first: number, end: number, position: number, stop: number): Buffer[] | undefined {
    const blocks = this.holdInMemory(first, end)
    if (!blocks) return undefined
    this.prefetch()
    this.answered = true
    return this.lend(blocks, first, position, stop)
  }

  private holdInMemory(first: number, end: number): Block[] | undefined {
    return holdInMemory(this.path.memory, this.path.buffers, this.file.cacheKey, first, end)
  }

  private lend(blocks: Block[], first: number, position: number, stop: number): Buffer[] {
    return lendHeld(this.path.buffers, blocks, this.path.options.blockSize, first, position, stop)
  }

  private streamedRead(lent: Buffer[]): Buffer[] {
    this.prefetch()
    this.answered = true
    return lent
  }

  /** A read the disk stream did not answer: from memory, fetches under way, disk loads or new fetches. */
  private async fetched(first: number, end: number, position: number, stop: number, length: number, sequential: boolean): Promise<Bytes> {
    const { file } = this
    const { blockSize } = this.path.options
    // Concurrent reads of one handle each hold what they wait for, so a jump by one
    // read never cancels the fetch another read still waits on.
    const token: ReadToken = { over: false }
    const touched = new Set<Fetch>()
    const reach = this.answered ? undefined : this.path.source.reachability
    if (reach && !reach.online && !this.allCached(first, end)) throw reach.offlineError()
    let stopWatching = () => {}
    // A read that no established run makes (a jump, a small first peek at a file's head, or
    // a few reads that happen to fall close together) and that nothing holds yet fetches
    // only its own few KiB, verified on their own: a type sniffer's or thumbnailer's first
    // read of a cold file waited on a whole head block (1 MiB, ~80 ms through a 12.5 MB/s
    // link) for the 4 KiB it asked. In the head, a read continuing a run, or one of at least
    // blockReadMin (a reader going through the file: `cat` after a peek starts past the
    // pages the peek left cached), goes by whole blocks, which the caches keep, and the
    // run's fetches grow from there; so do established runs. A large read at a block's
    // start, or one right after the last, that stops inside its last block goes by whole
    // blocks too (see blockReadMin): the rest of a read the kernel cut up is then served
    // from that fetch. One that reaches its block's end leaves nothing there to serve and
    // keeps its own span.
    const { headSize, blockReadMin } = this.path.options
    const cutUp = length >= blockReadMin && (sequential || position % blockSize === 0) && stop < Math.min(file.size, end * blockSize)
    const random = !this.pattern.established && !cutUp && (position >= headSize || this.headPeek(position, stop, length, sequential)) && !this.allPresent(first, end)
    // Only a random read has a fetch of its own to stop; the rest share fetches by ownership.
    const gone = random ? new AbortController() : null
    try {
      let work: Promise<Bytes>
      if (gone) {
        const span = alignedSpan(position, stop, file.size, this.path.options.randomReadAlign)
        work = this.path.fetcher.verifiedSpan(file, span, gone.signal).then((parts) => sliceParts(parts, position - span.start, stop - span.start))
      } else {
        const held = this.held(first, end, token, touched, !sequential)
        if (sequential) this.prefetch()
        work = held.then((blocks) => this.lend(blocks, first, position, stop))
      }
      if (reach) {
        // The service found unreachable while this cold read waits: it fails now, not at its deadline.
        const offline = new Promise<never>((_, reject) => {
          stopWatching = reach.onChange((state) => { if (!state.online) reject(reach.offlineError()) })
        })
        work = Promise.race([work, offline])
      }
      const bytes = await work
      this.answered = true
      return bytes
    } finally {
      // A random read nobody waits for any more (failed, offline) stops its retries.
      gone?.abort(READ_ENDED)
      stopWatching()
      token.over = true
      for (const f of touched) f.release(token)
    }
  }

  /**
   * A read in the file's head that starts no run and is small (a type sniffer's or a
   * thumbnailer's peek): worth its own span, not the head's blocks. Not when the file is no
   * larger than blockReadMin (fetched whole, it is verified by the file's MD5 without a hash
   * call, in one request) nor when the read is whole blocks already (its span would be
   * those blocks, kept uncached).
   */
  private headPeek(position: number, stop: number, length: number, sequential: boolean): boolean {
    const { blockSize, blockReadMin } = this.path.options
    if (sequential || length >= blockReadMin || this.file.size <= blockReadMin) return false
    return position % blockSize !== 0 || (stop !== this.file.size && stop % blockSize !== 0)
  }

  /** Every block in the disk cache only (not in memory, not being fetched). */
  private onlyOnDisk(first: number, end: number): boolean {
    const { path, file } = this
    if (!path.disk) return false
    for (let b = first; b < end; b++) {
      if (path.memory.has(blockKey(file.cacheKey, b)) || path.fetcher.inFlight(file, b) || !path.disk.has(file.cacheKey, b)) return false
    }
    return true
  }

  /** Every block cached or being fetched already. */
  private allPresent(first: number, end: number): boolean {
    for (let b = first; b < end; b++) if (!this.path.present(this.file, b)) return false
    return true
  }

  private allCached(first: number, end: number): boolean {
    for (let b = first; b < end; b++) if (!this.path.cached(this.file, b)) return false
    return true
  }

  close(): void {
    this.closed = true
    this.path.streaming.delete(this)
    this.stream?.reset()
    this.letGo(() => true)
  }

  /** Blocks [first, end), each held for this read as its promise settles (held-blocks.ts). */
  private held(first: number, end: number, token: ReadToken, touched: Set<Fetch>, touch: boolean): Promise<Block[]> {
    return holdEach(this.path.buffers, end - first, () => this.obtain(first, end, token, touched, touch))
  }

  /**
   * One promise per block of [first, end), starting fetches for what nobody has. A block a
   * sequential reader (`touch` false) gets is marked read in the memory cache, also when it
   * came from a fetch or the disk (memory-cache.ts: it is among the first to go).
   */
  private obtain(first: number, end: number, token: ReadToken, touched: Set<Fetch>, touch: boolean): Promise<Block>[] {
    const { path, file } = this
    const parts: Promise<Block>[] = []
    for (let b = first; b < end; b++) {
      const key = blockKey(file.cacheKey, b)
      const cached = path.memory.get(key, touch)
      if (cached) {
        parts.push(Promise.resolve(cached))
        continue
      }
      parts.push(touch ? this.obtainAbsent(b, end, token, touched) : this.obtainAbsent(b, end, token, touched).then((block) => {
        path.memory.get(key, false)
        return block
      }))
    }
    return parts
  }

  /** Block `b` (of a read of blocks up to `end`), not in memory: from a fetch under way, the disk cache or a new fetch. */
  private obtainAbsent(b: number, end: number, token: ReadToken, touched: Set<Fetch>): Promise<Block> {
    const { path, file } = this
    const joined = this.join(b, token, touched)
    if (joined) return joined
    if (path.disk?.has(file.cacheKey, b)) {
      // A read already over (another block failed) must not start a fetch its token
      // would own after it was released: nobody would ever cancel it.
      return path.loadFromDisk(file, b).then((data) => data ??
        (token.over ? Promise.reject(READ_ENDED) : this.fetchNow(b, 1, token, touched)))
    }
    // Enough for this read at least; more when the run has earned it. Until it is
    // established a run's fetches stay head-sized: the pieces of one large read the
    // kernel cut up want their blocks, not a window doubled by each block fetched.
    const window = this.pattern.established ? this.pattern.fetchSize : path.options.headSize
    const want = Math.max(window, (end - b) * path.options.blockSize)
    return this.fetchNow(b, want, token, touched)
  }

  private join(block: number, token: object, touched: Set<Fetch>): Promise<Block> | undefined {
    const joined = this.path.fetcher.join(this.file, block, token)
    if (!joined) return undefined
    touched.add(joined.fetch)
    this.adopt(joined.fetch)
    return joined.promise
  }

  /** Starts a demand fetch at `block` (unless one started meanwhile) and waits for that block. */
  private fetchNow(block: number, want: number, token: object, touched: Set<Fetch>): Promise<Block> {
    const { path, file } = this
    const cached = path.memory.get(blockKey(file.cacheKey, block))
    if (cached) return Promise.resolve(cached)
    const joined = this.join(block, token, touched)
    if (joined) return joined
    const plan = planFetch(block, want, file.size, path.options, (b) => path.present(file, b))
    const fetch = path.fetcher.start(file, plan.first, plan.end, token, DEMAND)
    this.pattern.fetched()
    touched.add(fetch)
    this.adopt(fetch)
    return path.fetcher.join(file, block, token)!.promise
  }

  /** Keeps bytes past the reader fetched or in flight: what its run has earned, its share of prefetchBytes, what the link is quick enough for (link-rate.ts). */
  private prefetch(): void {
    const { path, file } = this
    const { blockSize } = path.options
    if (this.pattern.lookahead <= 0 || this.closed) return
    path.streaming.add(this)
    const readers = path.streaming.size
    const link = linkLookahead(path.fetcher.linkRate.bytesPerSecond, readers, path.options)
    const ahead = Math.min(this.pattern.lookahead, Math.floor(path.options.prefetchBytes / readers), link)
    // Blocks below prefetchedTo were seen to already: looking at the whole window again on
    // every 128 KiB read was ~800k cache look-ups per GiB read, most of a re-read's CPU.
    // From there, not from the furthest read, when a read of the run came past it: the
    // kernel's readahead sends reads far ahead of the rest (at a 1 GiB readahead, one 170 MiB
    // past what was fetched), and the blocks between, left to the reads that came for them
    // in any order, went as a fetch each (26 GETs and 209 hash calls for 1 GiB became 29–34
    // and 213–217, and took longer).
    const here = Math.floor(this.pattern.position / blockSize)
    const from = this.prefetchedTo > 0 ? this.prefetchedTo : here
    const to = Math.min(Math.ceil((this.pattern.position + ahead) / blockSize), Math.ceil(file.size / blockSize))
    if (to > this.prefetchedTo) this.prefetchedTo = to
    // Blocks only on disk are loaded a few ahead too (a re-read waited on one disk read per
    // block), by the disk stream that lends them. Loaded into memory instead, each found there
    // kept the next read off the stream, which loaded the next into memory again: a re-read
    // whose first block was not on disk went through memory to its end (a copy out of a
    // staging buffer and a fresh buffer for the collector per block), at up to three times the CPU.
    const diskTo = Math.min(to, here + DISK_LOAD_AHEAD_BLOCKS)
    for (let b = Math.max(here, this.diskLoadedTo); b < diskTo; b++) if (this.onlyOnDisk(b, b + 1)) this.diskStream().loadAhead(b)
    if (diskTo > this.diskLoadedTo) this.diskLoadedTo = diskTo
    for (let b = from; b < to; b++) {
      if (path.present(file, b)) continue
      const plan = planFetch(b, this.pattern.fetchSize, file.size, path.options, (x) => path.present(file, x))
      this.adopt(path.fetcher.start(file, plan.first, plan.end, this, PREFETCH))
      this.pattern.fetched()
      b = plan.end - 1
    }
  }

  private adopt(fetch: Fetch): void {
    if (this.closed || fetch.done) return
    fetch.own(this)
    this.owned.add(fetch)
  }

  private letGo(which: (f: Fetch) => boolean): void {
    for (const f of this.owned) {
      if (f.done || which(f)) {
        this.owned.delete(f)
        f.release(this)
      }
    }
  }
}
