// The one place where the mount's parts are put together from the settings: the
// client (src/api), the catalog of transfers (vfs port), the read path (src/read) and
// the filesystem core the FUSE adapter drives. Also the flags every command derives
// from the settings table, so a setting has its flag without anyone writing it by hand.
import type { Command } from 'commander'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { TransferClient } from '../api/client.js'
import { NotSignedInError } from '../api/errors.js'
import type { ClientOptionsInput } from '../api/options.js'
import { proxyRoutes } from '../api/proxy.js'
import { pemCertificates, readSystemStore, unreadableReason } from '../api/trust.js'
import { plainText } from '../base/shown-text.js'
import { FOLDER_FLAGS } from '../config/paths.js'
import type { Logger } from '../base/log.js'
import { envName, flagName, SETTINGS, SettingsError, type LoadedSettings, type SettingKey, type Settings, type SettingTarget, type TargetOptions } from '../config/index.js'
import type { ReachabilityState } from '../api/connectivity.js'
import { ReadPath } from '../read/content.js'
import type { ReadHealth } from '../read/read-log.js'
import type { ServiceHealth } from '../status/mount-status.js'
import { DEFAULT_READ_OPTIONS, type ReadOptions } from '../read/options.js'
import { ServiceRangeSource } from '../read/service-source.js'
import { openSending, type MountSending } from '../send/mount-sending.js'
import type { SendOptions } from '../send/options.js'
import { FileSentLog } from '../send/sent-log.js'
import { SENT_FILE } from '../send/open-outbox.js'
import { freeBytesOf } from '../send/staging.js'
import { TransferFileSystem } from '../vfs/filesystem.js'
import { ServiceCatalog } from '../vfs/service-catalog.js'
import type { FolderListing } from '../vfs/folder-listing.js'
import { openDesktop, type MountDesktop } from '../desktop/mount-desktop.js'
import { formatBytes } from '../base/format-bytes.js'
import { Pinner } from '../pin/pinner.js'
import { PinStore, PINS_FILE } from '../pin/pin-store.js'
import { serveControl } from './control.js'
import { pinControl } from '../pin/control.js'

/** The settings that reach the service; login and logout take only these. */
export const CONNECTION_KEYS: readonly SettingKey[] = ['apiUrl', 'apiKey', 'ca', 'proxy']
/** ms: how much sooner than the mount's read deadline the read path stops retrying. */
const READ_ANSWER_MARGIN_MS = 500
/** Folder of the read path's disk cache, inside the user cache folder. */
export const CHUNK_CACHE_DIR = 'chunks'
/** The background mount's log, inside the user data folder. */
export const MOUNT_LOG_FILE = 'mount.log'

/** A default as the flag would take it: 50M rather than 52428800, 30s rather than 30000. */
function shownDefault(s: (typeof SETTINGS)[number]): string {
  const v = s.default
  if (typeof v === 'number' && v > 0) {
    if (s.kind === 'bytes') {
      for (const [suffix, size] of [['G', 1024 ** 3], ['M', 1024 ** 2], ['K', 1024]] as const) if (v % size === 0) return `${v / size}${suffix}`
    }
    if (s.kind === 'ms' && v % 1000 === 0) return `${v / 1000}s`
  }
  return `${String(v)}${s.unit && s.unit !== s.kind && s.unit !== 'count' ? ' ' + s.unit : ''}`
}

/**
 * Adds the folder flags and one flag per setting (all of them, or `keys`): `--api-url <value>`; a plain on/off
 * setting is a switch (`--allow-other`). Values stay strings: loadSettings parses them,
 * so a flag, its environment variable and the config file take the same syntax.
 */
