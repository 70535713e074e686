// The pinner: puts the files of pinned transfers, searches or the whole inbox on this machine
// before anyone opens them. A pin keeps its files in the disk cache (never evicted, their whole size
// set aside in its budget, so a pin that cannot fit is refused at once and nothing is
// half-fetched and dropped) and fetches what is missing in the background, one file at a
// time, below every read (the read path's fetchAll). A pin is saved before it is acknowledged
// (pin-store.ts), and on every start the pinner takes its pins up again: the bytes already on
// disk are not fetched again. A pinned inbox or search keeps each transfer it lists later,
// found when the arrivals check sees it. What a pin covered stays pinned until it is unpinned.
import type { Logger } from '../base/log.js'
import { plainText } from '../base/shown-text.js'
import type { Transfer } from '../api/types.js'
import { NoRoomError, type CachePinning, type RemoteFile } from '../read/source.js'
import type { PinStatus, PinStatusEntry } from './status.js'
import { FsError } from '../vfs/core.js'
import { stateText } from '../vfs/state-words.js'
import { sameScope, type Pinning, type PinnedTransfers, type PinTarget, type PinScope } from '../vfs/pinning.js'
import type { MetadataStore } from '../vfs/metadata.js'
import { damageText, pinnedCopy, type PinStore, type SavedPin } from './pin-store.js'
import { coveredBy } from './resolve.js'
import { RateWindow } from './rate-window.js'

export interface PinnerConfig {
  content: CachePinning
  /** Read only once started: the mount makes the pinner before the tree whose store this is. */
  readonly store: MetadataStore
  pins: PinStore
  /** Told when a pin's files are all on disk after fetching (its label). */
  onPinned?: (label: string) => void
  log?: Logger
}

/** Why a pin's fetching stopped short, by pin. */
interface Trouble {
  state: 'failed' | 'no room'
  note: string
}

export class Pinner implements Pinning, PinnedTransfers {
  private readonly content: CachePinning
  private readonly pins: PinStore
  /** Every file some pin covers, by cache key. */
  private pinnedFiles = new Map<string, RemoteFile>()
  /** Files a definitive answer stopped (a transfer gone or expired), by cache key: the reason. */
  private readonly failed = new Map<string, string>()
  private readonly troubles = new Map<SavedPin, Trouble>()
  /** Pins complete on disk, told once each. */
  private readonly complete = new WeakSet<SavedPin>()
  private current: { file: RemoteFile; abort: AbortController } | null = null
  private wake: (() => void) | null = null
  private worker: Promise<void> | null = null
  private stopped = false
  private readonly rate = new RateWindow()
  private reconciling: Promise<void> | null = null

  constructor(private readonly cfg: PinnerConfig) {
    this.content = cfg.content
    this.pins = cfg.pins
  }

  /** Takes the saved pins up again and starts fetching what they miss; then asks the service what they cover now. */
  async start(): Promise<void> {
    if (this.pins.damage) this.cfg.log?.warn(damageText(this.pins.damage))
    for (const pin of this.pins.list()) {
      await this.pinFiles(pin, pin.files).catch((e: unknown) => this.troubled(pin, e))
      if (this.pinCached(pin) >= this.pinSize(pin)) this.complete.add(pin)
    }
    // Room set aside for files no pin covers any more (pins removed while unmounted, a pins
    // file deleted) goes back to the cache.
    await this.content.pinOnly(this.pins.list().flatMap((p) => p.files)).catch((e: unknown) => this.cfg.log?.warn(`could not release what no pin keeps: ${(e as Error).message}`))
    this.worker = this.work()
    void this.reconcile()
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.current?.abort.abort(new DOMException('the mount stops', 'AbortError'))
    this.wake?.()
    await this.worker
    await this.reconciling
  }

  // ---- Pinning (the tree's attributes) ----------------------------------------------------------

  isPinned(scope: PinScope): boolean {
    return this.pins.find(scope) !== undefined
  }

