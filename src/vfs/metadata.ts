// The metadata cache: what the tree knows about transfers, filled by listings and
// details, kept for a TTL and refreshed without blocking (see refreshing.ts). getattr,
// lookup and readdir are answered from here; only a first visit of something waits for
// the service. Each transfer's details, and the passwords that open them, are kept by
// transfer-details.ts; the folders and files of each, by transfer-trees.ts.
//
// What is shown (by default the inbox leaves expired transfers out: docs/design.md, Inbox):
// - inbox/ and sent/ list only complete transfers that have not expired. An expired
//   transfer's downloads answer 404, so listing it would show files that cannot be read
//   (but for one pinned on this machine: `pinned`);
//   cancelled and deleted transfers leave the inbox; unfinished ones are still uploading.
// - by-id/<id or trackid> opens any transfer the caller can see, expired, cancelled or
//   deleted included: those show only their `.transfer.json` (which says why).
// - search/<words> shows what the inbox search finds, leaving out what inbox/ leaves out.
import { NetworkError } from '../api/errors.js'
import type { Transfer } from '../api/types.js'
import type { Account, TransferCatalog } from './catalog.js'
import { buildListing, type FolderListing, type TransferEntry, type TransferRef } from './folder-listing.js'
import { InboxNews } from './inbox-news.js'
import { NONE_PINNED, type PinnedTransfers } from './pinning.js'
import { Refreshing, type RefreshPolicy } from './refreshing.js'
import { InboxSearches } from './searches.js'
import type { Clock } from '../base/clock.js'
import { silentLogger, type Logger } from '../base/log.js'
import type { VfsSettings } from './settings.js'
import { idRef, TransferDetails, type Details } from './transfer-details.js'
import type { TreeDir } from './transfer-tree.js'
import { TransferTrees } from './transfer-trees.js'

const MAX_BY_ID_LOOKUPS = 4096

/** What a transfer folder holds right now. */
export type Contents =
  | { state: 'locked' }
  | { state: 'open'; transfer: Transfer; tree: TreeDir }
  /** Expired, cancelled, deleted or unfinished: only its `.transfer.json`. */
  | { state: 'closed'; transfer: Transfer }
  | { state: 'gone' }

/** Who besides the owner may read a sent transfer's files (access-bits.ts), and any of them (its folders, `.transfer.json`). */
export interface SentReaders {
  files: Map<string, number>
  any: number
}

function sentReadersOf(readers: Record<string, number>): SentReaders {
  const files = new Map(Object.entries(readers))
  let any = 0
  for (const bits of files.values()) any |= bits
  return { files, any }
}

/**
 * Complete and not expired; or expired but pinned on this machine (`pinned`): a pinned transfer
 * stays readable from the cache until it is unpinned (docs/behaviour.md, Keeping offline).
 */
export function isReadable(transfer: Transfer, pinned: PinnedTransfers = NONE_PINNED): boolean {
  return transfer.status === 'STATUS_COMPLETE' && (!transfer.isexpired || pinned.has(transfer.id))
}

export class MetadataStore {
  private readonly policy: RefreshPolicy
  private readonly pending = new Set<Promise<unknown>>()
  private readonly inboxListing: Refreshing<FolderListing>
  private readonly sentListing: Refreshing<FolderListing>
  private readonly accountInfo: Refreshing<Account>
  private readonly details: TransferDetails
  private readonly byIdLookups = new Map<string, Refreshing<TransferEntry | null>>()
  private readonly trees: TransferTrees
  private readonly searches: InboxSearches
  private readonly sentAccess = new Map<string, SentReaders>()
  /** The last background refresh failure, for `.status` and logs (never holds a secret). */
  lastRefreshError: unknown = undefined
  /** What is new in each inbox listing (its listener is told of arrivals). */
  readonly inboxNews = new InboxNews()
  /**
   * The transfers pinned on this machine: expired, they are still shown and read from
   * the cache; while the service cannot be reached, they are what inbox/ and sent/ list and
   * what their folders hold (a mount started offline shows what was pinned).
   */
  pinned: PinnedTransfers = NONE_PINNED
  private readonly readable = (transfer: Transfer): boolean => isReadable(transfer, this.pinned)

  constructor(private readonly catalog: TransferCatalog, settings: VfsSettings, clock: Clock, log: Logger = silentLogger) {
    this.policy = {
      clock,
      ttlMs: settings.listingTtlMs,
      failureBackoffMs: settings.failureBackoffMs,
      track: (refresh) => {
        this.pending.add(refresh)
        void refresh.finally(() => this.pending.delete(refresh))
      },
      onError: (error) => {
        this.lastRefreshError = error
      },
    }
    this.details = new TransferDetails(catalog, this.policy, () => this.pinned)
    this.trees = new TransferTrees(log)
    this.inboxListing = new Refreshing(() => this.loadInbox(), this.policy)
    this.sentListing = new Refreshing(() => this.loadSent(settings.detailsConcurrency), this.policy)
    this.accountInfo = new Refreshing(() => this.catalog.account(), this.policy)
    this.searches = new InboxSearches((words) => this.catalog.inboxSearch(words), (found) => this.inboxFolderOf(found), this.policy, log)
  }

