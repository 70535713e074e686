// Every setting of transferfs in one place (rclone's options struct): its default,
// its unit, its flag and its environment variable. Resolution order, highest first:
// command-line flags > TRANSFERFS_* environment > config file > defaults.
import { LOG_LEVELS, type LogLevel } from '../base/log.js'
import { proxyForDisplay, proxyHasPassword } from '../api/proxy.js'
import { DEFAULT_READ_OPTIONS, type ReadOptions } from '../read/options.js'
import { DEFAULT_SEND_OPTIONS, type SendOptions } from '../send/options.js'
import { VFS_DEFAULTS, type VfsSettings } from '../vfs/settings.js'

const KiB = 1024
const MiB = 1024 * KiB
const GiB = 1024 * MiB

/** Which FUSE library the mount runs on; auto: libfuse 3 where it loads, else libfuse 2. */
export type FuseLibrary = 'auto' | 'libfuse3' | 'libfuse2'
export const FUSE_LIBRARIES: readonly FuseLibrary[] = ['auto', 'libfuse3', 'libfuse2']

/**
 * The kernel readahead (KiB) a root mount gets when readAheadKb is -1, its default, by the
 * FUSE library it mounts with. Reads of the kernel's readahead are taken in any order, so a
 * cold read fetches each byte once at any readahead, and none was faster than another here
 * (performance.md, "Readahead and read windows"). What it changes is how many
 * requests wait at once, which hides a slow answer where reads are not prefetched yet
 * (design.md, "Reads"), and what the reader and the mount pay. On libfuse 3 (1 MiB requests)
 * `cat` paid 0.28 CPU-s per GiB at each. On libfuse 2 (128 KiB requests) a cold `cat` at
 * 4 MiB cost the reader itself 0.49 CPU-s per GiB against 0.31 at 1 MiB and 0.26 at the
 * kernel's 128 KiB; and since a file's reads are answered from read windows, the kernel's
 * 128 KiB cost the mount ~0.3 CPU-s per GiB less than 1 MiB (one request in flight at a time
 * finds its window lent; eight sent together reach JS before it is), in the same time.
 */
export const READ_AHEAD_KB_BY_LIBRARY: Readonly<Record<Exclude<FuseLibrary, 'auto'>, number>> = { libfuse3: 4096, libfuse2: 128 }

/**
 * The readahead a mount with `readAheadKb` gets on `library`. Only the library that loaded can
 * tell (src/fuse/mount.ts, mountReadAheadKb): what the mount sets and what the read path is
 * tuned for both come from here.
 */
export function readAheadKbOf(readAheadKb: number, library: Exclude<FuseLibrary, 'auto'>): number {
  return readAheadKb >= 0 ? readAheadKb : READ_AHEAD_KB_BY_LIBRARY[library]
}
/** The settings whose value is one of a few words, and those words. */
const CHOICES = { logLevel: LOG_LEVELS, fuseLibrary: FUSE_LIBRARIES } as const

export interface Settings {
  /** Base URL of the service's API, e.g. https://127.0.0.1:8443/api. */
  apiUrl: string | null
  /** The x-api-key sent with every request. Secret. */
  apiKey: string | null
  /** Path to a PEM file of extra certificate authorities to trust (the local service's CA). */
  ca: string | null
  /** URL of the HTTP proxy every connection goes through, over HTTPS_PROXY and HTTP_PROXY; `direct`: none. Its password is never shown. */
  proxy: string | null
  /** Let other users see the mount (needs user_allow_other in /etc/fuse.conf when not root). */
  allowOther: boolean
  /** bytes: size of one HTTP Range fetch and of one cache entry. */
  chunkSize: number
  /** bytes: memory chunk cache bound. */
  memoryCacheBytes: number
  /** bytes: disk chunk cache bound. */
  diskCacheBytes: number
  /** ms: how long a listing is served before it is refreshed. */
  listingTtlMs: number
  /** ms: deadline of one FUSE read; a read waits for the verified chunk it needs. */
  readTimeoutMs: number
  /** ms: deadline of a metadata op (getattr, readdir, open, statfs, xattr, ...). */
  metadataTimeoutMs: number
  /** ms: deadline of a write-side op (write, create, flush, fsync, release, truncate, rename, ...). */
  writeTimeoutMs: number
  /** count: chunk fetches in flight at once. */
  maxConcurrentFetches: number
  /** ms: an outbox entry is sent once closed and unchanged for this long. */
  settleMs: number
  uploadWhileCopying: boolean
  minFreeBytes: number
  /** Message of sent transfers (download page and e-mails); null = none. */
  message: string | null
  /** days until a sent transfer expires; -1 = permanent; null = the account's default. */
  days: number | null
  /** E-mail the sender after downloads; null = the account's default. */
  notify: boolean | null
  /** E-mail the sender a confirmation when a transfer is complete; null = the account's default. */
  confirmation: boolean | null
  /** Password protecting sent transfers; null = none. Secret. */
  password: string | null
  logLevel: LogLevel
  /** KiB: kernel readahead of the mount (root only, best effort: a write under /sys); 0 = leave the kernel's. */
  readAheadKb: number
  /** count: FUSE max_background of the mount, given in the INIT reply (no root needed); 0 = leave the kernel's. */
  maxBackground: number
  fuseLibrary: FuseLibrary
  /** ms: on unmount, how long to wait for open files and the core's shutdown. */
  shutdownGraceMs: number
  /** ms: how often /proc/self/mountinfo is checked for an unmount done behind our back. */
  unmountPollMs: number
  /** Put the service's thumbnails of listed files into the desktop's thumbnail cache. */
  previews: boolean
  /** A desktop notification for each new transfer in the inbox and each finished send. */
  notifyArrivals: boolean
}