  isCovered(file: RemoteFile): boolean {
    return this.pinnedFiles.has(file.cacheKey)
  }

  // ---- PinnedTransfers (what the tree shows of pinned transfers) -----------------------------------

  /** Some file of the transfer is pinned: expired, it stays listed and readable from the cache. */
  has(transferid: string): boolean {
    for (const f of this.pinnedFiles.values()) if (f.transferId === transferid) return true
    return false
  }

  listed(place: 'inbox' | 'sent'): Transfer[] {
    const out = new Map<string, Transfer>()
    for (const pin of this.pins.list()) {
      const from = pin.scope.kind === 'transfer' ? pin.scope.place : 'inbox'
      if (from === place) for (const t of pin.transfers ?? []) out.set(t.id, t)
    }
    return [...out.values()]
  }

  details(transferid: string): Transfer | undefined {
    for (const pin of this.pins.list()) {
      const found = pin.transfers?.find((t) => t.id === transferid)
      if (found) return found
    }
    return undefined
  }

  /**
   * From what is known now, never asking the service (a file manager reads it for every entry
   * it shows): the files known below the node, or for a pinned transfer not opened yet the
   * files its pin saved; a transfer neither opened nor pinned reads `online`.
   */
  async stateOf(target: PinTarget): Promise<string> {
    const files = (await target.known())?.files ?? this.pins.find(target.scope)?.files ?? []
    const pinnedFiles = files.filter((f) => this.pinnedFiles.has(f.cacheKey)).length
    const pinned = this.isPinned(target.scope) || (files.length > 0 && pinnedFiles === files.length)
    const size = files.reduce((n, f) => n + f.size, 0)
    const cached = files.reduce((n, f) => n + Math.min(f.size, this.content.cachedBytes(f)), 0)
    const failed = files.map((f) => this.failed.get(f.cacheKey)).find((r) => r !== undefined) ?? null
    return stateText(pinned, cached, size, failed, { pinnedFiles, files: files.length })
  }

  async pin(target: PinTarget): Promise<void> {
    if (this.isPinned(target.scope)) return this.retry(target)
    const { files, transfers } = await target.covered()
    try {
      await this.content.pin(files)
    } catch (e) {
      if (e instanceof NoRoomError) throw new FsError('ENOSPC', `${target.label} cannot be kept: ${e.message}`)
      throw e
    }
    try {
      await this.pins.add({ scope: target.scope, label: target.label, since: Date.now(), files, transfers: transfers.map(pinnedCopy) })
    } catch (e) {
      // Not saved, so not pinned: the room set aside goes back.
      await this.content.unpin(files.filter((f) => !this.pinnedFiles.has(f.cacheKey)))
      throw e
    }
    for (const f of files) this.pinnedFiles.set(f.cacheKey, f)
    for (const f of files) this.failed.delete(f.cacheKey)
    this.cfg.log?.info(`pinned ${target.label}: ${files.length} files to keep on this machine`)
    this.kick()
  }

  /** Pinned again: the files whose fetching stopped on a failure are tried again. */
  private async retry(target: PinTarget): Promise<void> {
    const { files } = await target.covered()
    const again = files.filter((f) => this.failed.delete(f.cacheKey))
    if (again.length === 0) return
    this.cfg.log?.info(`pinned ${plainText(target.label)} again: ${again.length} file${again.length === 1 ? '' : 's'} that failed tried again`)
    this.kick()
  }

  async unpin(target: PinTarget): Promise<void> {
    await this.unpinScope(target.scope)
  }

  /**
   * Unpins the pin made at `label` (its path on the mount when pinned), for one whose path no
   * longer leads to it (its transfer deleted on the service); false when no pin has that label.
   */
  async unpinLabel(label: string): Promise<boolean> {
    const pin = this.pins.list().find((p) => p.label === label)
    if (!pin) return false
    await this.unpinScope(pin.scope)
    return true
  }

