// A whole file to disk the way the interface describes: ranged chunks, a few in flight,
// each checked against GetRangeHash and fetched again on a mismatch, each written at
// its own position.
import { open } from 'node:fs/promises'
import type { DownloadApi } from './download.js'
import { IntegrityError } from './errors.js'
import { writeParts } from './file-io.js'
import { md5OfFile } from './md5.js'

export interface DownloadFileRequest {
  downloadUrl: string
  transferId: string
  /** FileDto.filename, for GetRangeHash. */
  fileName: string
  size: number
  /** Lowercase hex MD5 of the whole file, checked at the end when given. */
  md5?: string | null
  /** Where to write; created or truncated. */
  path: string
  /** Check each chunk with GetRangeHash (default true). */
  verifyChunks?: boolean
  onProgress?: (progress: { bytesDone: number; totalBytes: number }) => void
  signal?: AbortSignal
}

/** Byte ranges [start, end) of `chunkSize` each, the last one shorter. */
export function downloadChunks(size: number, chunkSize: number): Array<{ start: number; end: number }> {
  const chunks: Array<{ start: number; end: number }> = []
  for (let start = 0; start < size; start += chunkSize) chunks.push({ start, end: Math.min(size, start + chunkSize) })
  return chunks
}

export async function downloadFile(api: DownloadApi, req: DownloadFileRequest): Promise<void> {
  const { chunkSize, parallelChunks } = api.options
  const verify = req.verifyChunks ?? true
  const chunks = downloadChunks(req.size, chunkSize)
  const handle = await open(req.path, 'w', 0o644)
  // One failed chunk stops the others: their bytes would be thrown away.
  const stop = new AbortController()
  const signal = req.signal ? AbortSignal.any([req.signal, stop.signal]) : stop.signal
  let next = 0
  let bytesDone = 0
  const worker = async () => {
    while (next < chunks.length && !signal.aborted) {
      const { start, end } = chunks[next++]!
      const hashed = verify ? { transferId: req.transferId, fileName: req.fileName } : null
      const parts = await api.fetchVerifiedRange(req.downloadUrl, start, end, hashed, { signal })
      await writeParts(handle, parts, start)
      bytesDone += end - start
      req.onProgress?.({ bytesDone, totalBytes: req.size })
    }
  }
  try {
    // allSettled: the file stays open until every worker has stopped writing.
    await Promise.allSettled(
      Array.from({ length: Math.min(parallelChunks, Math.max(1, chunks.length)) }, () =>
        worker().catch((err: unknown) => stop.abort(err)),
      ),
    )
    if (stop.signal.aborted) throw stop.signal.reason
    if (req.signal?.aborted) throw req.signal.reason
    await handle.sync()
  } finally {
    await handle.close()
  }
  // Chunks checked against their range hashes cover the file: reading it back to hash it
  // again would double the work. Unchecked chunks are checked as a whole here.
  if (req.md5 && !verify) {
    const actual = await md5OfFile(req.path)
    if (actual !== req.md5.toLowerCase()) throw new IntegrityError(`${req.fileName} does not match its MD5`, req.md5, actual)
  }
}