export type SettingKey = keyof Settings
type Kind = 'string' | 'bytes' | 'ms' | 'int' | 'bool' | 'choice'

export interface SettingSpec {
  key: SettingKey
  kind: Kind
  /** Can be null (not set); the default of such settings is null. */
  nullable: boolean
  default: Settings[SettingKey]
  unit: string
  description: string
  /** Never printed or logged. */
  secret?: boolean
  /** How a value with a secret part (a password in a URL) is shown instead. */
  redact?: (value: string) => string
  /** Whether a value holds a secret part (credentials in a URL), for a setting that is not all secret. */
  holdsSecret?: (value: string) => boolean
  /**
   * The module whose option of the same name this setting is (its default is that
   * module's own); the command line builds the module's options from these rows.
   */
  feeds?: SettingTarget
}

/** Modules whose options settings set by name (the read path, the send path, the filesystem model), and those options. */
export interface TargetOptions { read: ReadOptions; send: SendOptions; vfs: VfsSettings }
export type SettingTarget = keyof TargetOptions

/** The targets a setting may feed: those with an option of its name that takes its values. */
type TargetsOf<K extends SettingKey> = {
  [T in SettingTarget]: K extends keyof TargetOptions[T] ? (Settings[K] extends TargetOptions[T][K] ? T : never) : never
}[SettingTarget]

function spec<K extends SettingKey>(key: K, kind: Kind, def: Settings[K], unit: string, description: string,
  more: { secret?: boolean; redact?: (value: string) => string; holdsSecret?: (value: string) => boolean; feeds?: TargetsOf<K> } = {}): SettingSpec {
  return {
    key, kind, nullable: def === null, default: def, unit, description, secret: more.secret ?? false,
    ...(more.redact ? { redact: more.redact } : {}), ...(more.holdsSecret ? { holdsSecret: more.holdsSecret } : {}),
    ...(more.feeds ? { feeds: more.feeds } : {}),
  }
}

/** Whether `value` of `s` is, or holds, a secret: never on a command line, never shown whole. */
export function holdsSecret(s: SettingSpec, value: string): boolean {
  return Boolean(s.secret) || (s.holdsSecret?.(value) ?? false)
}

