// The filesystem model's TransferCatalog over the Transfer Service client: the inbox
// and its search (every page), details by id or trackid (with a password when one was given), the
// account figures from the inbox's owner, and the transfers sent from this machine from
// the send module's sent log.
import type { TransferClient } from '../api/client.js'
import type { InboxResult, Transfer } from '../api/types.js'
import type { Account, DetailsOptions, InboxListing, SentRef, TransferCatalog } from './catalog.js'

/** Where the transfers sent from this machine are listed (the send module's log). */
export interface SentSource {
  list(): Promise<Array<{ transferid: string; readers?: Record<string, number> }>>
}

export const noSentTransfers: SentSource = { list: async () => [] }

/** Every file of a transfer: the model builds the whole tree from one details answer. */
const ALL_FILES = -1

export class ServiceCatalog implements TransferCatalog {
  constructor(
    private readonly client: TransferClient,
    private readonly sent: SentSource = noSentTransfers,
  ) {}

  async inbox(): Promise<InboxListing> {
    const transfers: Transfer[] = []
    let account: Account | null = null
    for await (const t of this.client.transfers.inboxAll({}, (page) => { account ??= accountOf(page) })) transfers.push(t)
    return { transfers, account: account! }
  }

  async inboxSearch(words: string): Promise<Transfer[]> {
    const found: Transfer[] = []
    for await (const t of this.client.transfers.inboxAll({ search: words })) found.push(t)
    return found
  }

  async inboxSince(from: number, take: number): Promise<Transfer[]> {
    return (await this.client.transfers.inbox({ from, take })).transfers ?? []
  }

  details(id: string, options: DetailsOptions = {}): Promise<Transfer> {
    return this.client.transfers.details(id, { filesLimit: ALL_FILES, password: options.password })
  }

  byTrackId(trackid: string, options: DetailsOptions = {}): Promise<Transfer> {
    return this.client.transfers.details(null, { trackId: trackid, filesLimit: ALL_FILES, password: options.password })
  }

  async account(): Promise<Account> {
    // One transfer per page is the cheapest inbox answer that still carries its owner.
    return accountOf(await this.client.transfers.inbox({ take: 1 }))
  }

  async sentIds(): Promise<SentRef[]> {
    const records = await this.sent.list()
    return records.map((r) => (r.readers ? { id: r.transferid, readers: r.readers } : { id: r.transferid }))
  }
}

function accountOf(page: InboxResult): Account {
  return { storageinuse: page.inboxOwner.storageinuse, storagelimit: page.inboxOwner.storagelimit }
}
