// Verified blocks on disk, in the user cache folder, bounded in bytes, surviving a
// remount. Layout: <dir>/blocks-v5/<file>/<segment>.seg, where <file> is a hash of
// RemoteFile.cacheKey (so a replaced file, having a new key, can never find the old
// bytes) and a segment holds up to BLOCKS_PER_SEGMENT neighbouring blocks, each appended
// as a record: a header page (block index, length and the block's check: block-sum.ts),
// then the bytes, zero-padded to a page. A file per block cost this machine's ext4 several
// seconds of system time per GiB cached (creating a file is the expensive part), about a
// third of a cold read's CPU; a segment is created once per 16.
//
// Records are page-aligned so that they move with O_DIRECT, straight between a block's slot
// in memory and the disk (block-slots.ts says what that saves; record-io.ts, when the page
// cache is used instead).
//
// Blocks were verified before they got here. A record a crash tore or a disk damaged
// fails its check on load and is dropped, so no fsync is needed (one per block cost more
// CPU than the rest of a cold read together). An MD5 per block would cost a second hash
// of every byte received, since the service hashes pieces, not blocks; the check runs at
// several times CRC-32's speed. The index lives in memory and is rebuilt from the segments' record
// headers at start. Eviction goes by whole segments, least recently used first, recency
// carried across mounts by the segments' mtimes. Segments of pinned files (kept offline) are never
// evicted, and the room set aside for them comes out of what the others may take
// (pinned-files.ts). Disk I/O is all async.
import { createHash } from 'node:crypto'
import { mkdir, open, rm, unlink, utimes } from 'node:fs/promises'
import { join } from 'node:path'
import PQueue from 'p-queue'
import { blockSumIs } from './block-sum.js'
import { bytesLength } from './bytes.js'
import { findSegments, recordBytes } from './cache-records.js'
import { PinnedFiles } from './pinned-files.js'
import type { Block } from './memory-cache.js'
import { RecordIO } from './record-io.js'

/** Neighbouring blocks kept in one segment file. */
const BLOCKS_PER_SEGMENT = 16
/**
 * Bytes of blocks waiting to be written at most; past that a block is not cached (the cache
 * is best effort). Blocks evicted from memory before they are written live on here, so
 * this comes out of the memory budget (budget.ts). An O_DIRECT write returns only once the
 * disk has the bytes, and a fetch's pieces arrive in bursts: with 32 MiB, a cold 1 GiB read
 * on this machine's disk (~500 MB/s for new files) left 1–30 MiB out of the cache when
 * other work shared the machine.
 */
export const MAX_WRITE_BACKLOG = 64 * 1024 * 1024
/**
 * Writes under way at once (each of one segment's waiting blocks): with two at a time a
 * busy main thread left them so far behind a cold read that a fifth of a 1 GiB file never
 * reached the cache.
 */
const WRITES_AT_ONCE = 8
/**
 * A loaded segment's mtime is brought forward only when older than this: recency across
 * mounts needs no finer grain, and a utimes per load was one more trip into libuv's
 * thread pool for every MiB re-read.
 */
const TOUCH_GRAIN_MS = 10 * 60 * 1000

interface Segment {
  /** Its key in the index: <file>/<segment number>. */
  key: string
  /** The file's id (<file>). */
  file: string
  path: string
  /** Bytes of the file, records being written included (offsets are handed out here). */
  size: number
  /** Loads and writes in progress: eviction leaves the segment alone. */
  pins: number
  /** Index keys of the blocks it holds. */
  blocks: Set<string>
  /** ms since the epoch: the file's mtime as last set. */
  touched: number
  /** Resolves once the file exists, empty, for a segment new in this run. */
  ready: Promise<void>
  /** A write failed: what the file holds is no longer known, so it goes once unpinned. */
  broken: boolean
}

/** A block waiting for its write. */
interface Waiting {
  key: string
  block: number
  parts: Block
  length: number
  /** Bytes of its record. */
  size: number
  done: () => void
}

interface BlockRecord {
  segment: Segment
  /** Where the record (its header page) starts in the segment. */
  offset: number
  length: number
  /** The bytes' check (block-sum.ts). */
  sum: Buffer
}