export function addSettingFlags(cmd: Command, keys?: readonly SettingKey[]): Command {
  for (const f of FOLDER_FLAGS) cmd.option(`${f.flag} <dir>`, `${f.description} (default: ${f.env}, else the XDG folder)`)
  for (const s of SETTINGS) {
    if (keys && !keys.includes(s.key)) continue
    const def = s.default === null ? '' : ` (default: ${s.secret ? 'none' : shownDefault(s)})`
    const unit = s.kind === 'bytes' ? ', e.g. 50M' : s.kind === 'ms' ? ', e.g. 30s' : ''
    // A switch can only turn a setting on: one that is on by default takes yes|no.
    if (s.kind === 'bool' && !s.nullable && s.default === false) cmd.option(flagName(s.key), `${s.description}${def}`)
    else cmd.option(`${flagName(s.key)} <${s.kind === 'bool' ? 'yes|no' : s.unit || 'value'}>`, `${s.description}${unit}${def}`)
  }
  return cmd
}

/**
 * Settings that are, or may hold, secrets (holdsSecret): a process's arguments are readable by
 * every user of the machine. Passed on in the environment whether this value holds one or not.
 */
const keptOffCommandLine = (s: (typeof SETTINGS)[number]): boolean => Boolean(s.secret || s.holdsSecret)

/**
 * The flags of `opts` that name settings, as arguments again (the background mount passes
 * them on), but for those holding secrets, which go in its environment (settingEnv).
 */
export function settingArgs(opts: Record<string, unknown>): string[] {
  const args: string[] = []
  for (const s of SETTINGS) {
    const v = opts[s.key]
    if (v === undefined || v === false || keptOffCommandLine(s)) continue
    if (v === true) args.push(flagName(s.key))
    else args.push(flagName(s.key), String(v))
  }
  return args
}

/** The flags of `opts` that hold secrets, as the environment variables that say the same. */
export function settingEnv(opts: Record<string, unknown>): Record<string, string> {
  const env: Record<string, string> = {}
  for (const s of SETTINGS) {
    const v = opts[s.key]
    if (typeof v === 'string' && keptOffCommandLine(s)) env[envName(s.key)] = v
  }
  return env
}

function required(settings: Settings, key: 'apiUrl' | 'apiKey'): string {
  const v = settings[key]
  if (!v) {
    const env = key === 'apiUrl' ? 'TRANSFERFS_API_URL' : 'TRANSFERFS_API_KEY'
    throw new SettingsError(`no ${key === 'apiUrl' ? 'service URL' : 'API key'}: give ${flagName(key)}, set ${env} or put "${key}" in the config file`)
  }
  return v
}

/** A warning of a command, on its stderr as one line. */
export function warnOnStderr(message: string): void {
  process.stderr.write(`transferfs: warning: ${plainText(message)}\n`)
}

/** Where the ca setting was given, as the user wrote it. */
function caSettingOrigin(loaded: LoadedSettings): string {
  switch (loaded.sources.ca) {
    case 'flag':
      return flagName('ca')
    case 'env':
      return envName('ca')
    default:
      return `"ca" in ${loaded.configFile}`
  }
}

/**
 * The certificates the ca setting's file holds, or undefined when it is not set. It is the
 * user's explicit choice, so a file that cannot be used stops the command with one line
 * naming the setting and the file (the inherited SSL_CERT_* variables only warn).
 */
async function readCaSetting(loaded: LoadedSettings): Promise<string | undefined> {
  const file = loaded.settings.ca
  if (!file) return undefined
  const setting = `the ca setting (${caSettingOrigin(loaded)}) names ${file}`
  const pem = await readFile(file, 'utf8').catch((err: unknown) => {
    throw new SettingsError(`${setting}, ${unreadableReason(err)}: give a PEM file of certificate authorities, or unset it`)
  })
  if (pemCertificates(pem).length === 0) throw new SettingsError(`${setting}, which holds no certificate (a PEM file is wanted: -----BEGIN CERTIFICATE-----)`)
  return pem
}

/**
 * A client of the service with the session in the token file, trusting the system's
 * certificate store and `ca`, through the proxy the settings and `env` name. `warn` hears of
 * a part of the system's store that cannot be read (the command's stderr, the mount's log).
 */
