// NFS file handles (at most 64 bytes, RFC 1813) that name the same entry after the server
// restarts. A handle names a path of the tree: one path has exactly one handle, so clients
// that compare handles see one file once. A path of up to 63 bytes is carried in the handle
// itself; a longer one is named by a digest of it, and the digest's path is kept in a table in
// the data folder (one JSON string per line, appended), read again at the next start. A line
// whose digest does not match its path (a torn last line) is skipped.
import { createHash } from 'node:crypto'
import { appendFile, readFile } from 'node:fs/promises'
import path from 'node:path'

/** The table of long paths, in the data folder. */
export const HANDLE_TABLE_FILE = 'nfs-handles.jsonl'

export const MAX_HANDLE_BYTES = 64
const INLINE = 1
const DIGEST = 2
const DIGEST_BYTES = 24
const MAX_INLINE_BYTES = MAX_HANDLE_BYTES - 1

/** "/" and "/inbox/x" as the core names them, relative ("" and "inbox/x") as handles carry them. */
const relative = (p: string): string => p.replace(/^\/+/, '')

const digestOf = (p: string): Buffer => createHash('sha256').update(p, 'utf8').digest().subarray(0, DIGEST_BYTES)

/** The path of `name` in folder `dir` (both as the core names them). */
export function childPath(dir: string, name: string): string {
  return dir === '/' ? `/${name}` : `${dir}/${name}`
}

/** The folder that holds `p` (the root for the root). */
export function parentPath(p: string): string {
  return p === '/' ? '/' : path.posix.dirname(p)
}

/**
 * A stable 64-bit file id (the inode number clients show) from the path; never 0, which
 * readdir(3) callers take for an empty slot.
 */
export function fileIdOf(p: string): bigint {
  const id = createHash('sha256').update(p, 'utf8').digest().readBigUInt64BE(0)
  return id === 0n ? 1n : id
}

export class FileHandles {
  /** Digest (hex) → path, for paths too long to carry. */
  private readonly long = new Map<string, string>()
  private writing: Promise<void> = Promise.resolve()
  private pending: string[] = []

  private constructor(private readonly table: string | null) {}

  /** The handles of a server whose table of long paths is `table` (null: kept in memory only). */
  static async open(table: string | null): Promise<FileHandles> {
    const handles = new FileHandles(table)
    if (table) {
      const text = await readFile(table, 'utf8').catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return ''
        throw err
      })
      for (const line of text.split('\n')) {
        let p: unknown
        try {
          p = JSON.parse(line)
        } catch {
          continue
        }
        if (typeof p === 'string') handles.long.set(digestOf(p).toString('hex'), p)
      }
    }
    return handles
  }

  /** The handle of the entry at `p` ("/" for the root). */
  handleOf(p: string): Buffer {
    const rel = Buffer.from(relative(p), 'utf8')
    if (rel.length <= MAX_INLINE_BYTES) return Buffer.concat([Buffer.from([INLINE]), rel])
    const digest = digestOf(p)
    const key = digest.toString('hex')
    if (!this.long.has(key)) {
      this.long.set(key, p)
      this.remember(p)
    }
    return Buffer.concat([Buffer.from([DIGEST]), digest])
  }

  /** The path `handle` names, or null when it is none of this server's (the client then hears NFS3ERR_BADHANDLE or STALE). */
  pathOf(handle: Buffer): string | null {
    if (handle.length < 1 || handle.length > MAX_HANDLE_BYTES) return null
    if (handle[0] === INLINE) {
      const rel = handle.subarray(1).toString('utf8')
      // A handle the server did not make (bytes that are not UTF-8, a NUL, "..") names nothing.
      if (!Buffer.from(rel, 'utf8').equals(handle.subarray(1)) || rel.includes('\0') || rel.split('/').some((s) => s === '..' || s === '.' || (s === '' && rel !== ''))) return null
      return `/${rel}`
    }
    if (handle[0] === DIGEST && handle.length === 1 + DIGEST_BYTES) return this.long.get(handle.subarray(1).toString('hex')) ?? null
    return null
  }

  /** Resolves once every long path handed out so far is in the table. */
  flush(): Promise<void> {
    return this.writing
  }

  private remember(p: string): void {
    if (!this.table) return
    const table = this.table
    this.pending.push(JSON.stringify(p))
    if (this.pending.length > 1) return // a write is queued already and takes this line too
    this.writing = this.writing.then(async () => {
      const lines = this.pending
      this.pending = []
      await appendFile(table, lines.join('\n') + '\n', { mode: 0o600 })
    }).catch(() => {
      // Only a restart misses the path: its handle then answers STALE and the client looks it up again.
    })
  }
}
