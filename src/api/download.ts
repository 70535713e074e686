// Downloads from a file server: a byte range into a buffer (length checked), the same as
// a stream that resumes where it broke off, a whole file or the ZIP as a stream, and
// GetRangeHash, and a file's thumbnail. URLs are used as the service returned them; the range-hash host is the
// download URL's.
import { createHash } from 'node:crypto'
import { bodyBatches } from './body-batches.js'
import { NotPlainAnswer, type BodySink } from './range-sockets.js'
import { IntegrityError, NetworkError, ServiceError } from './errors.js'
import { statusError } from './envelope.js'
import { headerValue, redactUrl, toNetworkError } from './http.js'
import type { HttpResponse, Transport } from './http.js'
import type { DownloadOptions, RetryOptions } from './options.js'
import { buildQuery, FILE_SERVER_PATH, HEADER, RANGE_HASH_QUERY, STATUS } from './protocol.js'
import { classify } from './failure.js'
import { backoffDelay, sleep, withRetry } from './retry.js'

/** Bytes a body may hold unread before it is paused (the socket's flow control then slows the sender). */
const STREAM_HIGH_WATER_BYTES = 1024 * 1024
/** Bytes of a range hash's answer taken on the range connections: the MD5, or an error's envelope; a longer one is asked again through the general transport. */
const RANGE_HASH_ANSWER_LIMIT = 16 * 1024

export interface SignalOption {
  signal?: AbortSignal
}

export interface RangeHashRequest extends SignalOption {
  downloadUrl: string
  transferId: string
  fileName: string
  position: number
  length: number
}

/** Errors of the layers below, as the retry policy knows them. */
function asKnownError(err: unknown, req: { url: URL; signal?: AbortSignal }): unknown {
  if (err instanceof ServiceError || err instanceof IntegrityError || err instanceof NetworkError) return err
  return toNetworkError(err, req)
}

/** Read a small error body (or discard a large one) so the connection can be reused. */
async function drainErrorBody(res: HttpResponse): Promise<string> {
  const length = Number(headerValue(res.headers, 'content-length') ?? NaN)
  if (Number.isFinite(length) && length > 64 * 1024) {
    res.body.destroy()
    return ''
  }
  try {
    return await res.body.text()
  } catch {
    return ''
  }
}

/** Check a Content-Range header, when the server sent one, against what was asked. */
function checkContentRange(res: HttpResponse, url: URL, start: number, end: number): void {
  const value = headerValue(res.headers, 'content-range')
  if (!value) return
  const m = /^bytes (\d+)-(\d+)\//.exec(value.trim())
  if (!m || Number(m[1]) !== start || Number(m[2]) !== end - 1) {
    res.body.destroy()
    throw new IntegrityError(`${redactUrl(url)} answered another range than asked`, `bytes ${start}-${end - 1}`, value)
  }
}

