// One JSON operation on {base_url}: x-api-key always, the logintoken when given, the
// body as JSON, the envelope parsed, and the retry policy applied.
import { parseEnvelope } from './envelope.js'
import { isUnreachable, needsNewSettings } from './failure.js'
import type { Transport } from './http.js'
import type { RetryOptions } from './options.js'
import { buildQuery, HEADER } from './protocol.js'
import { withRetry } from './retry.js'

export type QueryParams = Record<string, string | number | boolean | readonly string[] | undefined | null>

export interface ApiCall {
  /** Human name of the operation, for messages ("transfer details"). */
  operation: string
  method: 'GET' | 'POST'
  path: string
  query?: QueryParams
  body?: unknown
  loginToken?: string | null
  /** False for calls that could create something twice if repeated after being served. */
  idempotent: boolean
  signal?: AbortSignal
}

export class ApiCaller {
  constructor(
    private readonly transport: Transport,
    private readonly apiUrl: string,
    private readonly apiKey: string,
    private readonly retry: RetryOptions,
  ) {}

  /** The operation's data (null when the service sends none). */
  async call<T>(c: ApiCall): Promise<T | null> {
    const url = new URL(`${this.apiUrl}${c.path}${buildQuery(c.query ?? {})}`)
    const headers: Record<string, string> = { [HEADER.apiKey]: this.apiKey, accept: 'application/json' }
    if (c.loginToken) headers[HEADER.loginToken] = c.loginToken
    let body: string | undefined
    if (c.body !== undefined) {
      body = JSON.stringify(c.body)
      headers[HEADER.contentType] = 'application/json'
    }
    return withRetry(
      async () => {
        const res = await this.transport.requestText({ url, method: c.method, headers, body, signal: c.signal }).catch((err: unknown) => {
          // Offline, a listing or a command fails at once instead of waiting out its retries;
          // what only new settings cure says so itself (it is not retried either).
          const asIs = this.transport.connectivity.online || !isUnreachable(err) || needsNewSettings(err)
          throw asIs ? err : this.transport.connectivity.offlineError()
        })
        return parseEnvelope<T>(c.operation, res.status, res.headers, res.text)
      },
      { kind: c.idempotent ? 'query' : 'create', policy: this.retry, signal: c.signal },
    )
  }

  /** As call(), for operations whose data must be present. */
  async callData<T>(c: ApiCall): Promise<T> {
    const data = await this.call<T>(c)
    if (data === null) throw new Error(`${c.operation}: the service answered OK without data`)
    return data
  }
}