export async function createClient(loaded: LoadedSettings, extra: Partial<ClientOptionsInput> = {}, env: NodeJS.ProcessEnv = process.env, warn: (message: string) => void = warnOnStderr): Promise<TransferClient> {
  const { settings } = loaded
  // Mistakes in what the user gave (a file, a variable, a URL) are settings errors: exit 2, never a retry.
  const given = async <T>(what: () => T | Promise<T>): Promise<T> => {
    try {
      return await what()
    } catch (err) {
      throw new SettingsError((err as Error).message)
    }
  }
  const ca = await readCaSetting(loaded)
  return new TransferClient({
    apiUrl: required(settings, 'apiUrl'),
    apiKey: required(settings, 'apiKey'),
    ca,
    systemCa: await readSystemStore(env, warn),
    proxy: await given(() => proxyRoutes(settings.proxy, env)),
    tokenFile: loaded.tokenFile,
    // A connection per fetch for its range stream and one for its pieces' GetRangeHash calls:
    // with undici's pool at 8 per origin, a cold read's hashes alone opened 8.
    connectionsPerOrigin: Math.max(1, settings.maxConcurrentFetches),
    ...extra,
  })
}

/**
 * The settings the table marks as `target`'s options, under the options' own names. The
 * table's rows are typed so that a row can feed only an option of its name and type; a
 * test holds each to that option's default too.
 */
function optionsFor<T extends SettingTarget>(loaded: LoadedSettings, target: T): Partial<TargetOptions[T]> {
  return Object.fromEntries(SETTINGS.filter((spec) => spec.feeds === target).map((spec) => [spec.key, loaded.settings[spec.key]])) as Partial<TargetOptions[T]>
}

/** `readAheadKb`: the kernel readahead the mount sets, settled on its FUSE library (mountReadAheadKb). */
export function readOptionsOf(loaded: LoadedSettings, readAheadKb: number): Partial<ReadOptions> {
  const s = loaded.settings
  return {
    ...optionsFor(loaded, 'read'),
    // The read path retries until the mount's read deadline, less a margin so that the
    // read answers with its own reason before the FUSE adapter's deadline answers EIO.
    deadlineMs: Math.max(1000, s.readTimeoutMs - READ_ANSWER_MARGIN_MS),
    // Reads the kernel's readahead sends ahead of the reader are still one sequential run.
    sequentialSlack: Math.max(DEFAULT_READ_OPTIONS.sequentialSlack, 2 * readAheadKb * 1024),
    diskCacheDir: path.join(loaded.folders.cache, CHUNK_CACHE_DIR),
  }
}

export interface ComposedMount {
  client: TransferClient
  content: ReadPath
  /** What the FUSE adapter drives: the transfer areas, the outbox and sent/ additions. */
  core: TransferFileSystem
  sending: MountSending
}

export function sendOptionsOf(loaded: LoadedSettings): Partial<SendOptions> {
  return optionsFor(loaded, 'send')
}

/** The status's word on the service: unreachable outranks reads that retry. */
function serviceHealth(reach: ReachabilityState, reads: ReadHealth): ServiceHealth {
  if (!reach.online) return { state: 'offline', since: reach.since, reason: reach.reason, retryingReads: reads.retrying }
  if (reads.retrying > 0) return { state: 'retrying', since: reads.since, reason: reads.reason, retryingReads: reads.retrying }
  return { state: 'online', since: null, reason: null, retryingReads: 0 }
}

/** The filesystem core whose shutdown also lets go of the read path and the client. */
class MountedFileSystem extends TransferFileSystem {
  /** The pinner and its control socket, once started (composeMount). */
  pinning: { pinner: Pinner; control: { close(): Promise<void> } } | null = null

  constructor(
    options: ConstructorParameters<typeof TransferFileSystem>[0],
    private readonly parts: { content: ReadPath; client: TransferClient; desktop: MountDesktop },
  ) {
    super(options)
  }

  override async shutdown(): Promise<void> {
    await this.pinning?.control.close()
    await this.pinning?.pinner.stop()
    await super.shutdown()
    await this.parts.desktop.stop()
    await this.parts.content.flush().catch(() => {})
    await this.parts.client.close().catch(() => {})
  }
}

