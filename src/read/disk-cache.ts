// Verified blocks on disk, in the user cache folder, least recently used out first,
// bounded in bytes, surviving a remount. Layout: <dir>/blocks-v2/<file>/<block>.blk
// where <file> is a hash of RemoteFile.cacheKey (so a replaced file, having a new key,
// can never find the old bytes). Blocks were verified before they got here. A block is
// written to a temp file and renamed into place, followed by a CRC-32 of its bytes: a
// block a crash tore or a disk damaged fails its CRC on load and is dropped, so no fsync
// is needed (one per block cost more CPU than the rest of a cold read together). An MD5
// per block would cost a second hash of every byte received, since the service hashes
// pieces, not blocks; CRC-32 runs at memory speed. The index lives in memory and is
// rebuilt from the folder at start, recency from mtime. Disk I/O is all async.
import { createHash, randomBytes } from 'node:crypto'
import { crc32 } from 'node:zlib'
import { mkdir, open, readdir, rename, rm, stat, unlink, utimes } from 'node:fs/promises'
import { writeParts } from '../api/file-io.js'
import { bytesLength } from './bytes.js'
import type { Block } from './memory-cache.js'
import { join } from 'node:path'
import PQueue from 'p-queue'

interface Entry {
  path: string
  size: number
  /** Loads in progress: eviction leaves the entry alone. */
  pins: number
  /** ms since the epoch: the file's mtime as last set, which carries recency across mounts. */
  touched: number
}

/**
 * A loaded block's mtime is brought forward only when older than this: recency across
 * mounts needs no finer grain, and a utimes per load was one more trip into libuv's
 * thread pool for every MiB re-read.
 */
const TOUCH_GRAIN_MS = 10 * 60 * 1000

const NAME = /^(\d+)\.blk$/
/**
 * Bytes of blocks waiting to be written at most; past that a block is not cached (the cache
 * is best effort). Blocks evicted from memory before they are written live on here, so
 * this comes out of the memory budget (see blockCacheBytes in content.ts).
 */
export const MAX_WRITE_BACKLOG = 32 * 1024 * 1024
/**
 * Block writes under way at once. Each is four calls into libuv's thread pool (open, write,
 * close, rename); with two at a time a busy main thread left them so far behind a cold
 * read that a fifth of a 1 GiB file never reached the cache.
 */
const WRITES_AT_ONCE = 8

export class DiskBlockCache {
  /** Map order is recency: first = least recently used. */
  private readonly index = new Map<string, Entry>()
  private readonly fileIds = new Map<string, string>()
  private readonly writes = new PQueue({ concurrency: WRITES_AT_ONCE })
  private indexedBytes = 0
  private reservedBytes = 0
  private backlogBytes = 0
  /** File folders known to exist (made once, not at every write). */
  private readonly folders = new Set<string>()
  /** Unlinks under way: their bytes left the budget but may still be on disk. */
  private readonly unlinking = new Set<Promise<void>>()

  private constructor(
    private readonly root: string,
    readonly maxBytes: number,
  ) {}

  /** Opens the cache in `dir`, rebuilding the index from what is there. */
  static async open(dir: string, maxBytes: number): Promise<DiskBlockCache> {
    const cache = new DiskBlockCache(join(dir, 'blocks-v2'), maxBytes)
    // Blocks of the earlier layout (no CRC) are never read again.
    await rm(join(dir, 'blocks-v1'), { recursive: true, force: true })
    await cache.rebuild()
    return cache
  }

  private get tmpDir(): string {
    return join(this.root, 'tmp')
  }