export class DiskBlockCache {
  private readonly records = new Map<string, BlockRecord>()
  /** Map order is recency: first = least recently used. */
  private readonly segments = new Map<string, Segment>()
  private readonly fileIds = new Map<string, string>()
  private readonly writes = new PQueue({ concurrency: WRITES_AT_ONCE })
  private readonly io = new RecordIO()
  private indexedBytes = 0
  private backlogBytes = 0
  /** Blocks waiting or being written: a second put of one of them (delivered again) is not appended twice. */
  private readonly writing = new Set<string>()
  /** File folders known to exist (made once, not at every write). */
  private readonly folders = new Set<string>()
  /** Unlinks under way: their bytes left the budget but may still be on disk. */
  private readonly unlinking = new Set<Promise<void>>()
  /** Earlier layouts being removed. */
  private oldLayouts: Promise<void> = Promise.resolve()
  /** Blocks waiting for their write, by segment key, in the order they came. */
  private readonly waiting = new Map<string, Waiting[]>()
  /** Segments with a write queued or under way (schedule). */
  private readonly writingSegments = new Set<string>()

  private constructor(
    private readonly root: string,
    readonly maxBytes: number,
    /** Pinned files, and each file's bytes here. */
    readonly pinned: PinnedFiles,
  ) {}

  /** Opens the cache in `dir`, rebuilding the index from what is there (the pinned files' list first: the rebuild evicts). */
  static async open(dir: string, maxBytes: number): Promise<DiskBlockCache> {
    const cache = new DiskBlockCache(join(dir, 'blocks-v5'), maxBytes, await PinnedFiles.load(dir))
    // Blocks of earlier layouts (a file per block) are never read again. Removed in the
    // background: 10 GiB of them is ten thousand files, seconds the mount need not wait for.
    cache.oldLayouts = Promise.all(['blocks-v1', 'blocks-v2', 'blocks-v3', 'blocks-v4'].map((old) => rm(join(dir, old), { recursive: true, force: true })))
      .then(() => undefined, () => undefined)
    await cache.rebuild()
    return cache
  }

  private async rebuild(): Promise<void> {
    await mkdir(this.root, { recursive: true })
    const found = await findSegments(this.root, (path) => this.io.open(path))
    found.sort((a, b) => a.mtimeMs - b.mtimeMs)
    for (const f of found) {
      const segment: Segment = { key: f.key, file: f.fileId, path: f.path, size: 0, pins: 0, blocks: new Set(), touched: f.mtimeMs, ready: Promise.resolve(), broken: false }
      for (const r of f.records) {
        const key = `${f.fileId}/${r.block}`
        const old = this.records.get(key)
        if (old) old.segment.blocks.delete(key)
        // A block written again (after its check failed) is the later record.
        this.setRecord(key, { segment, offset: r.offset, length: r.length, sum: r.sum })
        segment.blocks.add(key)
      }
      this.segments.set(segment.key, segment)
      this.grow(segment, f.size)
    }
    // The budget may have shrunk since the last mount.
    await Promise.all(this.evict(0))
  }

  /** The file's id here, a hash of its cache key (pinned-files.ts knows files by it). */
  fileId(cacheKey: string): string {
    let id = this.fileIds.get(cacheKey)
    if (id === undefined) {
      id = createHash('sha256').update(cacheKey).digest('hex').slice(0, 40)
      if (this.fileIds.size > 10_000) this.fileIds.clear()
      this.fileIds.set(cacheKey, id)
    }
    return id
  }

  has(cacheKey: string, block: number): boolean {
    return this.records.has(`${this.fileId(cacheKey)}/${block}`)
  }

