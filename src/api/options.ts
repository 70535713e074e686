// Settings of the Transfer Service client, each with its default and unit in one place.
import type { ProxyRoutes } from './proxy.js'

export interface TimeoutOptions {
  /** Milliseconds to establish a connection (TCP + TLS). */
  connectMs: number
  /** Milliseconds from sending a request to receiving the response headers. */
  headersMs: number
  /** Milliseconds the response body may stay idle between two pieces. */
  bodyIdleMs: number
}

export interface OfflineOptions {
  /** Connections that could not be made, in a row, before the client counts as offline. */
  afterFailures: number
  /** ms: first wait between probes while offline; doubles each probe. */
  probeBaseDelayMs: number
  /** ms: the longest wait between two probes. */
  probeMaxDelayMs: number
}

export interface RetryOptions {
  /** Tries of one request, the first included. */
  maxTries: number
  /** Milliseconds of the first backoff; doubles each try. */
  baseDelayMs: number
  /** Milliseconds: no single backoff waits longer (a Retry-After above it is still honoured up to the deadline). */
  maxDelayMs: number
  /** Milliseconds one operation may take, retries included. */
  deadlineMs: number
}

export interface UploadOptions {
  /** Chunks of one file in flight at once (the interface allows at most 4). */
  parallelChunks: number
  /** Tries of one chunk, the first included (chunks retry more: 406/449 are expected). */
  maxTries: number
}

export interface DownloadOptions {
  /** Tries of one range, the first included; a hash mismatch counts as a failed try. */
  maxTries: number
}

export interface ClientOptions {
  /** When the client counts the service as unreachable, and how it finds it again. */
  offline: OfflineOptions
  /** {base_url}, e.g. https://127.0.0.1:8443/api */
  apiUrl: string
  /** Value of x-api-key. */
  apiKey: string
  /** PEM of certificate authorities trusted besides Node's own and the system's (the local service's self-signed one). */
  ca?: string | Buffer
  /** The system's certificate store (trust.ts's readSystemStore), trusted besides Node's own list; none when absent. */
  systemCa?: readonly string[]
  /** Which connections go through a proxy (proxy.ts's proxyRoutes); all direct when absent. */
  proxy?: ProxyRoutes
  /** Path of the JSON file holding the session (logintoken, refreshtoken); no session persisted when absent. */
  tokenFile?: string
  /** Keep-alive connections per origin. */
  connectionsPerOrigin: number
  timeouts: TimeoutOptions
  retry: RetryOptions
  upload: UploadOptions
  download: DownloadOptions
}

export const DEFAULT_TIMEOUTS: TimeoutOptions = {
  connectMs: 10_000,
  headersMs: 30_000,
  bodyIdleMs: 30_000,
}

// Ten tries with the steps capped at 5 s ride out a service that is busy for ~20 s (six
// 503s in a row take ~11 s at most), well inside the mount's 15 s metadata deadline for
// the usual bursts, while a command gives up on a dead service in under a minute.
export const DEFAULT_RETRY: RetryOptions = {
  maxTries: 10,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  deadlineMs: 120_000,
}

// Three refused connections in a row are no accident; probing every 0.5 s at first and
// at most every 5 s then notices a service that is back within seconds, at the cost of one
// connection attempt per probe.
export const DEFAULT_OFFLINE: OfflineOptions = {
  afterFailures: 3,
  probeBaseDelayMs: 500,
  probeMaxDelayMs: 5_000,
}

export const DEFAULT_UPLOAD: UploadOptions = {
  parallelChunks: 4,
  maxTries: 10,
}

export const DEFAULT_DOWNLOAD: DownloadOptions = {
  maxTries: 10,
}

export const DEFAULT_CONNECTIONS_PER_ORIGIN = 8

export type ClientOptionsInput = Pick<ClientOptions, 'apiUrl' | 'apiKey'> &
  Partial<Pick<ClientOptions, 'ca' | 'systemCa' | 'proxy' | 'tokenFile' | 'connectionsPerOrigin'>> & {
    timeouts?: Partial<TimeoutOptions>
    retry?: Partial<RetryOptions>
    offline?: Partial<OfflineOptions>
    upload?: Partial<UploadOptions>
    download?: Partial<DownloadOptions>
  }

export function resolveOptions(input: ClientOptionsInput): ClientOptions {
  return {
    apiUrl: input.apiUrl.replace(/\/+$/, ''),
    apiKey: input.apiKey,
    ca: input.ca,
    systemCa: input.systemCa,
    proxy: input.proxy,
    tokenFile: input.tokenFile,
    connectionsPerOrigin: input.connectionsPerOrigin ?? DEFAULT_CONNECTIONS_PER_ORIGIN,
    timeouts: { ...DEFAULT_TIMEOUTS, ...input.timeouts },
    retry: { ...DEFAULT_RETRY, ...input.retry },
    offline: { ...DEFAULT_OFFLINE, ...input.offline },
    upload: { ...DEFAULT_UPLOAD, ...input.upload },
    download: { ...DEFAULT_DOWNLOAD, ...input.download },
  }
}