  private async unpinScope(scope: PinScope): Promise<void> {
    const pin = await this.pins.remove(scope)
    if (!pin) return
    this.troubles.delete(pin)
    const still = new Map<string, RemoteFile>()
    for (const p of this.pins.list()) for (const f of p.files) still.set(f.cacheKey, f)
    const released = [...this.pinnedFiles.values()].filter((f) => !still.has(f.cacheKey))
    this.pinnedFiles = still
    if (this.current && !still.has(this.current.file.cacheKey)) this.current.abort.abort(new DOMException('unpinned', 'AbortError'))
    await this.content.unpin(released)
    this.cfg.log?.info(`unpinned ${pin.label}`)
  }

  /** Drops the cached bytes of the files below `target` that no pin keeps; the bytes freed. */
  async free(target: PinTarget): Promise<number> {
    let freed = 0
    for (const f of (await target.covered()).files) if (!this.pinnedFiles.has(f.cacheKey)) freed += await this.content.free(f)
    return freed
  }

  // ---- new transfers in pinned folders ---------------------------------------------------------

  /** The inbox has new transfers: pinned inbox and searches keep what they now list. */
  onArrivals(): void {
    void this.reconcile()
  }

  /** Asks what each pin covers now and keeps what is new; one pass at a time (a pass asked for during one runs after it). */
  reconcile(): Promise<void> {
    const next = (this.reconciling ?? Promise.resolve()).then(() => this.reconcileOnce())
    this.reconciling = next
    return next
  }

  private async reconcileOnce(): Promise<void> {
    for (const pin of this.pins.list()) {
      if (this.stopped) return
      try {
        const now = await coveredBy(this.cfg.store, pin.scope)
        const known = new Set(pin.files.map((f) => f.cacheKey))
        const added = now.files.filter((f) => !known.has(f.cacheKey))
        // The newest description of each file (a download URL may have changed since it was saved).
        for (const f of now.files) if (this.pinnedFiles.has(f.cacheKey)) this.pinnedFiles.set(f.cacheKey, f)
        if (added.length > 0) await this.pinFiles(pin, added)
        // Saved again only when something changed: what is covered, or a transfer's details (a new expiry).
        if (added.length === 0 && now.transfers.every((t) => sameTransfer(pin, t))) continue
        await this.pins.cover(pin, added, now.transfers)
        if (added.length === 0) continue
        this.complete.delete(pin)
        this.cfg.log?.info(`${pin.label}: ${added.length} new files to keep`)
      } catch (e) {
        if (e instanceof NoRoomError) this.troubled(pin, e)
        else this.cfg.log?.warn(`could not ask what ${pin.label} holds now: ${(e as Error).message}`)
      }
    }
    this.kick()
  }

  private async pinFiles(pin: SavedPin, files: readonly RemoteFile[]): Promise<void> {
    await this.content.pin(files)
    if (this.troubles.get(pin)?.state === 'no room') this.troubles.delete(pin)
    for (const f of files) this.pinnedFiles.set(f.cacheKey, f)
  }

  private troubled(pin: SavedPin, e: unknown): void {
    if (e instanceof NoRoomError) {
      this.troubles.set(pin, { state: 'no room', note: `new files cannot be kept: ${e.message}` })
      this.cfg.log?.warn(`${pin.label}: ${e.message}`)
    } else this.cfg.log?.warn(`${pin.label}: ${(e as Error).message}`)
  }

  // ---- fetching --------------------------------------------------------------------------------

  private kick(): void {
    this.wake?.()
  }

  /** The next pinned file with bytes missing, in the order of the pins and their files. */
  private next(): RemoteFile | undefined {
    for (const f of this.pinnedFiles.values()) if (!this.failed.has(f.cacheKey) && this.content.cachedBytes(f) < f.size) return f
    return undefined
  }