  /**
   * The block's bytes, or undefined when absent, unreadable or not what was stored. `into`:
   * a buffer of at least expectedLength to read them into (the bytes are a view of it).
   */
  async get(cacheKey: string, block: number, expectedLength: number, into?: Buffer): Promise<Buffer | undefined> {
    const key = `${this.fileId(cacheKey)}/${block}`
    const record = this.records.get(key)
    if (!record) return undefined
    const { segment } = record
    segment.pins++
    let data: Buffer | undefined
    try {
      data = record.length === expectedLength ? await this.io.load(segment, record.offset, block, record.length, into) : undefined
    } catch {
      data = undefined
    } finally {
      segment.pins--
    }
    const intact = data !== undefined && blockSumIs(data, record.sum)
    if (this.records.get(key) !== record) return intact ? data : undefined
    if (!intact) {
      // Its bytes stay in the segment until the segment goes; the block is fetched again.
      this.deleteRecord(key)
      segment.blocks.delete(key)
      return undefined
    }
    if (this.segments.get(segment.key) === segment) {
      this.segments.delete(segment.key)
      this.segments.set(segment.key, segment)
    }
    const now = Date.now()
    if (now - segment.touched > TOUCH_GRAIN_MS) {
      segment.touched = now
      utimes(segment.path, now / 1000, now / 1000).catch(() => {})
    }
    return data
  }

  /**
   * Stores a verified block in the background. The returned promise is only for tests
   * and shutdown; a failure (disk full, folder gone) just leaves the block uncached.
   */
  put(cacheKey: string, block: number, parts: Block): Promise<void> {
    const fileId = this.fileId(cacheKey)
    const key = `${fileId}/${block}`
    const length = bytesLength(parts)
    const size = recordBytes(length)
    if (this.records.has(key) || this.writing.has(key) || size > this.maxBytes) return Promise.resolve()
    if (this.backlogBytes + size > MAX_WRITE_BACKLOG) return Promise.resolve()
    this.backlogBytes += size
    this.writing.add(key)
    const segKey = `${fileId}/${Math.floor(block / BLOCKS_PER_SEGMENT)}`
    return new Promise<void>((done) => {
      let waiting = this.waiting.get(segKey)
      if (!waiting) this.waiting.set(segKey, (waiting = []))
      waiting.push({ key, block, parts, length, size, done })
      this.schedule(fileId, segKey)
    })
  }

  /** Queues a write of the blocks waiting for the segment, unless one is queued or under way: the blocks then wait for the next. */
  private schedule(fileId: string, segKey: string): void {
    if (this.writingSegments.has(segKey) || !this.waiting.has(segKey)) return
    this.writingSegments.add(segKey)
    // The next write of the segment is queued before this one leaves the queue, so the queue
    // is idle (flush) only once no block waits.
    void this.writes
      .add(async () => {
        try {
          await this.writeWaiting(fileId, segKey)
        } finally {
          this.writingSegments.delete(segKey)
          this.schedule(fileId, segKey)
        }
      })
      .catch(() => {})
  }

  /**
   * Writes the blocks waiting for one segment, all that came before this write's turn, in
   * one write: records of neighbouring blocks lie side by side in the segment. One O_DIRECT
   * write per 1 MiB block cost ~0.5 CPU-s per GiB, four blocks a write ~0.25. Writes of one
   * segment go one at a time (schedule), as the file system would have them anyway: it locks
   * a file for a write that extends it until the disk has the bytes.
   */
  private async writeWaiting(fileId: string, segKey: string): Promise<void> {
    const items = this.waiting.get(segKey)!
    this.waiting.delete(segKey)
    let total = items.reduce((n, i) => n + i.size, 0)
    // A pinned file's blocks have their room set aside: only other files' segments make way.
    const pinnedFile = this.pinned.has(fileId)
    const unlinks = pinnedFile ? this.evict(0, total) : this.evict(total)
    // What does not fit the budget is left out, from the last.
    const admitted = [...items]
    if (!pinnedFile) while (admitted.length > 0 && total > this.pinned.otherRoom(this.maxBytes, this.indexedBytes)) total -= admitted.pop()!.size
    let segment = this.segments.get(segKey)
    if (admitted.length === 0 || segment?.broken) return this.settle(items)
    if (!segment) {
      const path = join(this.root, fileId, `${segKey.slice(fileId.length + 1)}.seg`)
      // Made (empty) once, after any unlink of an earlier file of that name, before any
      // record is written.
      const ready = Promise.all([...unlinks, ...this.unlinking]).then(async () => {
        if (!this.folders.has(fileId)) {
          await mkdir(join(this.root, fileId), { recursive: true })
          this.folders.add(fileId)
        }
        await (await open(path, 'w', 0o600)).close()
      })
      ready.catch(() => {})
      segment = { key: segKey, file: fileId, path, size: 0, pins: 0, blocks: new Set(), touched: Date.now(), ready, broken: false }
      this.segments.set(segKey, segment)
    }
    // The records' place is taken now, so writes of one segment never overlap.
    const offset = segment.size
    this.grow(segment, total)
    segment.pins++
    try {
      // The bytes evicted for these records leave the disk before they land.
      await Promise.all([segment.ready, ...unlinks, ...this.unlinking])
      const sums = await this.io.store(segment, offset, admitted)
      if (this.segments.get(segKey) === segment) {
        let at = offset
        admitted.forEach((item, i) => {
          this.setRecord(item.key, { segment: segment!, offset: at, length: item.length, sum: sums[i]! })
          segment!.blocks.add(item.key)
          at += item.size
        })
      }
    } catch {
      // Perhaps the folder went (someone emptied the cache): the segment cannot be
      // trusted to hold what its size says, so it goes; the folder is made again.
      this.folders.delete(fileId)
      segment.broken = true
    } finally {
      segment.pins--
      if (segment.broken && segment.pins === 0 && this.segments.get(segKey) === segment) void this.drop(segment)
      this.settle(items)
    }
  }

