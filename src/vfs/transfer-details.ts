// Each transfer's details, cached one entry a way of naming it (by id, or by a recipient's
// trackid), with the passwords that open protected ones. A password given through
// `.password` lives here, in memory only, for the life of the mount; one the service
// stops taking locks the folder again. While the service cannot be reached, a pinned
// transfer's details are the ones saved with its pin.
import { NetworkError, ServiceError } from '../api/errors.js'
import { isServiceNotFound } from '../api/failure.js'
import type { Transfer } from '../api/types.js'
import type { TransferCatalog } from './catalog.js'
import { FsError } from './core.js'
import type { TransferEntry, TransferRef } from './folder-listing.js'
import type { PinnedTransfers } from './pinning.js'
import { Refreshing, type RefreshPolicy } from './refreshing.js'

export type Details =
  | { state: 'found'; transfer: Transfer }
  | { state: 'locked' }
  | { state: 'gone' }

export function idRef(id: string): TransferRef {
  return { key: `id:${id}`, via: 'id', token: id }
}

function trackRef(trackid: string): TransferRef {
  return { key: `track:${trackid}`, via: 'trackid', token: trackid }
}

function statusOf(error: unknown): string | null {
  return error instanceof ServiceError ? error.responsestatus : null
}

function needsPassword(error: unknown): boolean {
  return statusOf(error) === 'PasswordRequired'
}

function isWrongPassword(error: unknown): boolean {
  const status = statusOf(error)
  return status === 'AccessDenied' || status === 'CaptchaRequiredForNextLogin'
}

export class TransferDetails {
  private readonly cached = new Map<string, Refreshing<Details>>()
  private readonly passwords = new Map<string, string>()

  /** `pinned` is asked at each failure: the pinned transfers are wired in after the store is made. */
  constructor(private readonly catalog: TransferCatalog, private readonly policy: RefreshPolicy, private readonly pinned: () => PinnedTransfers) {}

  /** A transfer's details, loaded on first use and refreshed in the background once stale. */
  of(ref: TransferRef): Refreshing<Details> {
    let details = this.cached.get(ref.key)
    if (!details) {
      details = new Refreshing(() => this.load(ref), this.policy)
      this.cached.set(ref.key, details)
    }
    return details
  }

  /** The details if already known, without any call or refresh. */
  peek(ref: TransferRef): Details | undefined {
    return this.cached.get(ref.key)?.peek()
  }

  /** A transfer by id, else by trackid, its details kept; null when the caller cannot see one. */
  async lookUp(name: string): Promise<TransferEntry | null> {
    for (const ref of [idRef(name), trackRef(name)]) {
      const found = await this.load(ref)
      if (found.state === 'gone') continue
      this.of(ref).set(found)
      return { ref, place: 'by-id', summary: found.state === 'found' ? found.transfer : null }
    }
    return null
  }

  isUnlocked(ref: TransferRef): boolean {
    return this.passwords.has(ref.key)
  }

  /** Tries a password; right: the folder opens for the life of the mount. Wrong: EACCES. */
  async unlock(ref: TransferRef, password: string): Promise<void> {
    if (this.passwords.get(ref.key) === password) return
    let transfer: Transfer
    try {
      transfer = await this.fetch(ref, password)
    } catch (error) {
      if (isWrongPassword(error) || needsPassword(error)) throw new FsError('EACCES', 'wrong password')
      throw error
    }
    this.passwords.set(ref.key, password)
    this.of(ref).set({ state: 'found', transfer })
    const byTransferId = idRef(transfer.id)
    if (byTransferId.key !== ref.key && !this.passwords.has(byTransferId.key)) {
      this.passwords.set(byTransferId.key, password)
      this.of(byTransferId).expire()
    }
  }

  /** A password the sender's own listing carries; one given through `.password` stays. */
  remember(ref: TransferRef, password: string): void {
    if (!this.passwords.has(ref.key)) this.passwords.set(ref.key, password)
  }

  /** Every transfer's details become stale: the next access refreshes them. */
  expireAll(): void {
    for (const details of this.cached.values()) details.expire()
  }

  private fetch(ref: TransferRef, password: string | undefined): Promise<Transfer> {
    const options = password === undefined ? {} : { password }
    return ref.via === 'id' ? this.catalog.details(ref.token, options) : this.catalog.byTrackId(ref.token, options)
  }

  private async load(ref: TransferRef): Promise<Details> {
    const password = this.passwords.get(ref.key)
    try {
      return { state: 'found', transfer: await this.fetch(ref, password) }
    } catch (error) {
      const pinned = error instanceof NetworkError && ref.via === 'id' ? this.pinned().details(ref.token) : undefined
      if (pinned) return { state: 'found', transfer: pinned }
      if (needsPassword(error)) return { state: 'locked' }
      if (isWrongPassword(error)) {
        // The password changed (or was never right): lock again. Without one, the
        // caller simply cannot see this transfer.
        if (password === undefined) return { state: 'gone' }
        this.passwords.delete(ref.key)
        return { state: 'locked' }
      }
      if (isServiceNotFound(error)) return { state: 'gone' }
      throw error
    }
  }
}
