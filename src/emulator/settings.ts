// Every setting of the local Transfer Service, with its default and unit, in one place.

const DAY_MS = 24 * 60 * 60 * 1000

export const SETTINGS = {
  /** logintoken lifetime (the service publishes 7 days), ms. */
  loginTokenTtlMs: 7 * DAY_MS,
  /** refreshtoken lifetime (the service publishes 3 months), ms. */
  refreshTokenTtlMs: 90 * DAY_MS,
  /** Largest accepted upload request body; a bigger one answers 400 (docs/design.md, Uploads), bytes. */
  maxUploadBodyBytes: 50 * 1024 * 1024,
  /** Largest accepted JSON request body, bytes. */
  maxJsonBodyBytes: 1024 * 1024,
  /** Wrong transfer passwords in a row before a captcha is required (docs/design.md, Transfer details). */
  wrongPasswordsBeforeCaptcha: 5,
  /** Recipients per transfer when the account sets none (docs/design.md, Forward), count. */
  defaultMaxRecipients: 50,
  /** Inbox page size when the caller gives no `take` (the service's published default), items. */
  defaultInboxTake: 1000,
  /** Days until expiry for an anonymous sender, and an account's default `defaultdays`. */
  defaultDays: 14,
  /** An account's default `maxdays`. */
  defaultMaxDays: 365,
  /** Storage limit of an account when none is given, bytes. */
  defaultStorageLimit: 1024 ** 4,
  /** Seconds a 429 asks the client to wait (Retry-After). */
  retryAfterSeconds: 1,
  /** Granularity of throttled and fault-wrapped download bodies, bytes. */
  bodySliceBytes: 64 * 1024,
  /**
   * Bytes read from a stored file at a time for a download. Larger reads mean fewer
   * buffers (and less garbage) per GiB served; TLS still cuts them into 16 KiB records.
   */
  fileReadBytes: 1024 * 1024,
  /** Worker threads hashing GetRangeHash ranges, so hashes never stall downloads. */
  hashWorkers: 2,
  /** Certificate lifetime, ms. */
  certificateTtlMs: 365 * DAY_MS,
  /** The main account's e-mail address when none is given. */
  mainUserEmail: 'you@transferfs.local',
  /** Company of the main account. */
  mainCompanyId: 'local-company',
  /** The main account's one contact group (a recipient folder or `--to` may name it). */
  mainContactGroup: { name: 'Team', emails: ['ann@example.com', 'ben@example.com'] },
} as const

export const DAY = DAY_MS