/** The hex MD5 in a range-hash answer: bare, wrapped in whitespace or quotes, or an envelope's data. */
export function parseRangeHash(body: string): string | null {
  let text = body.trim()
  if (text.startsWith('{')) {
    try {
      const parsed = JSON.parse(text) as { data?: unknown }
      text = typeof parsed.data === 'string' ? parsed.data.trim() : ''
    } catch {
      return null
    }
  }
  text = text.replace(/^["']+|["']+$/g, '').trim()
  return /^[0-9a-fA-F]{32}$/.test(text) ? text.toLowerCase() : null
}

export class DownloadApi {
  private readonly policy: RetryOptions

  constructor(
    private readonly transport: Transport,
    private readonly apiKey: string,
    retry: RetryOptions,
    options: DownloadOptions,
  ) {
    this.policy = { ...retry, maxTries: options.maxTries }
  }

  private headers(range?: { start: number; end: number }): Record<string, string> {
    // The API key is optional on downloads, but the service's interface recommends sending it.
    const h: Record<string, string> = { [HEADER.apiKey]: this.apiKey }
    if (range) h[HEADER.range] = `bytes=${range.start}-${range.end - 1}`
    return h
  }

  /** A download from `downloadUrl`'s file server is likely soon: open a connection to it now. */
  preconnect(downloadUrl: string): void {
    try {
      this.transport.preconnect(new URL(downloadUrl))
    } catch {
      // Not a URL: the download itself will say so.
    }
  }

  /** Bytes [start, end) of a file: exactly end - start of them, or an error after the retries. */
  fetchRange(downloadUrl: string, start: number, end: number, options: SignalOption = {}): Promise<Buffer> {
    checkRange(start, end)
    return withRetry(() => this.fetchRangeOnce(downloadUrl, start, end, options.signal), {
      kind: 'download',
      policy: this.policy,
      signal: options.signal,
    })
  }

  /**
   * Bytes [start, end) of a file, checked against GetRangeHash of `hashed` (the transfer and
   * the file's name) when given, under the retry policy: the hash is asked while the bytes
   * stream in and are hashed as they arrive, and the parts are handed on as they came (no
   * copy into one buffer). A mismatch fetches both the bytes and the hash again: either
   * side may be the damaged one. Without `hashed` (the ZIP has no hash) only the length is checked.
   *
   * `digest`, when given, works out the MD5 of the parts once they are all in, instead of
   * hashing them here as they arrive: a caller that writes them anyway can hash what it
   * wrote on a worker thread and keep this event loop for the sockets.
   */
  fetchVerifiedRange(
    downloadUrl: string, start: number, end: number,
    hashed: { transferId: string; fileName: string } | null,
    options: SignalOption & { digest?: (parts: Buffer[]) => Promise<string> } = {},
  ): Promise<Buffer[]> {
    checkRange(start, end)
    const { signal, digest } = options
    let expected: Promise<string> | null = null
    return withRetry(async () => {
      if (hashed) {
        expected ??= this.rangeHash({ downloadUrl, ...hashed, position: start, length: end - start, signal })
        expected.catch(() => {})
      }
      const hash = expected && !digest ? createHash('md5') : null
      const parts: Buffer[] = []
      for await (const batch of this.streamRangeOnce(downloadUrl, start, end, signal)) {
        for (const part of batch) {
          hash?.update(part)
          parts.push(part)
        }
      }
      if (expected) {
        const actual = hash ? hash.digest('hex') : await digest!(parts)
        const wanted = await expected.catch((err: unknown) => {
          expected = null
          throw err
        })
        if (actual !== wanted) {
          expected = null
          throw new IntegrityError(`bytes ${start}-${end - 1} of ${hashed!.fileName} do not match their hash`, wanted, actual)
        }
      }
      return parts
    }, { kind: 'download', policy: this.policy, signal })
  }

  /** One try of fetchRange, no retry (the read path's own fetch-and-verify loop uses it). */
  async fetchRangeOnce(downloadUrl: string, start: number, end: number, signal?: AbortSignal): Promise<Buffer> {
    const url = new URL(downloadUrl)
    const req = { url, method: 'GET' as const, headers: this.headers({ start, end }), signal }
    const res = await this.transport.request(req)
    if (res.status !== STATUS.partialContent) {
      const text = res.status === STATUS.ok ? (res.body.destroy(), '') : await drainErrorBody(res)
      throw statusError('download', url, res.status, res.headers, text)
    }
    checkContentRange(res, url, start, end)
    const length = end - start
    const out = Buffer.allocUnsafe(length)
    let received = 0
    try {
      for await (const piece of res.body as AsyncIterable<Buffer>) {
        if (received + piece.length > length) {
          throw new IntegrityError(`${redactUrl(url)} sent more bytes than the range holds`, `${length} bytes`, `more than ${length} bytes`)
        }
        piece.copy(out, received)
        received += piece.length
      }
    } catch (err) {
      res.body.destroy()
      throw asKnownError(err, req)
    }
    if (received !== length) {
      throw new IntegrityError(`${redactUrl(url)} sent a short range`, `${length} bytes`, `${received} bytes`)
    }
    return out
  }

  /**
   * Size of the file at `downloadUrl`, for a file whose size no listing gives (the ZIP):
   * the total of the Content-Range answering a one-byte range (416 for an empty file).
   */
  size(downloadUrl: string, options: SignalOption = {}): Promise<number> {
    const url = new URL(downloadUrl)
    return withRetry(async () => {
      const res = await this.transport.request({ url, method: 'GET', headers: this.headers({ start: 0, end: 1 }), signal: options.signal })
      const total = /\/(\d+)\s*$/.exec(headerValue(res.headers, 'content-range') ?? '')
      const length = Number(headerValue(res.headers, 'content-length') ?? NaN)
      if ((res.status === STATUS.partialContent || res.status === STATUS.rangeNotSatisfiable) && total) {
        res.body.destroy()
        return Number(total[1])
      }
      if (res.status === STATUS.ok && Number.isFinite(length)) {
        res.body.destroy()
        return length
      }
      throw statusError('download', url, res.status, res.headers, await drainErrorBody(res))
    }, { kind: 'download', policy: this.policy, signal: options.signal })
  }

  /**
   * Bytes [start, end) as pieces in order, as they arrive. A broken connection or an
   * error status is retried from the first byte not yet given, so the caller sees one
   * uninterrupted sequence.
   */
  streamRange(downloadUrl: string, start: number, end: number, options: SignalOption = {}): AsyncIterable<Buffer> {
    checkRange(start, end)
    return this.resumableStream(new URL(downloadUrl), start, end, options.signal)
  }

  /** A whole file as a stream; `size` lets a resumed request name its range without asking first. */
  streamFile(downloadUrl: string, options: SignalOption & { size?: number } = {}): AsyncIterable<Buffer> {
    return this.resumableStream(new URL(downloadUrl), 0, options.size ?? null, options.signal)
  }

  /** The transfer as one ZIP archive (Transfer.compressedfileurl). */
  streamZip(compressedFileUrl: string, options: SignalOption & { size?: number } = {}): AsyncIterable<Buffer> {
    return this.streamFile(compressedFileUrl, options)
  }

  /**
   * One try of bytes [start, end), handed to `sink` in order as they arrive (valid only
   * during each call: the sink copies what it keeps; a promise it returns holds the rest
   * back until it settles). The read path's own fetch-and-verify loop retries. Streamed
   * on connections of their own (range-sockets.ts); an answer that is not simply those
   * bytes is asked again through the general transport, which reports it as every
   * download does.
   */
  async pumpRange(downloadUrl: string, start: number, end: number, sink: BodySink, signal?: AbortSignal): Promise<void> {
    checkRange(start, end)
    const url = new URL(downloadUrl)
    try {
      await this.transport.streamRange(url, this.headers({ start, end }), start, end, sink, signal)
      return
    } catch (err) {
      // The transport reports its own failures as network errors, and passes the sink's on as they are.
      if (!(err instanceof NotPlainAnswer)) throw err
    }
    for await (const batch of this.streamRangeOnce(downloadUrl, start, end, signal)) {
      for (const part of batch) {
        const paused = sink(part)
        if (paused) await paused
      }
    }
  }

  /**
   * One try of bytes [start, end) in order, as batches of the pieces that arrived together
   * (body-batches.ts; the read path's own fetch-and-verify loop retries). A body that ends
   * early throws NetworkError SHORT_BODY.
   */
  async *streamRangeOnce(downloadUrl: string, start: number, end: number, signal?: AbortSignal): AsyncGenerator<Buffer[]> {
    checkRange(start, end)
    const url = new URL(downloadUrl)
    let position = start
    for await (const batch of this.openStream(url, start, end, signal)) {
      for (const part of batch) position += part.length
      yield batch
    }
    if (position < end) throw new NetworkError(`${redactUrl(url)} ended the body early`, 'SHORT_BODY')
  }

  /**
   * One request for [start, end) (or the whole body when `end` is null and start is 0),
   * its pieces cut to the range; `onLength` learns the body's length when it was unknown.
   */
  private async *openStream(url: URL, start: number, end: number | null, signal?: AbortSignal, onLength?: (n: number) => void): AsyncGenerator<Buffer[]> {
    const ranged = end !== null
    const req = { url, method: 'GET' as const, headers: this.headers(ranged ? { start, end } : undefined), signal }
    try {
      const res = await this.transport.request(req)
      const expected = ranged ? STATUS.partialContent : STATUS.ok
      if (res.status !== expected) throw statusError('download', url, res.status, res.headers, await drainErrorBody(res))
      if (ranged) checkContentRange(res, url, start, end)
      else {
        const length = Number(headerValue(res.headers, 'content-length') ?? NaN)
        if (Number.isFinite(length)) onLength?.(length)
      }
      let position = start
      try {
        for await (const batch of bodyBatches(res.body, STREAM_HIGH_WATER_BYTES)) {
          const parts: Buffer[] = []
          for (const piece of batch) {
            const room = end === null ? piece.length : end - position
            if (room <= 0) break
            const part = piece.length > room ? piece.subarray(0, room) : piece
            position += part.length
            if (part.length) parts.push(part)
          }
          if (parts.length) yield parts
          if (end !== null && position >= end) break
        }
      } finally {
        res.body.destroy()
      }
    } catch (caught) {
      throw asKnownError(caught, req)
    }
  }

  private async *resumableStream(url: URL, start: number, knownEnd: number | null, signal?: AbortSignal): AsyncGenerator<Buffer> {
    let end = knownEnd
    let position = start
    let failures = 0
    let deadline = Date.now() + this.policy.deadlineMs
    if (end === 0) return
    while (end === null || position < end) {
      const before = position
      try {
        // Without a length a broken whole-body stream could not be resumed with a `bytes=a-b` range.
        const whole = position === 0 && knownEnd === null
        for await (const batch of this.openStream(url, position, whole ? null : end, signal, (n) => { end = n })) {
          for (const part of batch) {
            position += part.length
            yield part
          }
        }
        if (end === null) return
        if (position < end) throw new NetworkError(`${redactUrl(url)} ended the body early`, 'SHORT_BODY')
      } catch (err) {
        if (signal?.aborted) throw signal.reason ?? err
        // Bytes arrived: this is a new run of failures, with its own backoff and deadline.
        if (position > before) {
          failures = 0
          deadline = Date.now() + this.policy.deadlineMs
        }
        failures++
        const verdict = classify('download', err)
        const resumable = end !== null || position === 0
        if (!verdict.retry || !resumable || failures >= this.policy.maxTries) throw err
        const waitMs = verdict.waitMs ?? backoffDelay(failures - 1, this.policy)
        if (Date.now() + waitMs > deadline) throw err
        await sleep(waitMs, signal)
      }
    }
  }

  /** Lowercase hex MD5 of bytes [position, position + length), from the download URL's file server, under the retry policy. */
  rangeHash(request: RangeHashRequest, policy: RetryOptions = this.policy): Promise<string> {
    return withRetry(() => this.rangeHashOnce(request), { kind: 'hash', policy, signal: request.signal })
  }

  /** One try of rangeHash; an answer that holds no MD5 (damaged on the way) is an IntegrityError, asked again by the policy. */
  async rangeHashOnce(request: RangeHashRequest): Promise<string> {
    const base = new URL(request.downloadUrl)
    const url = new URL(
      `${base.origin}${FILE_SERVER_PATH.rangeHash}${buildQuery({
        [RANGE_HASH_QUERY.transferId]: request.transferId,
        [RANGE_HASH_QUERY.fileName]: request.fileName,
        [RANGE_HASH_QUERY.position]: request.position,
        [RANGE_HASH_QUERY.length]: request.length,
      })}`,
    )
    const res = await this.transport.requestShortText({ url, method: 'GET', headers: this.headers(), signal: request.signal }, RANGE_HASH_ANSWER_LIMIT)
    if (res.status !== STATUS.ok) throw statusError('range hash', url, res.status, res.headers, res.text)
    const hex = parseRangeHash(res.text)
    if (hex === null) throw new IntegrityError(`range hash ${redactUrl(url)}: the answer holds no MD5`, 'a 32-digit hex MD5', res.text.slice(0, 64))
    return hex
  }

  /**
   * A file's thumbnail (its `previewurl`), at most `maxBytes`, one try: a thumbnail is a
   * nicety fetched in the background, so a failure is simply no thumbnail this time.
   */
  async preview(previewUrl: string, maxBytes: number, options: SignalOption = {}): Promise<Buffer> {
    const url = new URL(previewUrl)
    const req = { url, method: 'GET' as const, headers: this.headers(), signal: options.signal }
    const res = await this.transport.request(req)
    if (res.status !== STATUS.ok) throw statusError('thumbnail', url, res.status, res.headers, await drainErrorBody(res))
    const parts: Buffer[] = []
    let received = 0
    try {
      for await (const piece of res.body as AsyncIterable<Buffer>) {
        received += piece.length
        if (received > maxBytes) throw new IntegrityError(`${redactUrl(url)}: a thumbnail larger than ${maxBytes} bytes`, `at most ${maxBytes} bytes`, `more`)
        parts.push(piece)
      }
    } catch (err) {
      res.body.destroy()
      throw asKnownError(err, req)
    }
    return Buffer.concat(parts)
  }
}

function checkRange(start: number, end: number): void {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end <= start) {
    throw new RangeError(`invalid byte range [${start}, ${end})`)
  }
}
