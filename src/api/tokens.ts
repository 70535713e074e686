// The session on disk: a JSON file readable by its owner only (0600), replaced
// atomically (write a temporary file, fsync, rename) so that a crash never leaves a
// half-written file and never loses the one refresh token that still works.
import { randomBytes } from 'node:crypto'
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises'
import { dirname } from 'node:path'

export interface StoredSession {
  email: string | null
  logintoken: string
  /** As the service gave it (unix ms). */
  logintokenExpireDate: number
  refreshtoken: string
  /** Unix ms of the last write. */
  savedAt: number
}

function isStoredSession(v: unknown): v is StoredSession {
  const s = v as StoredSession
  return typeof s === 'object' && s !== null && typeof s.logintoken === 'string' && typeof s.refreshtoken === 'string'
}

export class TokenStore {
  /** `path` undefined: the session lives in memory only. */
  constructor(readonly path: string | undefined) {}

  async load(): Promise<StoredSession | null> {
    if (!this.path) return null
    let text: string
    try {
      text = await readFile(this.path, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    }
    try {
      const parsed: unknown = JSON.parse(text)
      return isStoredSession(parsed) ? parsed : null
    } catch {
      return null
    }
  }

  async save(session: StoredSession): Promise<void> {
    if (!this.path) return
    const dir = dirname(this.path)
    await mkdir(dir, { recursive: true, mode: 0o700 })
    const tmp = `${this.path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
    const handle = await open(tmp, 'wx', 0o600)
    try {
      await handle.writeFile(JSON.stringify(session, null, 2) + '\n', 'utf8')
      await handle.sync()
    } finally {
      await handle.close()
    }
    try {
      await rename(tmp, this.path)
    } catch (err) {
      await rm(tmp, { force: true })
      throw err
    }
    // The rename itself is durable only once the directory is synced.
    try {
      const d = await open(dir, 'r')
      try { await d.sync() } finally { await d.close() }
    } catch {
      // Some file systems refuse fsync on a directory; the rename is still atomic.
    }
  }

  async clear(): Promise<void> {
    if (!this.path) return
    await rm(this.path, { force: true })
  }
}