  private async work(): Promise<void> {
    while (!this.stopped) {
      const file = this.next()
      if (!file) {
        await new Promise<void>((resolve) => { this.wake = resolve })
        this.wake = null
        continue
      }
      const abort = new AbortController()
      this.current = { file, abort }
      try {
        await this.content.fetchAll(file, { signal: abort.signal, onProgress: () => this.rate.add(this.cachedTotal()) })
        // A fetch that ends with bytes still missing is not tried again at once: picked
        // again and again without a pause, it would keep this loop from ever yielding.
        if (this.content.cachedBytes(file) < file.size) this.giveUp(file, 'not all of its bytes could be kept')
        this.told()
      } catch (e) {
        if (!abort.signal.aborted) {
          // fetchAll rides out what is transient: what it rejects with is a definitive answer
          // (the transfer gone or expired), or the service failing the file every time until
          // the retry policy gave up. It is not asked again until pinned again or remounted.
          this.giveUp(file, (e as Error).message)
        }
      } finally {
        this.current = null
      }
    }
  }

  /** Pinning `file` stopped short: it is not fetched again until pinned again or remounted. */
  private giveUp(file: RemoteFile, reason: string): void {
    this.failed.set(file.cacheKey, reason)
    this.cfg.log?.warn(`keeping ${plainText(file.fileName)} stopped: ${plainText(reason)}; pin it again or remount to try again`)
  }

  /** Tells each pin that has just become complete on disk. */
  private told(): void {
    for (const pin of this.pins.list()) {
      if (this.complete.has(pin) || this.pinCached(pin) < this.pinSize(pin)) continue
      this.complete.add(pin)
      this.cfg.log?.info(`${pin.label} is kept on this machine`)
      this.cfg.onPinned?.(pin.label)
    }
  }

  private cachedTotal(): number {
    let n = 0
    for (const f of this.pinnedFiles.values()) n += Math.min(f.size, this.content.cachedBytes(f))
    return n
  }

  private pinSize(pin: SavedPin): number {
    return pin.files.reduce((n, f) => n + f.size, 0)
  }

  private pinCached(pin: SavedPin): number {
    return pin.files.reduce((n, f) => n + Math.min(f.size, this.content.cachedBytes(f)), 0)
  }

  // ---- status ----------------------------------------------------------------------------------

  status(): PinStatus {
    const fetching = this.current?.file.cacheKey
    const rate = this.rate.perSecond()
    const entries: PinStatusEntry[] = this.pins.list().map((pin) => {
      const bytesTotal = this.pinSize(pin)
      const bytesCached = this.pinCached(pin)
      const failures = pin.files.map((f) => this.failed.get(f.cacheKey)).filter((r): r is string => r !== undefined)
      const trouble = this.troubles.get(pin)
      const active = fetching !== undefined && pin.files.some((f) => f.cacheKey === fetching)
      let state: PinStatusEntry['state'] = bytesCached >= bytesTotal ? 'pinned' : active ? 'fetching' : 'waiting'
      let note: string | null = null
      if (failures.length > 0) {
        note = `${failures.length} file${failures.length === 1 ? '' : 's'} could not be fetched: ${failures[0]}; pin it again or remount to try again`
        if (state !== 'pinned' && !active) state = 'failed'
      }
      if (trouble) {
        note = trouble.note
        if (state !== 'fetching') state = trouble.state
      }
      const pinRate = active ? rate : null
      return {
        name: pin.label, state, files: pin.files.length, bytesCached, bytesTotal,
        rate: pinRate, eta: pinRate && pinRate > 0 ? Math.ceil((bytesTotal - bytesCached) / pinRate) : null, note,
      }
    })
    const damage = this.pins.damage
    return { entries, cache: this.content.cacheUse(), ...(damage ? { notices: [damageText(damage)] } : {}) }
  }

  /** The saved pin of a scope (tests, the control socket). */
  pinOf(scope: PinScope): SavedPin | undefined {
    return this.pins.list().find((p) => sameScope(p.scope, scope))
  }
}

/** The pin holds these details of the transfer already (nothing to save again). */
function sameTransfer(pin: SavedPin, transfer: Transfer): boolean {
  const had = pin.transfers?.find((t) => t.id === transfer.id)
  return had !== undefined && JSON.stringify(had) === JSON.stringify(pinnedCopy(transfer))
}