  inbox(): Promise<FolderListing> {
    return this.inboxListing.get()
  }

  peekInbox(): FolderListing | undefined {
    return this.inboxListing.peek()
  }

  sent(): Promise<FolderListing> {
    return this.sentListing.get()
  }

  peekSent(): FolderListing | undefined {
    return this.sentListing.peek()
  }

  /** Who besides the owner could read a transfer sent from this machine, as its outbox entry allowed; undefined: not known. */
  sentReaders(id: string): SentReaders | undefined {
    return this.sentAccess.get(id)
  }

  account(): Promise<Account> {
    return this.accountInfo.get()
  }

  /** search/<name>: the inbox transfers the service's search finds for the name's words. */
  search(name: string): Promise<FolderListing> {
    return this.searches.get(name)
  }

  /** `search/<name>` searched now, not from the cache. */
  searchAgain(name: string): Promise<FolderListing> {
    return this.searches.again(name)
  }

  peekSearch(name: string): FolderListing | undefined {
    return this.searches.peek(name)
  }

  /** The names searched during this mount, newest first. */
  searchNames(): string[] {
    return this.searches.names()
  }

  /** A transfer already known from a listing, by id or trackid, without any call. */
  private known(name: string): TransferEntry | undefined {
    const entry = this.peekInbox()?.byIdentifier.get(name) ?? this.peekSent()?.byIdentifier.get(name)
    return entry && { ...entry, place: 'by-id' }
  }

  /** by-id/<name>: a transfer by id, else by trackid; null when the caller cannot see one. */
  async byId(name: string): Promise<TransferEntry | null> {
    const known = this.known(name)
    if (known) return known
    let lookup = this.byIdLookups.get(name)
    // A name once found keeps meaning that transfer (its contents refresh with its details);
    // only "not found" is asked again after the TTL.
    const found = lookup?.peek()
    if (found) return found
    if (!lookup) {
      // Names looked up by hand are few; a script trying many must not grow this forever.
      if (this.byIdLookups.size >= MAX_BY_ID_LOOKUPS) {
        this.byIdLookups.delete(this.byIdLookups.keys().next().value!)
      }
      lookup = new Refreshing(() => this.details.lookUp(name), this.policy)
      this.byIdLookups.set(name, lookup)
    }
    return lookup.get()
  }

  peekById(name: string): TransferEntry | null | undefined {
    return this.known(name) ?? this.byIdLookups.get(name)?.peek()
  }

  async contents(entry: TransferEntry): Promise<Contents> {
    if (this.isLockedByListing(entry)) return { state: 'locked' }
    return this.contentsOf(await this.details.of(entry.ref).get())
  }

  /** The contents if already known, without any call or refresh. */
  peekContents(entry: TransferEntry): Contents | undefined {
    if (this.isLockedByListing(entry)) return { state: 'locked' }
    const details = this.details.peek(entry.ref)
    return details && this.contentsOf(details)
  }

  isUnlocked(entry: TransferEntry): boolean {
    return this.details.isUnlocked(entry.ref)
  }

  /** Tries a password; right: the folder opens for the life of the mount. Wrong: EACCES. */
  unlock(entry: TransferEntry, password: string): Promise<void> {
    return this.details.unlock(entry.ref, password)
  }

  /** Everything becomes stale: the next access refreshes (an explicit "look again"). */
  expireAll(): void {
    this.inboxListing.expire()
    this.sentListing.expire()
    this.accountInfo.expire()
    this.details.expireAll()
    this.byIdLookups.clear()
    this.searches.expireAll()
  }

  /**
   * A transfer was sent or changed from this machine: fetch its details and the sent/
   * listing again now (not in the background), so the change shows on the next look.
   * A failure keeps the last values (the next TTL refresh tries again).
   */
  async refreshSent(transferid?: string): Promise<void> {
    if (transferid !== undefined) await this.details.of(idRef(transferid)).refresh().catch(() => undefined)
    await this.sentListing.refresh().catch(() => undefined)
  }

