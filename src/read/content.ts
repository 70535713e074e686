// The read path as the filesystem core sees it: FileContent. It holds what all open files
// share: the memory and disk caches, the fetcher and the block buffers, the memory budget's
// split among them (budget.ts), and the disk loads under way. Each open file's reads go
// through a Handle (handle.ts), which says where a read's bytes come from. Pinning files
// offline (CachePinning) is pin-fetch.ts's, over the same caches and fetcher.
import { DiskBlockCache } from './disk-cache.js'
import { BlockFetcher, type Fetch, type FetchStats } from './fetcher.js'
import { blockCacheBytes, consumedBlockBytes } from './budget.js'
import { reasonOf, troubleLog, type ReadHealth } from './read-log.js'
import { spanAt } from '../base/chunk-grid.js'
import type { Logger } from '../base/log.js'
import { BlockBuffers } from './block-buffers.js'
import { sumMemoryError } from './block-sum.js'
import { BlockPool } from './disk-stream.js'
import { Handle, type OpenFile } from './handle.js'
import { MemoryBlockCache, blockKey, type Block } from './memory-cache.js'
import { DiskPinning, type PinningHost } from './pin-fetch.js'
import { resolveReadOptions, type ReadOptions } from './options.js'
import type { CachePinning, ContentHandle, FileContent, RangeSource, RemoteFile } from './source.js'

/** What the mount gives the read path besides its options. */
export interface ReadPathContext {
  /** Bytes the disk cache may still take from its disk (free space less the user's margin): pinning files checks it. */
  freeSpace?: () => Promise<number>
}

export class ReadPath implements FileContent, OpenFile, CachePinning, PinningHost {
  readonly options: ReadOptions
  readonly memory: MemoryBlockCache
  readonly fetcher: BlockFetcher
  private readonly diskLoads = new Map<string, Promise<Block | undefined>>()
  /**
   * Handles reading sequentially now. They share prefetchBytes: each prefetching it all, four
   * readers of one big file kept four times what the cache could hold, and a fifth of
   * what they fetched was evicted unread and fetched again.
   */
  readonly streaming = new Set<object>()
  /** Block buffers of whole-block reads from the disk cache (disk-stream.ts). */
  readonly pool: BlockPool
  /** The buffers fetched blocks are received into and kept in (block-buffers.ts). */
  readonly buffers: BlockBuffers
  /** Writes handed to the disk cache and not over yet, by block key. */
  private readonly diskWrites = new Map<string, Promise<void>>()
  private readonly pinning: DiskPinning

  private constructor(
    readonly source: RangeSource,
    options: ReadOptions,
    readonly disk: DiskBlockCache | null,
    log: Logger | null,
    context: ReadPathContext,
  ) {
    const cacheBytes = blockCacheBytes(options, disk !== null)
    // Prefetching further than half the block cache would evict what it fetched before it is read.
    this.options = { ...options, prefetchBytes: Math.min(options.prefetchBytes, Math.floor(cacheBytes / 2)) }
    this.buffers = new BlockBuffers(options.blockSize)
    this.memory = new MemoryBlockCache(cacheBytes, this.buffers, consumedBlockBytes(options, disk !== null))
    this.pool = new BlockPool(options.blockSize)
    this.fetcher = new BlockFetcher(source, options, (file, block, data) => {
      this.memory.set(blockKey(file.cacheKey, block), data)
      void this.storeOnDisk(file, block, data)
    }, this.buffers, log ? troubleLog(log, options.deadlineMs) : {})
    this.pinning = new DiskPinning(this, context.freeSpace)
  }

  /** Hands a verified block to the disk cache; the write, settled once on disk or given up. */
  storeOnDisk(file: RemoteFile, block: number, data: Block): Promise<void> {
    // Held until written, so its buffer is not used again under the write.
    if (!this.disk || !this.buffers.hold(data)) return Promise.resolve()
    const key = blockKey(file.cacheKey, block)
    const write = this.disk.put(file.cacheKey, block, data).finally(() => {
      this.buffers.release(data)
      if (this.diskWrites.get(key) === write) this.diskWrites.delete(key)
    })
    this.diskWrites.set(key, write)
    return write
  }

  diskWrite(file: RemoteFile, block: number): Promise<void> | undefined {
    return this.diskWrites.get(blockKey(file.cacheKey, block))
  }

