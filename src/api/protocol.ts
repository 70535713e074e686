// Every name the client and the service must agree on where the service's published
// interface shows none (docs/design.md): paths, query names, header names, the HTTP
// status of each condition and the Complete contract. Pointing the client at a service
// that differs means editing this module only.

/** Header names. */
export const HEADER = {
  apiKey: 'x-api-key',
  loginToken: 'logintoken',
  range: 'range',
  retryAfter: 'retry-after',
  contentType: 'content-type',
} as const

/** Operations on {base_url} (relative to it). */
export const API_PATH = {
  login: '/auth/login',
  logout: '/auth/logout',
  refresh: '/auth/refreshtoken',
  initialize: '/transfer/initialize',
  complete: '/transfer/complete',
  forward: '/transfer/forward',
  inbox: '/transfer/inbox',
  /** Details by id; `-` in the path means "not used" (details by trackid). */
  details: (transferId: string) => `/transfer/${encodeURIComponent(transferId)}`,
  detailsByTrackIdPlaceholder: '-',
} as const

/** Paths on a file server whose origin comes from a URL the service returned. */
export const FILE_SERVER_PATH = {
  rangeHash: '/GetRangeHash.ashx',
} as const

export const LOGOUT_QUERY = { allDevices: 'allDevices' } as const

export const DETAILS_QUERY = {
  trackId: 'trackid',
  filesLimit: 'filesLimit',
  withDetails: 'withDetails',
  excludeFiles: 'excludeFiles',
  excludeDownloads: 'excludeDownloads',
  password: 'password',
  captcha: 'captcha',
  fileProperties: 'fileProperties',
} as const

export const INBOX_QUERY = {
  from: 'from',
  includeOthers: 'includeOthers',
  portalIds: 'portalIds',
  includeExpired: 'includeExpired',
  take: 'take',
  skip: 'skip',
  search: 'search',
  ignoreDeletedPortals: 'ignoreDeletedPortals',
} as const

export const UPLOAD_QUERY = {
  transferId: 'transferid',
  transferKey: 'transferkey',
  fileName: 'thefilename',
  chunkSize: 'chunksize',
  chunks: 'chunks',
  chunk: 'chunk',
  md5: 'md5',
  compressed: 'compressed',
  retry: 'retry',
} as const

export const RANGE_HASH_QUERY = {
  transferId: 'transferid',
  fileName: 'thefilename',
  position: 'position',
  length: 'length',
} as const

/** Build the body of Complete: exactly these two properties, both required (docs/design.md, Complete). */
export function completeBody(transferId: string, transferKey: string): Record<string, string> {
  return { transferid: transferId, transferkey: transferKey }
}

/** HTTP statuses with a meaning of their own. */
export const STATUS = {
  ok: 200,
  partialContent: 206,
  badRequest: 400,
  unauthorized: 401,
  notFound: 404,
  rangeNotSatisfiable: 416,
  tooManyRequests: 429,
  serviceUnavailable: 503,
  /** Upload: the server is overloaded, send again. */
  uploadRetry: 406,
  /** Upload: the md5 did not match the bytes received, send the chunk again. */
  uploadMd5Mismatch: 449,
} as const

/** signInStatus values of a login answer. */
export const SIGN_IN = {
  success: 'Success',
  twoFactorRequired: 'TwoFactorRequired',
} as const

/** Inbox page size the service uses when none is given. */
export const INBOX_DEFAULT_TAKE = 1000

/** Upload chunk bounds from the interface's limits (bytes). */
export const CHUNK_LIMITS = {
  min: 5_000_000,
  max: 50_000_000,
} as const

/** The upload chunk size: the largest the service takes, so the fewest requests. */
export const UPLOAD_CHUNK_BYTES = CHUNK_LIMITS.max

/** A query value as the service expects it: booleans lowercase, lists comma-separated. */
export function queryValue(value: string | number | boolean | readonly string[]): string {
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (Array.isArray(value)) return value.join(',')
  return String(value)
}

/** Query string from named values; undefined ones are left out; every value URL-encoded. */
export function buildQuery(params: Record<string, string | number | boolean | readonly string[] | undefined | null>): string {
  const parts: string[] = []
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue
    parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(queryValue(value))}`)
  }
  return parts.length ? `?${parts.join('&')}` : ''
}