  private async rebuild(): Promise<void> {
    await rm(this.tmpDir, { recursive: true, force: true })
    await mkdir(this.tmpDir, { recursive: true })
    const found: { key: string; entry: Entry; mtime: number }[] = []
    for (const fileId of await readdir(this.root)) {
      if (fileId === 'tmp') continue
      const folder = join(this.root, fileId)
      let names: string[]
      try {
        names = await readdir(folder)
      } catch {
        continue
      }
      await Promise.all(
        names.map(async (name) => {
          const path = join(folder, name)
          const m = NAME.exec(name)
          if (!m) return void (await rm(path, { force: true, recursive: true }))
          const st = await stat(path).catch(() => null)
          if (!st?.isFile()) return
          const entry: Entry = { path, size: st.size, pins: 0, touched: st.mtimeMs }
          found.push({ key: `${fileId}/${m[1]}`, entry, mtime: st.mtimeMs })
        }),
      )
    }
    found.sort((a, b) => a.mtime - b.mtime)
    for (const f of found) {
      this.index.set(f.key, f.entry)
      this.indexedBytes += f.entry.size
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
    return this.index.has(`${this.fileId(cacheKey)}/${block}`)
  }

  /** The block's bytes, or undefined when absent, unreadable or not what was stored. */
  async get(cacheKey: string, block: number, expectedLength: number): Promise<Buffer | undefined> {
    const key = `${this.fileId(cacheKey)}/${block}`
    const entry = this.index.get(key)
    if (!entry) return undefined
    entry.pins++
    let data: Buffer | undefined
    try {
      data = await readExactly(entry.path, expectedLength + CRC_BYTES)
    } catch {
      data = undefined
    } finally {
      entry.pins--
    }
    const bytes = data && intact(data, expectedLength)
    if (this.index.get(key) !== entry) return bytes
    if (bytes === undefined) {
      void this.drop(key, entry)
      return undefined
    }
    this.index.delete(key)
    this.index.set(key, entry)
    const now = Date.now()
    if (now - entry.touched > TOUCH_GRAIN_MS) {
      entry.touched = now
      utimes(entry.path, now / 1000, now / 1000).catch(() => {})
    }
    return bytes
  }

  /**
   * Stores a verified block in the background. The returned promise is only for tests
   * and shutdown; a failure (disk full, folder gone) just leaves the block uncached.
   */
  put(cacheKey: string, block: number, parts: Block): Promise<void> {
    const fileId = this.fileId(cacheKey)
    const key = `${fileId}/${block}`
    const length = bytesLength(parts) + CRC_BYTES
    if (this.index.has(key) || length > this.maxBytes) return Promise.resolve()
    if (this.backlogBytes + length > MAX_WRITE_BACKLOG) return Promise.resolve()
    this.backlogBytes += length
    return this.writes
      .add(async () => {
        if (this.index.has(key)) return
        const unlinks = this.evict(length)
        if (this.indexedBytes + this.reservedBytes + length > this.maxBytes) return
        this.reservedBytes += length
        const tmp = join(this.tmpDir, `${randomBytes(8).toString('hex')}.tmp`)
        const path = join(this.root, fileId, `${block}.blk`)
        try {
          await Promise.all([...unlinks, ...this.unlinking])
          if (!this.folders.has(fileId)) {
            await mkdir(join(this.root, fileId), { recursive: true })
            this.folders.add(fileId)
          }
          const fh = await open(tmp, 'w')
          try {
            await writeParts(fh, [...parts, crcOf(parts)], 0)
          } finally {
            await fh.close()
          }
          await rename(tmp, path)
          this.index.set(key, { path, size: length, pins: 0, touched: Date.now() })
          this.indexedBytes += length
        } catch {
          // Perhaps the folder went (someone emptied the cache): make it again next time.
          this.folders.delete(fileId)
          await unlink(tmp).catch(() => {})
        } finally {
          this.reservedBytes -= length
        }
      })
      .catch(() => {})
      .finally(() => {
        this.backlogBytes -= length
      })
  }

  /** Removes least recently used, unpinned entries until `incoming` more bytes fit; the unlinks to await. */
  private evict(incoming: number): Promise<void>[] {
    const unlinks: Promise<void>[] = []
    for (const [key, entry] of this.index) {
      if (this.indexedBytes + this.reservedBytes + incoming <= this.maxBytes) break
      if (entry.pins > 0) continue
      unlinks.push(this.drop(key, entry))
    }
    return unlinks
  }

  private drop(key: string, entry: Entry): Promise<void> {
    if (this.index.get(key) === entry) {
      this.index.delete(key)
      this.indexedBytes -= entry.size
    }
    const done: Promise<void> = unlink(entry.path)
      .catch(() => {})
      .finally(() => this.unlinking.delete(done))
    this.unlinking.add(done)
    return done
  }

  /** Resolves when every write started so far is on disk (or given up). */
  async flush(): Promise<void> {
    await this.writes.onIdle()
  }

  get bytes(): number {
    return this.indexedBytes + this.reservedBytes
  }

  get count(): number {
    return this.index.size
  }
}

/** Bytes of the CRC-32 that follows a block's bytes in its file. */
const CRC_BYTES = 4

function crcOf(parts: Block): Buffer {
  let crc = 0
  for (const p of parts) crc = crc32(p, crc)
  const out = Buffer.allocUnsafe(CRC_BYTES)
  out.writeUInt32BE(crc >>> 0)
  return out
}

/**
 * The file's bytes, up to one more than `length`: one open, one read, one close (readFile
 * also asks the size and reads in 512 KiB steps). A file of any other length comes back
 * at its own length (or length + 1), which intact() refuses.
 */
async function readExactly(path: string, length: number): Promise<Buffer> {
  const fh = await open(path, 'r')
  try {
    const buffer = Buffer.allocUnsafe(length + 1)
    // A short read of a regular file is its end: a file of the right length takes one read.
    const { bytesRead } = await fh.read(buffer, 0, buffer.length, 0)
    return buffer.subarray(0, bytesRead)
  } finally {
    await fh.close()
  }
}

/** The block's bytes when the file holds exactly them and their CRC. */
function intact(file: Buffer, expectedLength: number): Buffer | undefined {
  if (file.length !== expectedLength + CRC_BYTES) return undefined
  const data = file.subarray(0, expectedLength)
  return crc32(data) >>> 0 === file.readUInt32BE(expectedLength) ? data : undefined
}