  /** Resolves once no background refresh is running. */
  async whenIdle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending])
  }

  private isLockedByListing(entry: TransferEntry): boolean {
    return entry.summary?.passwordprotected === true && !this.details.isUnlocked(entry.ref)
  }

  private contentsOf(details: Details): Contents {
    if (details.state !== 'found') return details
    const transfer = details.transfer
    if (!this.readable(transfer)) return { state: 'closed', transfer }
    return { state: 'open', transfer, tree: this.trees.of(transfer) }
  }

  /** The newest sent date of the inbox listing (unix ms); undefined before its first load. */
  newestInboxSentdate(): number | undefined {
    const listing = this.peekInbox()
    if (!listing) return undefined
    let newest = 0
    for (const entry of listing.byName.values()) newest = Math.max(newest, entry.summary?.sentdate ?? 0)
    return newest
  }

  /** The inbox is listed again in full on its next use. */
  expireInbox(): void {
    this.inboxListing.expire()
  }

  /** A full inbox listing is being fetched (it will hold whatever is new). */
  get inboxLoading(): boolean {
    return this.inboxListing.loading
  }

  /**
   * Transfers found by a small "newer than" inbox call, added to the listing as they are
   * (the next full refresh replaces it); those not listed yet are told as arrivals.
   */
  addToInbox(found: Transfer[]): void {
    const listing = this.peekInbox()
    if (!listing) return
    const fresh = found.filter((t) => this.readable(t) && !listing.byIdentifier.has(t.id))
    if (fresh.length === 0) return
    this.keepInboxDetails(fresh)
    const items = [...listing.byName.values(), ...fresh.map((summary) => ({ ref: idRef(summary.id), summary }))]
    this.inboxListing.update(() => this.noted(buildListing('inbox', items)))
  }

  private noted(listing: FolderListing): FolderListing {
    this.inboxNews.take(listing)
    return listing
  }

  private keepInboxDetails(transfers: Transfer[]): void {
    // An inbox page carries each transfer's files as details would give them to a
    // recipient: opening the folder needs no call of its own (a file manager's indexer
    // walking 5,000 transfers made 5,000 details calls). A protected transfer's page
    // entry has no files: its details come with the password.
    for (const summary of transfers) {
      if (!summary.passwordprotected && Array.isArray(summary.files) && summary.files.length > 0) {
        this.details.of(idRef(summary.id)).set({ state: 'found', transfer: summary })
      }
    }
  }

  private async loadInbox(): Promise<FolderListing> {
    let inbox
    try {
      inbox = await this.catalog.inbox()
    } catch (error) {
      // Not taken as the arrivals' starting point: what the service lists next is not all news.
      return this.pinnedInstead(error, 'inbox')
    }
    // The pages describe the account too: `df` (and find, which asks statfs) need no call of their own.
    this.accountInfo.set(inbox.account)
    return this.noted(this.inboxFolderOf([...inbox.transfers, ...(await this.pinnedBeyond(inbox.transfers))]))
  }

  /**
   * The pinned transfers the service's inbox no longer lists (it leaves expired ones out), with
   * their details as the service gives them now (they say it expired); the saved ones when it
   * cannot be reached. One that is gone (deleted) leaves. Few: only what was pinned and left.
   */
  private async pinnedBeyond(listed: readonly Transfer[]): Promise<Transfer[]> {
    const ids = new Set(listed.map((t) => t.id))
    const found = await Promise.all(this.pinned.listed('inbox').filter((t) => !ids.has(t.id)).map(async (t) => {
      const details = await this.details.of(idRef(t.id)).get().catch((e: unknown): Details | null => (e instanceof NetworkError ? { state: 'found', transfer: t } : null))
      return details?.state === 'found' ? details.transfer : null
    }))
    return found.filter((t): t is Transfer => t !== null)
  }

  /**
   * A folder of transfers from inbox pages (the inbox's own or a search's), named as inbox/
   * names them, without what the inbox leaves out; their files are kept as their details, so
   * a transfer found twice is one cache entry (and its files one download).
   */
  private inboxFolderOf(found: Transfer[]): FolderListing {
    const transfers = found.filter(this.readable)
    this.keepInboxDetails(transfers)
    return buildListing('inbox', transfers.map((summary) => ({ ref: idRef(summary.id), summary })))
  }

  /**
   * What a folder's listing that failed with `error` shows instead: while the service cannot be
   * reached, the pinned transfers of the folder (their details with them); else the error.
   */
  private pinnedInstead(error: unknown, place: 'inbox' | 'sent'): FolderListing {
    const pinned = error instanceof NetworkError ? this.pinned.listed(place) : []
    if (pinned.length === 0) throw error
    this.lastRefreshError = error
    for (const transfer of pinned) this.details.of(idRef(transfer.id)).set({ state: 'found', transfer })
    return buildListing(place, pinned.filter(this.readable).map((summary) => ({ ref: idRef(summary.id), summary })))
  }

  private async loadSent(concurrency: number): Promise<FolderListing> {
    let sent
    try {
      sent = await this.catalog.sentIds()
    } catch (error) {
      return this.pinnedInstead(error, 'sent')
    }
    for (const { id, password, readers } of sent) {
      if (password !== undefined) this.details.remember(idRef(id), password)
      if (readers) this.sentAccess.set(id, sentReadersOf(readers))
    }
    const items: Array<{ ref: TransferRef; summary: Transfer | null } | null> = new Array(sent.length).fill(null)
    let next = 0
    const worker = async (): Promise<void> => {
      while (next < sent.length) {
        const i = next++
        const ref = idRef(sent[i]!.id)
        const details = await this.details.of(ref).get()
        if (details.state === 'locked') items[i] = { ref, summary: null }
        else if (details.state === 'found' && this.readable(details.transfer)) items[i] = { ref, summary: details.transfer }
      }
    }
    await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, sent.length)) }, worker))
    return buildListing('sent', items.filter((item) => item !== null))
  }
}