  /** Reads that are retrying now, and why. */
  health(): ReadHealth {
    let oldest: Fetch | null = null
    for (const f of this.fetcher.retrying) if (!oldest || f.trouble!.since < oldest.trouble!.since) oldest = f
    if (!oldest) return { retrying: 0, since: null, reason: null }
    return { retrying: this.fetcher.retrying.size, since: oldest.trouble!.since, reason: reasonOf(oldest.trouble!.error) }
  }

  /** Why the disk cache could not be opened (the read path then runs on memory alone). */
  diskCacheError: unknown = null

  /** Opens the read path; with `diskCacheDir` set, the disk cache found there is taken up. */
  static async create(source: RangeSource, options: Partial<ReadOptions> = {}, log: Logger | null = null, context: ReadPathContext = {}): Promise<ReadPath> {
    const o = resolveReadOptions(options)
    const memoryError = sumMemoryError()
    if (memoryError) throw memoryError
    let disk: DiskBlockCache | null = null
    let diskCacheError: unknown = null
    if (o.diskCacheDir && o.diskCacheBytes > 0) {
      // A cache folder we cannot use must not stop the mount: reads still work, uncached.
      disk = await DiskBlockCache.open(o.diskCacheDir, o.diskCacheBytes).catch((e: unknown) => {
        diskCacheError = e
        return null
      })
    }
    const path = new ReadPath(source, o, disk, log, context)
    path.diskCacheError = diskCacheError
    return path
  }

  open(file: RemoteFile): ContentHandle {
    return new Handle(this, file)
  }

  prepare(file: RemoteFile): void {
    // Not while the service is known to be unreachable: each attempt could wait out the
    // connect timeout, and the first read after it returns would wait on it too.
    if (this.source.reachability?.online === false) return
    this.source.prepare?.(file)
  }

  get stats(): FetchStats {
    return this.fetcher.stats
  }

  /** Waits for cache writes under way (before exit, and in tests). */
  async flush(): Promise<void> {
    await this.disk?.flush()
  }

  cachedBytes(file: RemoteFile): number {
    return this.pinning.cachedBytes(file)
  }

  isPinned(file: RemoteFile): boolean {
    return this.pinning.isPinned(file)
  }

  pin(files: readonly RemoteFile[]): Promise<void> {
    return this.pinning.pin(files)
  }

  unpin(files: readonly RemoteFile[]): Promise<void> {
    return this.pinning.unpin(files)
  }

  pinOnly(files: readonly RemoteFile[]): Promise<void> {
    return this.pinning.pinOnly(files)
  }

  fetchAll(file: RemoteFile, options: { signal: AbortSignal; onProgress?: (bytesOnDisk: number) => void }): Promise<void> {
    return this.pinning.fetchAll(file, options)
  }

  free(file: RemoteFile): Promise<number> {
    return this.pinning.free(file)
  }

  cacheUse(): { pinnedBytes: number; otherBytes: number; budgetBytes: number } {
    return this.pinning.cacheUse()
  }

  /** In the memory or disk cache: readable without the service. */
  cached(file: RemoteFile, block: number): boolean {
    return this.memory.has(blockKey(file.cacheKey, block)) || (this.disk?.has(file.cacheKey, block) ?? false)
  }

  /** Cached or being fetched: nothing to start for this block. */
  present(file: RemoteFile, block: number): boolean {
    return (
      this.memory.has(blockKey(file.cacheKey, block)) ||
      this.fetcher.inFlight(file, block) ||
      (this.disk?.has(file.cacheKey, block) ?? false)
    )
  }

  /** The block from the disk cache, one load at a time per block. */
  loadFromDisk(file: RemoteFile, block: number): Promise<Block | undefined> {
    const key = blockKey(file.cacheKey, block)
    let load = this.diskLoads.get(key)
    if (!load) {
      const span = spanAt(block, file.size, this.options.blockSize)
      load = (this.disk?.get(file.cacheKey, block, span.end - span.start) ?? Promise.resolve(undefined))
        .then((data) => {
          if (!data) return undefined
          const parts = [data]
          this.memory.set(key, parts)
          return parts
        })
        .finally(() => this.diskLoads.delete(key))
      this.diskLoads.set(key, load)
    }
    return load
  }
}
