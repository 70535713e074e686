// What the filesystem model asks of the Transfer Service: transfers and the account,
// nothing about HTTP. The mount wires the client (src/api) into this port; tests drive
// it with an in-memory catalog.
import type { InboxOwner, Transfer } from '../api/types.js'

/** The account figures `df` shows. InboxOwner fits as is. */
export type Account = Pick<InboxOwner, 'storageinuse' | 'storagelimit'>

/** A transfer sent from this machine, with its password when the send module set one. */
export interface SentRef {
  id: string
  password?: string
  /**
   * Which of group and other could read each file (by its name in the transfer) in the
   * outbox when it was sent (access-bits.ts); absent for a record from before it was kept.
   */
  readers?: Record<string, number>
}

export interface DetailsOptions {
  password?: string
}

/** The whole inbox, and the account as its pages describe it (storage use and limit). */
export interface InboxListing {
  transfers: Transfer[]
  account: Account
}

export interface TransferCatalog {
  /**
   * Every received transfer the inbox shows (all pages, newest first, the service's default
   * `includeExpired=false`). The model drops expired, cancelled, deleted and unfinished ones anyway.
   */
  inbox(): Promise<InboxListing>
  /**
   * One page of at most `take` received transfers sent after `from` (unix ms), newest
   * first: the small call that finds new arrivals without listing the whole inbox.
   */
  inboxSince(from: number, take: number): Promise<Transfer[]>
  /**
   * Every received transfer the inbox search finds for `words` (over id, subject, message,
   * sender, recipients and custom fields), all pages, newest first, as inbox() gives them.
   */
  inboxSearch(words: string): Promise<Transfer[]>
  /**
   * A transfer's details (GET /transfer/{id}). Throws ServiceError: `PasswordRequired` when a
   * password is needed and none given, `AccessDenied` / `CaptchaRequiredForNextLogin` for a wrong
   * one, `NotFound` (404) for an unknown id.
   */
  details(id: string, options?: DetailsOptions): Promise<Transfer>
  /** The same by trackid (GET /transfer/-?trackid=...). */
  byTrackId(trackid: string, options?: DetailsOptions): Promise<Transfer>
  account(): Promise<Account>
  /** Transfers sent from this machine (the send module's journal); their details give the owner view. */
  sentIds(): Promise<SentRef[]>
}

/** The text of `/.status` (vfs/areas/status.ts); with sending wired in, the send module's. */
export interface StatusSource {
  text(): string
}

export const idleStatus: StatusSource = { text: () => 'nothing is being sent\n' }
