// Pinning files on the read path's caches (CachePinning, source.ts): the room a pinned
// file sets aside (pinned-files.ts), and fetching what it lacks in the background.
//
// A background fetch goes through the same fetcher, hashes and caches as reads, below all
// of them: it waits until no reader's fetch is under way or started in the last moment,
// asks one piece-sized run at a time (across all files being fetched), at the lowest
// priority, so a reader that comes meanwhile waits at most for that run. Its blocks are
// marked read in the memory cache (first to go), so they do not push readers' blocks out.
// A run's blocks are written while the next run is fetched, and a pass over the file ends
// once all are on disk: blocks the disk cache skipped (a full write backlog) are looked for
// again in the next pass, from memory when still there. Blocks already on disk
// are never asked again, so a fetch cut short (an abort, a remount, a kill) goes on where it
// stopped: a kill can only leave the record being appended cut short, and the cache's
// rebuild drops it.
import { setTimeout as sleep } from 'node:timers/promises'
import { DeadlineError, IntegrityError, NetworkError, ServiceError } from '../api/errors.js'
import { classify } from '../api/failure.js'
import { spanCount } from '../base/chunk-grid.js'
import { formatBytes } from '../base/format-bytes.js'
import { stateCount } from '../base/state-file.js'
import type { BlockBuffers } from './block-buffers.js'
import { recordBytes } from './cache-records.js'
import { MAX_WRITE_BACKLOG, type DiskBlockCache } from './disk-cache.js'
import { abortable } from './fetch-util.js'
import { BACKGROUND, type BlockFetcher, type Fetch } from './fetcher.js'
import { reservedBytes, roomShortfall } from './pinned-files.js'
import { blockKey, type Block, type MemoryBlockCache } from './memory-cache.js'
import type { ReadOptions } from './options.js'
import { NoRoomError, type CachePinning, type RangeSource, type RemoteFile } from './source.js'

/** A reader's fetch that started or ended this recently (ms) still holds background fetches back. */
const QUIET_MS = 500
/** How often a waiting background fetch looks again whether it may go, ms. */
const LOOK_MS = 50
/** After a transient fault outlasted the deadline, ms before trying again (or until the service is found reachable again). */
const PAUSE_MS = 5_000
/** At most this long (ms) an aborted run waits for its fetches to stop. */
const SETTLE_MS = 10_000
/**
 * Runs in a row that got none of their blocks onto disk (a disk full or failing), or passes
 * over the file that got none there with no fault to explain it, before fetchAll gives up:
 * fetching on would only fetch the file again and again for nothing.
 */
const FRUITLESS = 3

/** What pinning files uses of the read path (content.ts: ReadPath). */
export interface PinningHost {
  readonly options: ReadOptions
  readonly memory: MemoryBlockCache
  readonly fetcher: BlockFetcher
  readonly disk: DiskBlockCache | null
  readonly source: RangeSource
  readonly buffers: BlockBuffers
  /** Why the disk cache could not be opened, when it could not. */
  readonly diskCacheError: unknown
  /** Hands a verified block to the disk cache; the write (settled once on disk or given up). */
  storeOnDisk(file: RemoteFile, block: number, data: Block): Promise<void>
  /** The write of a block handed to the disk cache, while under way. */
  diskWrite(file: RemoteFile, block: number): Promise<void> | undefined
}

