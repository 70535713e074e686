// Replacing a small file whole, so that a reader or a crash finds the old content or the
// new, never a torn mix: the new content goes to a temporary file beside it, which is
// renamed over it. Durably, the temporary file is synced before the rename and the
// folder after it, so the new content also survives a power loss once the call returns.
import { randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import path from 'node:path'

/** Folders some file systems refuse to sync; the rename is atomic there all the same. */
const DIR_SYNC_REFUSED: ReadonlySet<string> = new Set(['EINVAL', 'ENOTSUP', 'EOPNOTSUPP', 'EISDIR', 'EBADF'])

async function fsyncDir(dir: string): Promise<void> {
  try {
    const h = await fsp.open(dir, 'r')
    try {
      await h.sync()
    } finally {
      await h.close()
    }
  } catch (err) {
    if (!DIR_SYNC_REFUSED.has((err as NodeJS.ErrnoException).code ?? '')) throw err
  }
}

async function replace(file: string, content: string | Buffer, durable: boolean): Promise<void> {
  const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`
  const h = await fsp.open(tmp, 'wx', 0o600)
  try {
    try {
      await h.writeFile(content)
      if (durable) await h.sync()
    } finally {
      await h.close()
    }
    await fsp.rename(tmp, file)
  } catch (err) {
    // A full disk must not also fill the folder with the temporary files of failed writes.
    await fsp.rm(tmp, { force: true })
    throw err
  }
  if (durable) await fsyncDir(path.dirname(file))
}

/** Replaces `file` (mode 0600) with `content`, on disk before it resolves. */
export function writeFileDurably(file: string, content: string | Buffer): Promise<void> {
  return replace(file, content, true)
}

/** Replaces `file` (mode 0600) with `content` in one step for readers; not synced (it can be made again). */
export function writeFileAtomically(file: string, content: string | Buffer): Promise<void> {
  return replace(file, content, false)
}

export async function removeDurably(file: string): Promise<void> {
  await fsp.rm(file, { force: true })
  await fsyncDir(path.dirname(file))
}

/** A temporary file a replace left behind when the process died mid-way. */
export function isTempOfDurableWrite(name: string): boolean {
  return durableWriteTarget(name) !== null
}

/** The name of the file a replace's temporary file `name` was for; null when `name` is none. */
export function durableWriteTarget(name: string): string | null {
  const m = /^(.*)\.tmp-[0-9a-f]{8}$/s.exec(name)
  return m ? (m[1] as string) : null
}