export const NOT_SIGNED_IN = 'not signed in: run `transferfs login --email <address>` first'

/** The name of a transfer's folder in a listing, when it is listed. */
function folderNameOf(listing: FolderListing | undefined, transferid: string): string | null {
  for (const [name, entry] of listing?.byName ?? []) if (entry.ref.token === transferid) return name
  return null
}

/**
 * Everything the mount serves, built from the settings; the session must exist already.
 * `mountDir` (absolute) is where it will be mounted: thumbnails and notifications name files there.
 * `front.readAheadKb`: how far ahead the front's clients read (MountFront.readAheadKb).
 */
export async function composeMount(loaded: LoadedSettings, mountDir: string, log: Logger, front: { readAheadKb: number }): Promise<ComposedMount> {
  // The front (fronts/front.ts) says how far ahead its clients read: the FUSE front finds out
  // by loading its addon, so a missing FUSE library fails before anything here is opened.
  const { readAheadKb } = front
  const client = await createClient(loaded, {}, process.env, (message) => log.warn(message))
  if (!(await client.auth.isSignedIn())) {
    await client.close()
    throw new NotSignedInError(NOT_SIGNED_IN)
  }
  const routes = client.options.proxy
  if (routes?.https) log.info(`connections to the service go through the proxy ${routes.https.label}${routes.noProxy ? `, but for no_proxy's hosts (${routes.noProxy})` : ''}`)
  // Why reads answer "Host is down" (a proxy, a certificate, the service itself), in the log once.
  client.connectivity.onChange((state) => {
    if (state.online) log.info('the service can be reached again')
    else log.warn(`the service cannot be reached: ${state.reason ?? 'no reason given'}`)
  })
  const sentLog = new FileSentLog(path.join(loaded.folders.data, SENT_FILE))
  // A fresh log object per listing: another process (the sender) may have appended since.
  const catalog = new ServiceCatalog(client, { list: () => new FileSentLog(sentLog.file).list() })
  const readOptions = readOptionsOf(loaded, readAheadKb)
  const content = await ReadPath.create(new ServiceRangeSource(client), readOptions, log, {
    // A pin never takes the disk below the margin the outbox keeps too.
    freeSpace: async () => (await freeBytesOf(readOptions.diskCacheDir!)) - loaded.settings.minFreeBytes,
  })
  const desktop = openDesktop({
    mountDir,
    client,
    previews: loaded.settings.previews,
    notify: loaded.settings.notifyArrivals,
    log,
    size: formatBytes,
    // Called only once a send has finished, long after `tree` exists.
    sentFolderOf: (id) => folderNameOf(tree.store.peekSent(), id),
  })
  // Made before the tree, which tells it of arrivals; it reads the tree's store only once started.
  const pinner: Pinner = new Pinner({
    content, get store() { return tree.store }, pins: await PinStore.open(path.join(loaded.folders.data, PINS_FILE)),
    onPinned: (label) => desktop.onPinned(label), log,
  })
  const tree = new MountedFileSystem({
    catalog, content, settings: optionsFor(loaded, 'vfs'),
    onFilesListed: desktop.onFilesListed,
    arrivals: {
      onArrivals: (arrivals) => {
        desktop.onArrivals(arrivals)
        pinner.onArrivals()
      },
    },
    log,
    pinned: pinner,
  }, { content, client, desktop })
  const sending = await openSending({
    client, dataDir: loaded.folders.data, options: sendOptionsOf(loaded),
    health: () => serviceHealth(client.connectivity.current, content.health()),
    onSentChanged: (id) => tree.store.refreshSent(id),
    onSent: (record) => desktop.onSent(record),
    pinStatus: () => pinner.status(),
  })
  tree.attachSending(sending)
  tree.attachPinning(pinner)
  await pinner.start()
  tree.pinning = { pinner, control: await serveControl(loaded.folders.data, pinControl(tree, pinner, mountDir), log) }
  return { client, content, core: tree, sending }
}
