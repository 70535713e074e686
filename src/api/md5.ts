// MD5 as the service writes it: lowercase hex for files and ranges, base64 for upload chunks.
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'

export function md5Hex(bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('hex')
}

export function md5Base64(bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('base64')
}

/** Lowercase hex MD5 of a file (or of bytes [start, end) of it), read as a stream. */
export async function md5OfFile(path: string, range?: { start: number; end: number }): Promise<string> {
  const hash = createHash('md5')
  if (range && range.end <= range.start) return hash.digest('hex')
  const stream = createReadStream(path, range ? { start: range.start, end: range.end - 1 } : {})
  for await (const piece of stream) hash.update(piece as Buffer)
  return hash.digest('hex')
}

/** Lowercase hex MD5 of everything an iterable yields (a download stream). */
export async function md5OfStream(pieces: AsyncIterable<Uint8Array>): Promise<string> {
  const hash = createHash('md5')
  for await (const piece of pieces) hash.update(piece)
  return hash.digest('hex')
}
