// Durable small-file writes: a file is replaced only once its new content is on disk
// (write temp + fsync + rename + fsync of the folder), so a crash leaves either the old
// or the new content, never a torn one.
import { randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import path from 'node:path'

export async function fsyncDir(dir: string): Promise<void> {
  const h = await fsp.open(dir, 'r')
  try {
    await h.sync()
  } finally {
    await h.close()
  }
}

export async function writeFileDurably(file: string, content: string | Buffer): Promise<void> {
  const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`
  const h = await fsp.open(tmp, 'w', 0o600)
  try {
    await h.writeFile(content)
    await h.sync()
  } finally {
    await h.close()
  }
  try {
    await fsp.rename(tmp, file)
  } catch (err) {
    await fsp.rm(tmp, { force: true })
    throw err
  }
  await fsyncDir(path.dirname(file))
}

export async function removeDurably(file: string): Promise<void> {
  await fsp.rm(file, { force: true })
  await fsyncDir(path.dirname(file))
}

export function isTempOfDurableWrite(name: string): boolean {
  return /\.tmp-[0-9a-f]{8}$/.test(name)
}