/** The table of all settings; flags and env names derive from the key (apiUrl → --api-url, TRANSFERFS_API_URL). */
export const SETTINGS: readonly SettingSpec[] = [
  spec('apiUrl', 'string', null, 'URL', 'base URL of the Transfer Service API'),
  spec('apiKey', 'string', null, '', 'API key (x-api-key)', { secret: true }),
  spec('ca', 'string', null, 'path', 'PEM file of certificate authorities to trust besides the system\'s and Node\'s own'),
  spec('proxy', 'string', null, 'URL', 'HTTP proxy of every connection, http://[user:password@]host:port (direct: none), over HTTPS_PROXY and HTTP_PROXY; NO_PROXY still applies', { redact: proxyForDisplay, holdsSecret: proxyHasPassword }),
  spec('allowOther', 'bool', false, '', 'let other users reach the mount: they read received files without a password and sent files as their outbox modes allowed, search nothing and write nothing of the account\'s'),
  spec('chunkSize', 'bytes', DEFAULT_READ_OPTIONS.chunkSize, 'bytes', 'size of one ranged fetch and cache entry', { feeds: 'read' }),
  spec('memoryCacheBytes', 'bytes', DEFAULT_READ_OPTIONS.memoryCacheBytes, 'bytes', 'memory for read buffers: cached blocks, pieces being fetched and hashed, blocks waiting for the disk cache', { feeds: 'read' }),
  spec('diskCacheBytes', 'bytes', DEFAULT_READ_OPTIONS.diskCacheBytes, 'bytes', 'disk chunk cache size', { feeds: 'read' }),
  spec('listingTtlMs', 'ms', VFS_DEFAULTS.listingTtlMs, 'ms', 'how long a listing is reused before a refresh', { feeds: 'vfs' }),
  spec('readTimeoutMs', 'ms', 60_000, 'ms', 'deadline of one read on the mount'),
  spec('metadataTimeoutMs', 'ms', 15_000, 'ms', 'deadline of a metadata operation on the mount'),
  spec('writeTimeoutMs', 'ms', 60_000, 'ms', 'deadline of a write, flush or close on the mount'),
  spec('maxConcurrentFetches', 'int', DEFAULT_READ_OPTIONS.maxConcurrentFetches, 'count', 'chunk fetches in flight at once', { feeds: 'read' }),
  spec('settleMs', 'ms', DEFAULT_SEND_OPTIONS.settleMs, 'ms', 'quiet time before an outbox entry is sent', { feeds: 'send' }),
  spec('uploadWhileCopying', 'bool', DEFAULT_SEND_OPTIONS.uploadWhileCopying, '', 'upload each file of an outbox entry once it is closed, while the rest is copied; the transfer is completed once the entry has settled', { feeds: 'send' }),
  spec('minFreeBytes', 'bytes', DEFAULT_SEND_OPTIONS.minFreeBytes, 'bytes', 'free space the outbox keeps on the data folder\'s disk (a write past it fails with ENOSPC)', { feeds: 'send' }),
  spec('message', 'string', DEFAULT_SEND_OPTIONS.message, '', 'message of sent transfers', { feeds: 'send' }),
  spec('days', 'int', DEFAULT_SEND_OPTIONS.days, 'days', 'days until sent transfers expire (-1 = permanent)', { feeds: 'send' }),
  spec('notify', 'bool', DEFAULT_SEND_OPTIONS.notify, '', 'e-mail the sender after downloads', { feeds: 'send' }),
  spec('confirmation', 'bool', DEFAULT_SEND_OPTIONS.confirmation, '', 'e-mail the sender when a transfer is complete', { feeds: 'send' }),
  spec('password', 'string', DEFAULT_SEND_OPTIONS.password, '', 'password protecting sent transfers', { feeds: 'send', secret: true }),
  spec('logLevel', 'choice', 'info', '', 'error, warn, info or debug'),
  // -1: four of libfuse 3's 1 MiB requests, one of libfuse 2's 128 KiB ones
  // (READ_AHEAD_KB_BY_LIBRARY).
  spec('readAheadKb', 'int', -1, 'KiB', `kernel readahead of the mount (root only; -1 = by FUSE library: ${READ_AHEAD_KB_BY_LIBRARY.libfuse3} on libfuse 3, ${READ_AHEAD_KB_BY_LIBRARY.libfuse2} on libfuse 2; 0 = kernel default)`),
  spec('maxBackground', 'int', 16, 'count', 'FUSE requests in flight in the background (readahead), given to the kernel at mount; 0 = kernel default'),
  spec('fuseLibrary', 'choice', 'auto', '', 'FUSE library to mount with: auto (libfuse3 where it loads, else libfuse2), libfuse3 or libfuse2'),
  spec('shutdownGraceMs', 'ms', 10_000, 'ms', 'wait for open files on unmount'),
  spec('unmountPollMs', 'ms', 1000, 'ms', 'how often an external unmount is checked for'),
  spec('previews', 'bool', true, '', 'put the service\'s thumbnails of listed images into the desktop\'s thumbnail cache'),
  spec('notifyArrivals', 'bool', true, '', 'desktop notification for each new transfer and each finished send'),
]

export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze(
  Object.fromEntries(SETTINGS.map((s) => [s.key, s.default])) as unknown as Settings,
)

export function flagName(key: SettingKey): string {
  return '--' + key.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())
}

export function envName(key: SettingKey): string {
  return 'TRANSFERFS_' + key.replace(/[A-Z]/g, (c) => '_' + c).toUpperCase()
}

export type SettingSource = 'flag' | 'env' | 'file' | 'default'

export interface ResolvedSettings {
  settings: Settings
  /** Where each value came from (for `transferfs config`). */
  sources: Record<SettingKey, SettingSource>
}

export class SettingsError extends Error {
  override readonly name = 'SettingsError'
}

