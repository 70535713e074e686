// The session on disk: a JSON file readable by its owner only (0600), replaced durably
// (base/durable-file.ts) so that a crash never leaves a half-written file and never loses
// the one refresh token that still works.
import { mkdir, readFile, rm } from 'node:fs/promises'
import { dirname } from 'node:path'
import { writeFileDurably } from '../base/durable-file.js'
import { parseStateText } from '../base/state-file.js'

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
      const parsed = parseStateText(text, this.path)
      return isStoredSession(parsed) ? parsed : null
    } catch {
      // A damaged session is no session: signing in again writes a good one.
      return null
    }
  }

  async save(session: StoredSession): Promise<void> {
    if (!this.path) return
    const dir = dirname(this.path)
    await mkdir(dir, { recursive: true, mode: 0o700 })
    await writeFileDurably(this.path, JSON.stringify(session, null, 2) + '\n')
  }

  async clear(): Promise<void> {
    if (!this.path) return
    await rm(this.path, { force: true })
  }
}
