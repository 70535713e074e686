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
 * Lowercase hex MD5 of a file (or of bytes [start, end) of it). One handle and one buffer
 * sized to the file: a folder of small files is hashed with one open and one read each.
 */
export async function md5OfFile(path: string, options: { start?: number; end?: number; signal?: AbortSignal } = {}): Promise<string> {
  const hash = createHash('md5')
  const handle = await open(path, 'r')
  try {
    let at = options.start ?? 0
    const end = options.end ?? Infinity
    const size = Number.isFinite(end) ? end - at : (await handle.stat()).size - at
    const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(FILE_READ_BYTES, size + 1)))
    while (at < end) {
      options.signal?.throwIfAborted()
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, end - at), at)
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