const UNIT_BYTES: Record<string, number> = {
  '': 1, b: 1, k: KiB, kb: KiB, kib: KiB, m: MiB, mb: MiB, mib: MiB, g: GiB, gb: GiB, gib: GiB, t: 1024 * GiB, tb: 1024 * GiB, tib: 1024 * GiB,
}
const UNIT_MS: Record<string, number> = { '': 1, ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000 }

function parseWithUnit(text: string, units: Record<string, number>): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text)
  if (!m) return null
  const factor = units[(m[2] ?? '').toLowerCase()]
  if (factor === undefined) return null
  return Math.round(Number(m[1]) * factor)
}

/** A duration as settings take it (`500`, `10s`, `2m`) in ms, or null when it is not one. */
export function parseDuration(text: string): number | null {
  return parseWithUnit(text, UNIT_MS)
}

/** Turns a raw value (a string from a flag or env, or a JSON value from the file) into the setting's type. */
export function parseSettingValue(s: SettingSpec, raw: unknown, where: string): Settings[SettingKey] {
  const fail = (): never => {
    throw new SettingsError(`${where}: invalid value for ${s.key} (${s.kind}${s.unit ? ', ' + s.unit : ''})`)
  }
  if (raw === null) return s.nullable ? null : fail()
  switch (s.kind) {
    case 'string':
      return typeof raw === 'string' ? raw : fail()
    case 'choice': {
      const words: readonly string[] = CHOICES[s.key as keyof typeof CHOICES]
      return typeof raw === 'string' && words.includes(raw.toLowerCase()) ? (raw.toLowerCase() as Settings[SettingKey]) : fail()
    }
    case 'bool': {
      if (typeof raw === 'boolean') return raw
      if (typeof raw !== 'string') return fail()
      const v = raw.trim().toLowerCase()
      if (['1', 'true', 'yes', 'on'].includes(v)) return true
      if (['0', 'false', 'no', 'off'].includes(v)) return false
      if (s.nullable && ['', 'default'].includes(v)) return null
      return fail()
    }
    case 'int': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : NaN
      return Number.isSafeInteger(n) ? n : fail()
    }
    case 'bytes':
    case 'ms': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' ? parseWithUnit(raw, s.kind === 'bytes' ? UNIT_BYTES : UNIT_MS) : null
      return n !== null && Number.isSafeInteger(n) && n >= 0 ? n : fail()
    }
  }
}

export interface SettingsInput {
  /** Values from the command line, keyed by setting key (commander's camelCase); undefined = not given. */
  flags?: Partial<Record<string, unknown>>
  /** The environment (process.env). */
  env?: NodeJS.ProcessEnv
  /** The parsed config file (an object keyed by setting key), or undefined when there is none. */
  file?: unknown
  /** Name of the config file, for error messages. */
  fileName?: string
}

/** Pure resolution: flags > env > file > defaults. Unknown keys in the file are an error (a typo must not pass silently). */
export function resolveSettings(input: SettingsInput): ResolvedSettings {
  const env = input.env ?? {}
  const file = input.file ?? {}
  const fileName = input.fileName ?? 'config file'
  if (typeof file !== 'object' || file === null || Array.isArray(file)) throw new SettingsError(`${fileName}: expected a JSON object`)
  const fileObj = file as Record<string, unknown>
  const known = new Set<string>(SETTINGS.map((s) => s.key))
  for (const k of Object.keys(fileObj)) {
    if (!known.has(k)) throw new SettingsError(`${fileName}: unknown setting "${k}"`)
  }
  const settings = { ...DEFAULT_SETTINGS } as Record<SettingKey, Settings[SettingKey]>
  const sources = {} as Record<SettingKey, SettingSource>
  for (const s of SETTINGS) {
    const flag = input.flags?.[s.key]
    const envValue = env[envName(s.key)]
    if (flag !== undefined) {
      settings[s.key] = parseSettingValue(s, flag, flagName(s.key))
      sources[s.key] = 'flag'
    } else if (envValue !== undefined && envValue !== '') {
      settings[s.key] = parseSettingValue(s, envValue, envName(s.key))
      sources[s.key] = 'env'
    } else if (Object.hasOwn(fileObj, s.key)) {
      settings[s.key] = parseSettingValue(s, fileObj[s.key], `${fileName}: ${s.key}`)
      sources[s.key] = 'file'
    } else {
      sources[s.key] = 'default'
    }
  }
  return { settings: settings as unknown as Settings, sources }
}

/** A value as it may be shown to the user: secrets masked. */
export function displayValue(key: SettingKey, value: unknown): string {
  const s = SETTINGS.find((x) => x.key === key)
  if (value === null || value === undefined) return '(not set)'
  if (s?.secret) return '********'
  if (s?.redact) return s.redact(String(value))
  return String(value)
}
