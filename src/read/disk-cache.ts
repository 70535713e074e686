// Verified blocks on disk, in the user cache folder, bounded in bytes, surviving a
// remount. Layout: <dir>/blocks-v4/<file>/<segment>.seg, where <file> is a hash of
// RemoteFile.cacheKey (so a replaced file, having a new key, can never find the old
// bytes) and a segment holds up to BLOCKS_PER_SEGMENT neighbouring blocks, each appended
// as a record: block index, length and the block's check (block-sum.ts), then the bytes. A file per block cost this
// machine's ext4 several seconds of system time per GiB cached (creating a file is the
// expensive part), about a third of a cold read's CPU; a segment is created once per 16.
//
// Blocks were verified before they got here. A record a crash tore or a disk damaged
// fails its check on load and is dropped, so no fsync is needed (one per block cost more
// CPU than the rest of a cold read together). An MD5 per block would cost a second hash
// of every byte received, since the service hashes pieces, not blocks; the check runs at
// several times CRC-32's speed. The index lives in memory and is rebuilt from the segments' record
// headers at start. Eviction goes by whole segments, least recently used first, recency
// carried across mounts by the segments' mtimes. Disk I/O is all async.
import { createHash } from 'node:crypto'
import { constants as FS } from 'node:fs'
import { mkdir, open, readdir, rm, stat, unlink, utimes, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import PQueue from 'p-queue'
import { writeParts } from '../api/file-io.js'
import { BLOCK_SUM_BYTES, blockSum, blockSumIs } from './block-sum.js'
import { bytesLength } from './bytes.js'
import type { Block } from './memory-cache.js'

/** Neighbouring blocks kept in one segment file. */
const BLOCKS_PER_SEGMENT = 16
/** Bytes of a record's header: block index and length (u32 each, big-endian), then the bytes' check. */
export const RECORD_HEADER_BYTES = 8 + BLOCK_SUM_BYTES
const SEGMENT_NAME = /^(\d+)\.seg$/
/**
 * Bytes of blocks waiting to be written at most; past that a block is not cached (the cache
 * is best effort). Blocks evicted from memory before they are written live on here, so
 * this comes out of the memory budget (see blockCacheBytes in content.ts).
 */
export const MAX_WRITE_BACKLOG = 32 * 1024 * 1024
/**
 * Block writes under way at once: each is three calls into libuv's thread pool (open,
 * write, close); with two at a time a busy main thread left them so far behind a cold
 * read that a fifth of a 1 GiB file never reached the cache.
 */
const WRITES_AT_ONCE = 8
/**
 * A loaded segment's mtime is brought forward only when older than this: recency across
 * mounts needs no finer grain, and a utimes per load was one more trip into libuv's
 * thread pool for every MiB re-read.
 */
const TOUCH_GRAIN_MS = 10 * 60 * 1000
/**
 * Segment files kept open, least recently used closed first: an open and a close for every
 * block loaded cost a re-read from the cache about a tenth of its CPU. 16 segments of 16 MiB
 * cover what a few sequential readers and their read-ahead use at once.
 */
const OPEN_SEGMENTS = 16

interface Segment {
  /** Its key in the index: <file>/<segment number>. */
  key: string
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

interface BlockRecord {
  segment: Segment
  /** Where the block's bytes start in the segment (after its record header). */
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
  /** Segments whose file is open, least recently used first (OPEN_SEGMENTS). */
  private readonly openFiles = new Map<Segment, Promise<FileHandle>>()
  private indexedBytes = 0
  private backlogBytes = 0
  /** Blocks being written: a second put of one of them (delivered again) is not appended twice. */
  private readonly writing = new Set<string>()
  /** File folders known to exist (made once, not at every write). */
  private readonly folders = new Set<string>()
  /** Unlinks under way: their bytes left the budget but may still be on disk. */
  private readonly unlinking = new Set<Promise<void>>()
  /** Earlier layouts being removed. */
  private oldLayouts: Promise<void> = Promise.resolve()

  private constructor(
    private readonly root: string,
    readonly maxBytes: number,
  ) {}

  /** Opens the cache in `dir`, rebuilding the index from what is there. */
  static async open(dir: string, maxBytes: number): Promise<DiskBlockCache> {
    const cache = new DiskBlockCache(join(dir, 'blocks-v4'), maxBytes)
    // Blocks of earlier layouts (a file per block) are never read again. Removed in the
    // background: 10 GiB of them is ten thousand files, seconds the mount need not wait for.
    cache.oldLayouts = Promise.all(['blocks-v1', 'blocks-v2', 'blocks-v3'].map((old) => rm(join(dir, old), { recursive: true, force: true })))
      .then(() => undefined, () => undefined)
    await cache.rebuild()
    return cache
  }

  private async rebuild(): Promise<void> {
    await mkdir(this.root, { recursive: true })
    const found: Segment[] = []
    for (const fileId of await readdir(this.root)) {
      const folder = join(this.root, fileId)
      let names: string[]
      try {
        names = await readdir(folder)
      } catch {
        await rm(folder, { force: true })
        continue
      }
      await Promise.all(names.map(async (name) => {
        const path = join(folder, name)
        const m = SEGMENT_NAME.exec(name)
        if (!m) return void (await rm(path, { force: true, recursive: true }))
        const st = await stat(path).catch(() => null)
        if (!st?.isFile()) return
        const segment: Segment = { key: `${fileId}/${m[1]}`, path, size: st.size, pins: 0, blocks: new Set(), touched: st.mtimeMs, ready: Promise.resolve(), broken: false }
        const records = await readRecords(path, st.size).catch(() => [])
        for (const r of records) {
          const key = `${fileId}/${r.block}`
          const old = this.records.get(key)
          if (old) old.segment.blocks.delete(key)
          // A block written again (after its check failed) is the later record.
          this.records.set(key, { segment, offset: r.offset, length: r.length, sum: r.sum })
          segment.blocks.add(key)
        }
        found.push(segment)
      }))
    }
    found.sort((a, b) => a.touched - b.touched)
    for (const segment of found) {
      this.segments.set(segment.key, segment)
      this.indexedBytes += segment.size
    }
    // The budget may have shrunk since the last mount.
    await Promise.all(this.evict(0))
  }

  private fileId(cacheKey: string): string {
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
      data = record.length === expectedLength ? await readAt(await this.fileOf(segment), record.offset, record.length, into) : undefined
    } catch {
      data = undefined
    } finally {
      segment.pins--
    }
    const intact = data !== undefined && blockSumIs(data, record.sum)
    if (this.records.get(key) !== record) return intact ? data : undefined
    if (!intact) {
      // Its bytes stay in the segment until the segment goes; the block is fetched again.
      this.records.delete(key)
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
    const recordBytes = RECORD_HEADER_BYTES + length
    if (this.records.has(key) || this.writing.has(key) || recordBytes > this.maxBytes) return Promise.resolve()
    if (this.backlogBytes + recordBytes > MAX_WRITE_BACKLOG) return Promise.resolve()
    this.backlogBytes += recordBytes
    return this.writes
      .add(async () => {
        if (this.records.has(key) || this.writing.has(key)) return
        const number = Math.floor(block / BLOCKS_PER_SEGMENT)
        const segKey = `${fileId}/${number}`
        const unlinks = this.evict(recordBytes)
        if (this.indexedBytes + recordBytes > this.maxBytes) return
        let segment = this.segments.get(segKey)
        if (segment?.broken) return
        if (!segment) {
          const path = join(this.root, fileId, `${number}.seg`)
          // Made (empty) once, after any unlink of an earlier file of that name, before any
          // record is written: the writes of one segment run at once, each at its own offset.
          const ready = Promise.all([...unlinks, ...this.unlinking]).then(async () => {
            if (!this.folders.has(fileId)) {
              await mkdir(join(this.root, fileId), { recursive: true })
              this.folders.add(fileId)
            }
            await (await open(path, 'w', 0o600)).close()
          })
          ready.catch(() => {})
          segment = { key: segKey, path, size: 0, pins: 0, blocks: new Set(), touched: Date.now(), ready, broken: false }
          this.segments.set(segKey, segment)
        }
        // The record's place is taken now, so writes of one segment never overlap.
        const offset = segment.size
        segment.size += recordBytes
        this.indexedBytes += recordBytes
        segment.pins++
        this.writing.add(key)
        try {
          // The bytes evicted for this record leave the disk before it lands.
          await Promise.all([segment.ready, ...unlinks, ...this.unlinking])
          const sum = blockSum(parts)
          const header = Buffer.allocUnsafe(RECORD_HEADER_BYTES)
          header.writeUInt32BE(block >>> 0, 0)
          header.writeUInt32BE(length, 4)
          sum.copy(header, 8)
          await writeParts(await this.fileOf(segment), [header, ...parts], offset)
          if (this.segments.get(segKey) === segment) {
            this.records.set(key, { segment, offset: offset + RECORD_HEADER_BYTES, length, sum })
            segment.blocks.add(key)
          }
        } catch {
          // Perhaps the folder went (someone emptied the cache): the segment cannot be
          // trusted to hold what its size says, so it goes; the folder is made again.
          this.folders.delete(fileId)
          segment.broken = true
        } finally {
          this.writing.delete(key)
          segment.pins--
          if (segment.broken && segment.pins === 0 && this.segments.get(segKey) === segment) void this.drop(segment)
        }
      })
      .catch(() => {})
      .finally(() => {
        this.backlogBytes -= recordBytes
      })
  }

  /** Removes least recently used, unpinned segments until `incoming` more bytes fit; the unlinks to await. */
  private evict(incoming: number): Promise<void>[] {
    const unlinks: Promise<void>[] = []
    for (const segment of this.segments.values()) {
      if (this.indexedBytes + incoming <= this.maxBytes) break
      if (segment.pins > 0) continue
      unlinks.push(this.drop(segment))
    }
    return unlinks
  }

  /** The segment's file, open for reading and writing (both positional, so callers share it). */
  private fileOf(segment: Segment): Promise<FileHandle> {
    let file = this.openFiles.get(segment)
    if (file) this.openFiles.delete(segment)
    else {
      file = open(segment.path, FS.O_RDWR)
      file.catch(() => this.openFiles.get(segment) === file && this.openFiles.delete(segment))
    }
    this.openFiles.set(segment, file)
    // Only a file no load or write holds is closed; pinned ones wait for a later turn.
    for (const [old, f] of this.openFiles) {
      if (this.openFiles.size <= OPEN_SEGMENTS) break
      if (old.pins === 0 && old !== segment) this.closeFile(old, f)
    }
    return file
  }

  private closeFile(segment: Segment, file: Promise<FileHandle>): void {
    this.openFiles.delete(segment)
    file.then((f) => f.close()).catch(() => {})
  }

  private drop(segment: Segment): Promise<void> {
    const file = this.openFiles.get(segment)
    if (file) this.closeFile(segment, file)
    if (this.segments.get(segment.key) === segment) {
      this.segments.delete(segment.key)
      this.indexedBytes -= segment.size
      for (const key of segment.blocks) if (this.records.get(key)?.segment === segment) this.records.delete(key)
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
    for (const [segment, file] of this.openFiles) if (segment.pins === 0) this.closeFile(segment, file)
  }

  get bytes(): number {
    return this.indexedBytes
  }

  get count(): number {
    return this.records.size
  }
}

/** `length` bytes at `offset` of the file (fewer if it ends first), into `into` when given. */
async function readAt(fh: FileHandle, offset: number, length: number, into?: Buffer): Promise<Buffer> {
  const buffer = into && into.length >= length ? into : Buffer.allocUnsafe(length)
  const { bytesRead } = await fh.read(buffer, 0, length, offset)
  return buffer.subarray(0, bytesRead)
}

type StoredRecord = Omit<BlockRecord, 'segment'> & { block: number }

/** The records of a segment, in file order, up to the first that is cut short. */
async function readRecords(path: string, size: number): Promise<StoredRecord[]> {
  const out: StoredRecord[] = []
  const fh = await open(path, 'r')
  try {
    const header = Buffer.allocUnsafe(RECORD_HEADER_BYTES)
    for (let at = 0; at + RECORD_HEADER_BYTES <= size;) {
      const { bytesRead } = await fh.read(header, 0, RECORD_HEADER_BYTES, at)
      if (bytesRead < RECORD_HEADER_BYTES) break
      const length = header.readUInt32BE(4)
      const next = at + RECORD_HEADER_BYTES + length
      if (next > size) break
      out.push({ block: header.readUInt32BE(0), offset: at + RECORD_HEADER_BYTES, length, sum: Buffer.from(header.subarray(8)) })
      at = next
    }
  } finally {
    await fh.close()
  }
  return out
}
