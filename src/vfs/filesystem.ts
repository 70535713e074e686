// The mount's filesystem core: the router (router.ts) over the top-level areas, in the
// order the root lists them: `inbox/`, `sent/`, `outbox/` (once sending is wired in),
// `by-id/`, `search/` and `.status`. Without sending the tree is read-only but for a locked
// transfer's `.password`; with it, `outbox/` stages new transfers and `sent/` takes files
// added to a transfer (areas/additions.ts).
import { constants as C } from 'node:fs'
import type { FileContent } from '../read/source.js'
import { idleStatus, type TransferCatalog, type StatusSource } from './catalog.js'
import type { NodeAttr, StatFs } from './core.js'
import type { FilesListed } from './listed.js'
import { ArrivalWatch, DEFAULT_ARRIVAL_OPTIONS, type ArrivalOptions } from './arrivals.js'
import type { Arrival } from './inbox-news.js'
import type { Pinning, PinnedTransfers } from './pinning.js'
import { MetadataStore } from './metadata.js'
import { NAME_MAX_BYTES } from './names.js'
import { systemClock, type Clock } from '../base/clock.js'
import type { Logger } from '../base/log.js'
import { vfsSettings, type VfsSettings } from './settings.js'
import { AreaRouter } from './router.js'
import type { Area } from './areas/area.js'
import { SentWithAdditions } from './areas/additions.js'
import { byIdArea } from './areas/by-id.js'
import { inboxArea } from './areas/inbox.js'
import { OutboxArea } from './areas/outbox.js'
import { SearchArea } from './areas/search.js'
import { sentArea } from './areas/sent.js'
import type { SendingParts } from './areas/staging.js'
import { STATUS_FILE, StatusArea } from './areas/status.js'
import { TransferView } from './areas/transfers.js'

const BLOCK_SIZE = 4096
/** Free space `df` shows for an account without a storage limit: plenty, so copy dialogs do not balk. */
const UNLIMITED_FREE_BYTES = 2 ** 50
const FILE_SLOTS = 1_000_000

export interface TransferFileSystemOptions {
  catalog: TransferCatalog
  content: FileContent
  settings?: Partial<VfsSettings>
  clock?: Clock
  status?: StatusSource
  /** Told the files of each transfer folder listed (the desktop's thumbnails). */
  onFilesListed?: FilesListed
  /** Look for new transfers in the background (arrivals.ts), telling each one here. */
  arrivals?: { onArrivals: (arrivals: Arrival[]) => void; options?: Partial<ArrivalOptions> }
  /** Told what no file operation can answer (search words the service refused, a transfer of unusually many files). */
  log?: Logger
  /** The transfers pinned on this machine (pinning.ts): known before anything is listed, so a mount started offline lists them. */
  pinned?: PinnedTransfers
}

export class TransferFileSystem extends AreaRouter {
  readonly store: MetadataStore
  private readonly view: TransferView
  private readonly clock: Clock
  private readonly status: StatusSource
  private readonly arrivals: ArrivalWatch | undefined
  private sending: SendingParts | null = null

  constructor(options: TransferFileSystemOptions) {
    super()
    const settings = vfsSettings(options.settings)
    this.clock = options.clock ?? systemClock
    this.status = options.status ?? idleStatus
    this.store = new MetadataStore(options.catalog, settings, this.clock, options.log)
    if (options.pinned) this.store.pinned = options.pinned
    this.view = new TransferView(this.store, options.content, settings, new Date(this.clock.now()), options.onFilesListed)
    if (options.arrivals) {
      this.store.inboxNews.listener = options.arrivals.onArrivals
      this.arrivals = new ArrivalWatch(this.store, options.catalog, this.clock, { ...DEFAULT_ARRIVAL_OPTIONS, ...options.arrivals.options })
      this.arrivals.start()
    }
    this.areas = this.areasWith(null)
  }

  /**
   * Wires sending in: `outbox/`, additions to `sent/` and `.status` telling what is sent. Sending is opened after the tree, because it tells the tree's store of each send.
   */
  attachSending(parts: SendingParts): void {
    this.sending = parts
    this.areas = this.areasWith(parts)
  }

  /** Wires the pinner in: the pin and state attributes, and what pinning a path keeps (pinTargetAt). */
  attachPinning(pinning: Pinning): void {
    this.view.pinning = pinning
  }

  private areasWith(sending: SendingParts | null): Map<string, Area> {
    const sent = sentArea(this.view)
    return new Map<string, Area>([
      ['inbox', inboxArea(this.view, this.arrivals)],
      ['sent', sending ? new SentWithAdditions(sent, this.store, sending) : sent],
      ...(sending ? [['outbox', new OutboxArea(sending.outbox)] as const] : []),
      ['by-id', byIdArea(this.view)],
      ['search', new SearchArea(this.view)],
      [STATUS_FILE, new StatusArea(this.view, sending ? { text: () => sending.statusText() } : this.status, () => this.clock.now())],
    ])
  }

  protected rootAttr(): NodeAttr {
    return this.view.attr(C.S_IFDIR | 0o555, 0, null)
  }

  async statfs(_path: string): Promise<StatFs> {
    const account = await this.store.account().catch(() => undefined)
    const used = Math.max(0, account?.storageinuse ?? 0)
    const limit = account?.storagelimit ?? 0
    const total = account === undefined ? used : limit > 0 ? Math.max(limit, used) : used + UNLIMITED_FREE_BYTES
    const free = Math.floor((total - used) / BLOCK_SIZE)
    return {
      bsize: BLOCK_SIZE,
      frsize: BLOCK_SIZE,
      blocks: Math.ceil(total / BLOCK_SIZE),
      bfree: free,
      bavail: free,
      files: FILE_SLOTS,
      ffree: FILE_SLOTS,
      favail: FILE_SLOTS,
      namemax: NAME_MAX_BYTES,
    }
  }

  /** Sends pause (they resume on the next start), open files are let go, background reads end. */
  override async shutdown(): Promise<void> {
    await this.sending?.shutdown().catch(() => undefined)
    await this.arrivals?.stop()
    await super.shutdown()
    await this.store.whenIdle()
  }

  /** Every listing becomes stale and is fetched again on its next use. */
  refresh(): void {
    this.store.expireAll()
  }

  /** Resolves once no background refresh is running (tests, shutdown). */
  whenIdle(): Promise<void> {
    return this.store.whenIdle()
  }
}
