// The MD5 each verified range is checked against: the file's own for a range that is the
// whole file, else GetRangeHash. Answers are kept (a cacheKey's bytes never change), one
// request per range is in flight however many want it, and at most maxConcurrentHashes
// run at once across the mount. A hash found not to match its bytes is forgotten: either
// side may be the damaged one, so both are asked again.
import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import PQueue from 'p-queue'
import type { RetryOptions } from '../api/options.js'
import { withRetry, type RetryEvent } from '../api/retry.js'
import { within } from './fetch-util.js'
import type { Span } from '../base/chunk-grid.js'
import type { RangeSource, RemoteFile } from './source.js'

/** How the asking read retries: until its deadline, telling of each failed try. */
export interface HashWait {
  signal: AbortSignal
  deadline: () => number
  onRetry?: (e: RetryEvent) => void
}

export class RangeHashes {
  private readonly queue: PQueue
  private readonly known = new LRUCache<string, string>({ max: 20_000 })
  private readonly asked = new Map<string, Promise<string>>()

  constructor(
    private readonly source: RangeSource,
    private readonly settings: { maxConcurrentHashes: number; hashTimeoutMs: number },
    private readonly policy: RetryOptions,
  ) {
    this.queue = new PQueue({ concurrency: settings.maxConcurrentHashes })
  }

  /** The expected MD5 of `span`, retried under the one failure policy until the waiter's deadline. */
  expected(file: RemoteFile, span: Span, wait: HashWait): Promise<string> {
    if (span.start === 0 && span.end === file.size && file.md5) return Promise.resolve(file.md5.toLowerCase())
    const key = keyOf(file, span)
    const known = this.known.get(key)
    if (known !== undefined) return Promise.resolve(known)
    const asked = this.asked.get(key)
    if (asked) return asked
    const request = withRetry(() => this.once(file, span, wait.signal), { kind: 'hash', policy: this.policy, ...wait })
      .then((hex) => {
        this.known.set(key, hex)
        return hex
      })
      .finally(() => this.asked.delete(key))
    this.asked.set(key, request)
    return request
  }

  /** One try, unless the answer is known already (a random read asks it with its bytes, and retries both together). */
  knownOrOnce(file: RemoteFile, span: Span, signal: AbortSignal): Promise<string> {
    const known = this.known.get(keyOf(file, span))
    return known !== undefined ? Promise.resolve(known) : this.once(file, span, signal)
  }

  /** The bytes matched: keep the hash. */
  confirm(file: RemoteFile, span: Span, hex: string): void {
    this.known.set(keyOf(file, span), hex)
  }

  /** The bytes did not match: ask again next time. */
  forget(file: RemoteFile, span: Span): void {
    this.known.delete(keyOf(file, span))
  }

  /**
   * One GetRangeHash, in the queue, bounded by hashTimeoutMs. The queue is not given the
   * signal: a fetch asks the hashes of all its pieces at once under one signal, and a
   * listener on it for each waiting request trips Node's leak warning. A request whose
   * signal aborted while it waited ends when its turn comes, without asking anything.
   */
  private async once(file: RemoteFile, span: Span, signal: AbortSignal): Promise<string> {
    const hex = await this.queue.add(() => {
      signal.throwIfAborted()
      return within(this.settings.hashTimeoutMs, signal, 'a range hash', (s) => this.source.rangeHash(file, span.start, span.end - span.start, s))
    })
    return hex.trim().toLowerCase()
  }
}

export function md5Of(parts: readonly Buffer[]): string {
  const hash = createHash('md5')
  for (const p of parts) hash.update(p)
  return hash.digest('hex')
}

function keyOf(file: RemoteFile, span: Span): string {
  return `${file.cacheKey}\u0000${span.start}\u0000${span.end}`
}