export class DiskPinning implements CachePinning {
  /** Pins and unpins, one at a time: each judges the room the ones before left. */
  private changes: Promise<unknown> = Promise.resolve()
  /** Background runs, one at a time across all files. */
  private turn: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly path: PinningHost,
    /** Bytes the cache may still take from its disk; absent: only the budget counts. */
    private readonly freeSpace?: () => Promise<number>,
  ) {}

  cachedBytes(file: RemoteFile): number {
    const { disk } = this.path
    return disk ? disk.pinned.verifiedBytes(disk.fileId(file.cacheKey)) : 0
  }

  isPinned(file: RemoteFile): boolean {
    const { disk } = this.path
    return disk !== null && disk.pinned.has(disk.fileId(file.cacheKey))
  }

  cacheUse(): { pinnedBytes: number; otherBytes: number; budgetBytes: number } {
    const { disk } = this.path
    if (!disk) return { pinnedBytes: 0, otherBytes: 0, budgetBytes: 0 }
    return { pinnedBytes: disk.pinned.reservedBytes, otherBytes: disk.bytes - disk.pinned.pinnedStoredBytes, budgetBytes: disk.maxBytes }
  }

  pin(files: readonly RemoteFile[]): Promise<void> {
    return this.change(async (disk) => {
      const { pinned } = disk
      const entries = new Map<string, number>()
      for (const f of files) {
        const id = disk.fileId(f.cacheKey)
        if (!pinned.has(id)) entries.set(id, reservedBytes(f.size, this.path.options.blockSize))
      }
      if (entries.size === 0) return
      const adding = { reservedBytes: 0, storedBytes: 0 }
      for (const [id, reserved] of entries) {
        adding.reservedBytes += reserved
        adding.storedBytes += pinned.storedBytes(id)
      }
      // Free space that cannot be learnt leaves the budget alone to judge by.
      const freeBytes = this.freeSpace ? await this.freeSpace().catch(() => null) : null
      const short = roomShortfall({
        budgetBytes: disk.maxBytes, pinnedBytes: pinned.reservedBytes, pinnedStoredBytes: pinned.pinnedStoredBytes,
        otherBytes: disk.bytes - pinned.pinnedStoredBytes, freeBytes,
      }, adding)
      if (short) throw new NoRoomError(short.message, short.needed)
      await pinned.pin([...entries].map(([id, reserved]) => ({ id, reserved })))
      // Other files may now take less: what they hold past it goes at once, not at the next write.
      await Promise.all(disk.evict())
    }, files)
  }

  unpin(files: readonly RemoteFile[]): Promise<void> {
    const { disk } = this.path
    if (!disk) return Promise.resolve()
    return this.change(async () => {
      await disk.pinned.unpin(files.map((f) => disk.fileId(f.cacheKey)))
      await Promise.all(disk.evict())
    }, files)
  }

  pinOnly(files: readonly RemoteFile[]): Promise<void> {
    const { disk } = this.path
    if (!disk) return Promise.resolve()
    return this.change(async () => {
      const wanted = new Set(files.map((f) => disk.fileId(f.cacheKey)))
      await disk.pinned.unpin(disk.pinned.ids().filter((id) => !wanted.has(id)))
      await Promise.all(disk.evict())
    }, files)
  }

  async free(file: RemoteFile): Promise<number> {
    const { disk } = this.path
    if (!disk || this.isPinned(file)) return 0
    const id = disk.fileId(file.cacheKey)
    const before = disk.pinned.storedBytes(id)
    // A segment being read or written is left until that is over (a few tries apart).
    for (let tries = 0; tries < 100 && !this.isPinned(file); tries++) {
      const { unlinks, held } = disk.dropFile(file.cacheKey)
      await Promise.all(unlinks)
      if (!held) break
      await sleep(LOOK_MS)
    }
    return Math.max(0, before - disk.pinned.storedBytes(id))
  }

  async fetchAll(file: RemoteFile, options: { signal: AbortSignal; onProgress?: (bytesOnDisk: number) => void }): Promise<void> {
    const { signal, onProgress } = options
    const { disk } = this.path
    if (!disk) throw this.noDiskCache(file.size)
    signal.throwIfAborted()
    // Blocks are counted from the size: one that is not a whole number (a damaged pins file)
    // would make a pass that finds nothing missing, or never ends.
    if (stateCount(file.size) === null) throw new Error('its saved size is not a whole number of bytes')
    const { blockSize, pieceSize } = this.path.options
    const blocks = spanCount(file.size, blockSize)
    const runBlocks = Math.max(1, Math.floor(pieceSize / blockSize))
    const report = () => onProgress?.(this.cachedBytes(file))
    const unwritable = () => new Error(`${file.fileName}: its blocks could not be written to the disk cache`)
    /** Runs in a row whose blocks all failed to reach the disk. */
    let lost = 0
    for (let fruitless = 0; ;) {
      const missing: number[] = []
      for (let b = 0; b < blocks; b++) if (!disk.has(file.cacheKey, b)) missing.push(b)
      if (missing.length === 0) return
      const before = this.cachedBytes(file)
      let troubled = false
      // A run's blocks are written while the next run is fetched; the pass ends once all are.
      const writing: Promise<unknown>[] = []
      try {
        for (const [first, end] of runsOf(missing, runBlocks)) {
          if (lost >= FRUITLESS) throw unwritable()
          try {
            const written = Promise.all(await this.inTurn(() => this.fetchRun(file, first, end, signal), signal))
            writing.push(written.then(() => {
              let landed = false
              for (let b = first; b < end && !landed; b++) landed = disk.has(file.cacheKey, b)
              lost = landed ? 0 : lost + 1
              report()
            }))
          } catch (e) {
            if (signal.aborted) throw signal.reason
            const verdict = judge(e)
            if (verdict === 'definitive') throw e
            if (verdict === 'refused') throw refusal(e)
            troubled = true
            if (verdict === 'transient') await this.pause(signal)
          }
        }
      } finally {
        await Promise.all(writing)
      }
      report()
      if (lost >= FRUITLESS) throw unwritable()
      if (troubled || this.cachedBytes(file) > before) fruitless = 0
      else if (++fruitless >= FRUITLESS) throw unwritable()
    }
  }

  /**
   * Blocks [first, end) of the file, from memory when a reader has them, by waiting on a
   * reader's fetch under way, else fetched at BACKGROUND priority; the writes of them to
   * the disk cache, once all have arrived. Goes once readers are quiet and the disk cache's
   * write backlog has room for the run.
   */
  private async fetchRun(file: RemoteFile, first: number, end: number, signal: AbortSignal): Promise<Promise<void>[]> {
    const { disk, fetcher, memory } = this.path
    await this.until(() => fetcher.foregroundInFlight === 0 && Date.now() - fetcher.lastForegroundAt >= QUIET_MS, signal)
    const runBytes = (end - first) * recordBytes(this.path.options.blockSize)
    await this.until(() => disk!.backlog + runBytes <= MAX_WRITE_BACKLOG, signal)
    const reach = this.path.source.reachability
    if (reach && !reach.online) throw reach.offlineError()
    const owner = {}
    const started: Fetch[] = []
    const arrivals: Promise<Arrived>[] = []
    let from = -1
    const startFetch = (to: number) => {
      if (from < 0) return
      started.push(fetcher.start(file, from, to, owner, BACKGROUND))
      for (let b = from; b < to; b++) arrivals.push(this.arrival(file, b, true))
      from = -1
    }
    for (let b = first; b < end; b++) {
      const key = blockKey(file.cacheKey, b)
      const onDisk = disk!.has(file.cacheKey, b)
      const held = onDisk || !memory.has(key) ? undefined : memory.get(key)
      if (onDisk || held || fetcher.inFlight(file, b)) {
        startFetch(b)
        if (held) arrivals.push(Promise.resolve({ write: this.path.storeOnDisk(file, b, held) }))
        // A reader's fetch: waited on, not joined, so it stays the reader's.
        else if (!onDisk) arrivals.push(this.arrival(file, b, false))
      } else if (from < 0) from = b
    }
    startFetch(end)
    try {
      return (await abortable(Promise.all(arrivals), signal)).map((a) => a.write)
    } catch (e) {
      // Failed or aborted: what is still under way for this run stops, and the run ends
      // only once it has (a piece being verified may yet hand its blocks to the disk cache)
      // and what arrived is written, so that nothing of it is written after fetchAll settles.
      for (const f of started) f.release(owner)
      const until = Date.now() + SETTLE_MS
      while (started.some((f) => !f.done) && Date.now() < until) await sleep(LOOK_MS)
      await Promise.all(arrivals.map((a) => a.then((x) => x.write, () => {})))
      throw e
    }
  }

  /** Block `b`, being fetched, once it has arrived, with its write; `ours`: marked read in the memory cache. */
  private arrival(file: RemoteFile, b: number, ours: boolean): Promise<Arrived> {
    const pending = this.path.fetcher.waitFor(file, b)
    if (!pending) return Promise.resolve({ write: Promise.resolve() })
    return pending.then(() => {
      if (ours) this.path.memory.get(blockKey(file.cacheKey, b), false)
      return { write: this.path.diskWrite(file, b) ?? Promise.resolve() }
    })
  }

  /** Runs `fn` in the background's turn: one at a time, across all files. */
  private inTurn<T>(fn: () => Promise<T>, signal: AbortSignal): Promise<T> {
    const run = this.turn.then(() => {
      signal.throwIfAborted()
      return fn()
    })
    this.turn = run.catch(() => {})
    return run
  }

  private change(fn: (disk: DiskBlockCache) => Promise<void>, files: readonly RemoteFile[]): Promise<void> {
    const { disk } = this.path
    if (!disk) return Promise.reject(this.noDiskCache(files.reduce((n, f) => n + f.size, 0)))
    const run = this.changes.then(() => fn(disk))
    this.changes = run.catch(() => {})
    return run
  }

  private noDiskCache(needed: number): NoRoomError {
    const why = this.path.diskCacheError
    const reason = why ? `the disk cache could not be opened (${why instanceof Error ? why.message : String(why)})` : 'the disk cache is off (diskCacheBytes 0 or no cache folder)'
    return new NoRoomError(`needs ${formatBytes(needed)} of room in the cache, and ${reason}`, needed)
  }

  /** Waits until `ready()` holds, looking every LOOK_MS. */
  private async until(ready: () => boolean, signal: AbortSignal): Promise<void> {
    while (!ready()) await sleep(LOOK_MS, undefined, { signal })
  }

  /** After a transient fault outlasted the deadline: until the service is found reachable again, or PAUSE_MS while it is thought reachable. */
  private async pause(signal: AbortSignal): Promise<void> {
    const reach = this.path.source.reachability
    if (!reach || reach.online) return void (await sleep(PAUSE_MS, undefined, { signal }))
    await new Promise<void>((resolve, reject) => {
      const stop = reach.onChange((s) => {
        if (s.online) done()
      })
      const onAbort = () => {
        stop()
        reject(signal.reason)
      }
      const done = () => {
        stop()
        signal.removeEventListener('abort', onAbort)
        resolve()
      }
      signal.addEventListener('abort', onAbort, { once: true })
      if (reach.online) done()
    })
  }
}