  /** The blocks' writes are over, written or not. */
  private settle(items: readonly Waiting[]): void {
    for (const item of items) {
      this.writing.delete(item.key)
      this.backlogBytes -= item.size
      item.done()
    }
  }

  /** Removes least recently used segments of files not pinned, unheld, until `incoming` more bytes of others fit (`pinnedIncoming` of pinned files); the unlinks to await. */
  evict(incoming = 0, pinnedIncoming = 0): Promise<void>[] {
    const unlinks: Promise<void>[] = []
    for (const segment of this.segments.values()) {
      if (this.pinned.otherRoom(this.maxBytes, this.indexedBytes, pinnedIncoming) >= incoming) break
      if (segment.pins > 0 || this.pinned.has(segment.file)) continue
      unlinks.push(this.drop(segment))
    }
    return unlinks
  }

  /** Removes the file's segments (pinned or not: the caller decides) but those a load or write holds; the unlinks to await, and whether any was held. */
  dropFile(cacheKey: string): { unlinks: Promise<void>[]; held: boolean } {
    const id = this.fileId(cacheKey)
    const mine = [...this.segments.values()].filter((s) => s.file === id)
    return { unlinks: mine.filter((s) => s.pins === 0).map((s) => this.drop(s)), held: mine.some((s) => s.pins > 0) }
  }

  private grow(segment: Segment, n: number): void {
    segment.size += n
    this.indexedBytes += n
    this.pinned.addStored(segment.file, n)
  }

  private setRecord(key: string, record: BlockRecord): void {
    this.deleteRecord(key)
    this.records.set(key, record)
    this.pinned.addVerified(record.segment.file, record.length)
  }

  private deleteRecord(key: string): void {
    const record = this.records.get(key)
    if (!record) return
    this.records.delete(key)
    this.pinned.addVerified(record.segment.file, -record.length)
  }

  private drop(segment: Segment): Promise<void> {
    this.io.close(segment)
    if (this.segments.get(segment.key) === segment) {
      this.segments.delete(segment.key)
      this.indexedBytes -= segment.size
      this.pinned.addStored(segment.file, -segment.size)
      for (const key of segment.blocks) if (this.records.get(key)?.segment === segment) this.deleteRecord(key)
      segment.blocks.clear()
    }
    const done: Promise<void> = unlink(segment.path)
      .catch(() => {})
      .finally(() => this.unlinking.delete(done))
    this.unlinking.add(done)
    return done
  }

  /** Resolves when every write started so far is on disk (or given up), and earlier layouts are gone. */
  async flush(): Promise<void> {
    await Promise.all([this.writes.onIdle(), this.oldLayouts])
    this.io.closeIdle()
  }

  get bytes(): number {
    return this.indexedBytes
  }

  /** Bytes of blocks waiting to be written (past MAX_WRITE_BACKLOG a block is not cached). */
  get backlog(): number {
    return this.backlogBytes
  }

  get count(): number {
    return this.records.size
  }

  /** Writes made to segment files (for tests). */
  get writeCount(): number {
    return this.io.writes
  }
}
