// A random read's own verified range. A read that jumps into a part of a file nothing
// holds needs a few KiB, not the 1 MiB block around them: its span is fetched with its
// range hash asked at the same time (on connections already open), verified, and handed
// on without entering the caches, which keep whole blocks. Retried like any fetch (the
// one failure policy), until the read's deadline; damaged bytes or hash are asked again.
import { IntegrityError, NetworkError } from '../api/errors.js'
import type { RetryOptions } from '../api/options.js'
import { withRetry, type RetryEvent } from '../api/retry.js'
import { bytesLength } from './bytes.js'
import { gaveUp, within, type Trouble } from './fetch-util.js'
import type { Span } from '../base/chunk-grid.js'
import { md5Of, type RangeHashes } from './range-hashes.js'
import type { RangeSource, RemoteFile } from './source.js'

export interface SpanDeps {
  source: RangeSource
  hashes: RangeHashes
  policy: RetryOptions
  stats: { bytesReceived: number; mismatches: number }
  /** A failed try: counted, and told as a fetch's trouble is (one line when retrying starts, `.status` meanwhile); the run of trouble so far. */
  troubled(e: RetryEvent): Trouble
  stallTimeoutMs: number
  deadlineMs: number
  /** Runs a transfer in the mount's fetch queue (its concurrency is shared with block fetches). */
  enqueue<T>(fn: () => Promise<T>): Promise<T>
}

export function readSpan(d: SpanDeps, file: RemoteFile, span: Span, signal: AbortSignal): Promise<Buffer[]> {
  const deadlineAt = Date.now() + d.deadlineMs
  let trouble: Trouble | null = null
  return withRetry(async () => {
    const expected = d.hashes.knownOrOnce(file, span, signal)
    expected.catch(() => {})
    const parts = await d.enqueue(() => within(d.stallTimeoutMs, signal, 'a range', async (s) => {
      const got = Buffer.allocUnsafe(span.end - span.start)
      let at = 0
      await d.source.streamRange(file, span.start, span.end, (bytes) => {
        if (at + bytes.length > got.length) throw new NetworkError('range longer than asked', 'EPROTO')
        at += bytes.copy(got, at)
      }, s)
      if (at < got.length) throw new NetworkError(`range ended at ${span.start + at} of ${span.end}`, 'ECONNRESET')
      return [got]
    }))
    d.stats.bytesReceived += bytesLength(parts)
    const actual = md5Of(parts)
    const hex = await expected
    if (hex !== actual) {
      d.stats.mismatches++
      d.hashes.forget(file, span)
      throw new IntegrityError(`bytes ${span.start}-${span.end - 1} of ${file.fileName} do not match their hash`, hex, actual)
    }
    d.hashes.confirm(file, span, hex)
    return parts
  }, {
    kind: 'download', policy: d.policy, signal, deadline: () => deadlineAt,
    onRetry: (e) => {
      trouble = d.troubled(e)
    },
  }).catch((e: unknown) => {
    throw signal.aborted ? e : gaveUp(file, e, trouble)
  })
}