/** A block of a run that has arrived: its write to the disk cache (an object, so that the promise is not taken for the block's). */
interface Arrived {
  write: Promise<void>
}

/** The service says it is busy (429, 503): it will serve the file later, so the fetch only pauses. */
function busy(e: ServiceError): boolean {
  return e.httpStatus === 429 || e.httpStatus === 503
}

/** The service answered the file with an error until the retry policy gave up; the message says so in a few words (shown in `.status` and the state attribute). */
export class RefusedError extends Error {
  override readonly name = 'RefusedError'
}

function refusal(e: unknown): RefusedError {
  const answer = e instanceof ServiceError ? e : (e as Error).cause as ServiceError
  return new RefusedError(`the service answers ${answer.httpStatus} every time`, { cause: e })
}

/** Consecutive blocks of `missing` (ascending) as runs [first, end), none longer than `most` nor across a multiple of it. */
function runsOf(missing: readonly number[], most: number): [number, number][] {
  const runs: [number, number][] = []
  for (const b of missing) {
    const last = runs[runs.length - 1]
    if (last && last[1] === b && Math.floor(b / most) === Math.floor(last[0] / most)) last[1] = b + 1
    else runs.push([b, b + 1])
  }
  return runs
}

/**
 * What a failed run means: a definitive answer (the transfer gone) ends the fetch; so does
 * the service answering with an error every time until the retry policy gave up (`refused`:
 * a file it cannot serve, such as one it answers 500 for, would otherwise be asked for as
 * long as the mount runs); a transient fault of the connection that outlasted the deadline
 * pauses it (the service unreachable: it goes on once it is back); a reader's fetch it
 * waited on being cancelled only needs the run asked again.
 */
function judge(e: unknown): 'definitive' | 'refused' | 'transient' | 'again' {
  if (e instanceof ServiceError) return !classify('download', e).retry ? 'definitive' : busy(e) ? 'transient' : 'refused'
  if (e instanceof DeadlineError && e.cause instanceof ServiceError) return busy(e.cause) ? 'transient' : 'refused'
  if (e instanceof DeadlineError || e instanceof NetworkError || e instanceof IntegrityError) return 'transient'
  if (e instanceof Error && e.name === 'AbortError') return 'again'
  return 'definitive'
}
