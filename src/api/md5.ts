// MD5 as the service writes it: lowercase hex for files and ranges, base64 for upload chunks.
// (The MD5 of a file on disk is base/file-hash-pool.ts's md5OfFile.)
import { createHash } from 'node:crypto'

export function md5Hex(bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('hex')
}

export function md5Base64(bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('base64')
}

/** Lowercase hex MD5 of everything an iterable yields (a download stream). */
export async function md5OfStream(pieces: AsyncIterable<Uint8Array>): Promise<string> {
  const hash = createHash('md5')
  for await (const piece of pieces) hash.update(piece)
  return hash.digest('hex')
}
