// MD5 as the service writes it: lowercase hex for files and ranges, base64 for upload chunks.
import { createHash } from 'node:crypto'
import { open } from 'node:fs/promises'

export function md5Hex(bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('hex')
}

export function md5Base64(bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('base64')
}

/** Bytes read at a time by md5OfFile (a smaller file is read in one go). */
const FILE_READ_BYTES = 1024 * 1024

/**
 * Lowercase hex MD5 of a file on this thread: one handle and one buffer sized to the file,
 * so a small file takes one open and one read. (Big files are better hashed on worker
 * threads: base/file-hash-pool.ts.)
 */
export async function md5OfFile(path: string): Promise<string> {
  const hash = createHash('md5')
  const handle = await open(path, 'r')
  try {
    const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(FILE_READ_BYTES, (await handle.stat()).size + 1)))
    for (let at = 0; ;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, at)
      if (bytesRead === 0) break
      hash.update(buffer.subarray(0, bytesRead))
      at += bytesRead
    }
    return hash.digest('hex')
  } finally {
    await handle.close()
  }
}

/** Lowercase hex MD5 of everything an iterable yields (a download stream). */
export async function md5OfStream(pieces: AsyncIterable<Uint8Array>): Promise<string> {
  const hash = createHash('md5')
  for await (const piece of pieces) hash.update(piece)
  return hash.digest('hex')
}
