// Uploads to the file server (transferurl from initialize): the file in chunks of one
// size, each with its base64 MD5, up to four in flight, each retried on 406 / 449 /
// network errors, with progress and resume from chunks the caller knows were confirmed.
// Only the chunks in flight are ever in memory.
import { open, stat } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { chunkRange, planChunks } from './chunk-plan.js'
import type { ChunkPlan } from './chunk-plan.js'
import { statusError } from './envelope.js'
import type { Transport } from './http.js'
import { md5Base64 } from './md5.js'
import type { RetryOptions, UploadOptions } from './options.js'
import { buildQuery, HEADER, STATUS, UPLOAD_CHUNK_BYTES, UPLOAD_QUERY } from './protocol.js'
import { withRetry } from './retry.js'

/** Bytes [start, end) of the file being sent. */
export type ChunkReader = (start: number, end: number) => Promise<Buffer>

export type UploadSource = { path: string } | { size: number; read: ChunkReader }

export interface UploadProgress {
  fileName: string
  confirmedChunks: number
  chunks: number
  confirmedBytes: number
  totalBytes: number
}

export interface UploadRequest {
  /** InitializeResult.transferurl, as returned. */
  transferUrl: string
  transferId: string
  transferKey: string
  /** Name in the transfer (may contain a path). */
  fileName: string
  source: UploadSource
  /** Bytes per chunk; the largest the service takes (UPLOAD_CHUNK_BYTES) when absent. */
  chunkSize?: number
  /** Chunk indices already confirmed by the service in an earlier attempt (same chunk size!). */
  confirmed?: Iterable<number>
  /** Called once per chunk the service confirmed, before it counts as done (a journal writes it down here). */
  onChunkConfirmed?: (index: number, plan: ChunkPlan) => void | Promise<void>
  onProgress?: (progress: UploadProgress) => void
  signal?: AbortSignal
}

export class UploadApi {
  private readonly policy: RetryOptions

  constructor(
    private readonly transport: Transport,
    retry: RetryOptions,
    readonly options: UploadOptions,
  ) {
    this.policy = { ...retry, maxTries: options.maxTries }
  }

  /** Send a file; resolves once every chunk is confirmed. Returns the plan used. */
  async uploadFile(req: UploadRequest): Promise<ChunkPlan> {
    let handle: FileHandle | null = null
    let size: number
    let read: ChunkReader
    if ('path' in req.source) {
      size = (await stat(req.source.path)).size
      handle = await open(req.source.path, 'r')
      const h = handle
      read = async (start, end) => {
        const buf = Buffer.allocUnsafe(end - start)
        let got = 0
        while (got < buf.length) {
          const { bytesRead } = await h.read(buf, got, buf.length - got, start + got)
          if (bytesRead === 0) throw new Error(`the file shrank while being sent (${req.fileName})`)
          got += bytesRead
        }
        return buf
      }
    } else {
      size = req.source.size
      read = req.source.read
    }
    try {
      const plan = planChunks(size, req.chunkSize ?? UPLOAD_CHUNK_BYTES)
      await this.sendChunks(req, plan, read)
      return plan
    } finally {
      await handle?.close()
    }
  }

  private async sendChunks(req: UploadRequest, plan: ChunkPlan, read: ChunkReader): Promise<void> {
    const done = new Set<number>()
    for (const i of req.confirmed ?? []) if (i >= 0 && i < plan.chunks) done.add(i)
    let confirmedBytes = 0
    for (const i of done) {
      const r = chunkRange(plan, i)
      confirmedBytes += r.end - r.start
    }
    const pending = Array.from({ length: plan.chunks }, (_, i) => i).filter((i) => !done.has(i))
    const progress = () =>
      req.onProgress?.({
        fileName: req.fileName, confirmedChunks: done.size, chunks: plan.chunks, confirmedBytes, totalBytes: plan.size,
      })
    progress()
    // One chunk failing for good stops the others: the file cannot complete anyway.
    const stop = new AbortController()
    const signal = req.signal ? AbortSignal.any([req.signal, stop.signal]) : stop.signal
    let next = 0
    const worker = async () => {
      while (next < pending.length && !signal.aborted) {
        const index = pending[next++]!
        const { start, end } = chunkRange(plan, index)
        const bytes = await read(start, end)
        await this.sendChunk(req, plan, index, bytes, signal)
        await req.onChunkConfirmed?.(index, plan)
        done.add(index)
        confirmedBytes += bytes.length
        progress()
      }
    }
    const workers = Math.max(1, Math.min(this.options.parallelChunks, pending.length))
    await Promise.allSettled(Array.from({ length: workers }, () => worker().catch((err: unknown) => stop.abort(err))))
    if (stop.signal.aborted) throw stop.signal.reason
    if (req.signal?.aborted) throw req.signal.reason
  }

  private sendChunk(req: UploadRequest, plan: ChunkPlan, index: number, bytes: Buffer, signal: AbortSignal): Promise<void> {
    const md5 = md5Base64(bytes)
    return withRetry(
      async (attempt) => {
        const query = buildQuery({
          [UPLOAD_QUERY.transferId]: req.transferId,
          [UPLOAD_QUERY.transferKey]: req.transferKey,
          [UPLOAD_QUERY.fileName]: req.fileName,
          [UPLOAD_QUERY.chunkSize]: plan.chunkSize,
          [UPLOAD_QUERY.chunks]: plan.chunks,
          [UPLOAD_QUERY.chunk]: index,
          [UPLOAD_QUERY.md5]: md5,
          [UPLOAD_QUERY.retry]: attempt > 0 ? attempt : undefined,
        })
        const base = new URL(req.transferUrl)
        const url = new URL(`${base.origin}${base.pathname}${base.search ? `${base.search}&${query.slice(1)}` : query}`)
        const res = await this.transport.requestText({
          url,
          method: 'POST',
          headers: { [HEADER.contentType]: 'application/octet-stream' },
          body: bytes,
          signal,
        })
        if (res.status !== STATUS.ok) throw statusError(`upload of chunk ${index} of ${req.fileName}`, url, res.status, res.headers, res.text)
      },
      { kind: 'upload', policy: this.policy, signal },
    )
  }
}
