// The inbox searches made during this mount, by the name each was looked up under
// (`search/<words>`). Each result is kept like a listing (refreshing.ts): fresh for the
// TTL, then served at once while one background call refreshes it, so a search costs at
// most one inbox search (its pages) per interval. The names are what `search/` lists,
// newest first. Words the service refuses give an empty result, kept for the TTL like any
// other, and a line in the log: asking again with the same words gets the same answer.
import { isRefusedRequest } from '../api/failure.js'
import type { Logger } from '../base/log.js'
import type { Transfer } from '../api/types.js'
import type { FolderListing } from './folder-listing.js'
import { textOfName } from './names.js'
import { Refreshing, type RefreshPolicy } from './refreshing.js'

/**
 * Searches kept. One may hold much of the inbox, and a path typed into a file manager's
 * location bar is looked up at every keystroke: a search per prefix. The oldest go first.
 */
const MAX_SEARCHES = 64

export class InboxSearches {
  /** In the order they were first made. */
  private readonly searches = new Map<string, Refreshing<FolderListing>>()

  constructor(
    /** The service's inbox search, every page. */
    private readonly find: (words: string) => Promise<Transfer[]>,
    /** The folder the found transfers make, as `inbox/` would show them. */
    private readonly folderOf: (found: Transfer[]) => FolderListing,
    private readonly policy: RefreshPolicy,
    /** Where the searches tell what no file operation can answer. */
    private readonly log: Logger,
  ) {}

  /** The transfers found for the name `search/<name>`: cached, or searched now. */
  get(name: string): Promise<FolderListing> {
    return this.of(name).get()
  }

  /** The transfers found for the name, searched now (a pinned search, once new transfers arrived). */
  again(name: string): Promise<FolderListing> {
    return this.of(name).refresh()
  }

  private of(name: string): Refreshing<FolderListing> {
    let search = this.searches.get(name)
    if (!search) {
      if (this.searches.size >= MAX_SEARCHES) this.searches.delete(this.searches.keys().next().value!)
      search = new Refreshing(() => this.load(name), this.policy)
      this.searches.set(name, search)
    }
    return search
  }

  /** The result already known, without any call. */
  peek(name: string): FolderListing | undefined {
    return this.searches.get(name)?.peek()
  }

  /** The names searched that have a result, newest first. */
  names(): string[] {
    const names: string[] = []
    for (const [name, search] of this.searches) if (search.peek() !== undefined) names.push(name)
    return names.reverse()
  }

  /** Every result becomes stale: the next look searches again. */
  expireAll(): void {
    for (const search of this.searches.values()) search.expire()
  }

  private async load(name: string): Promise<FolderListing> {
    let found: Transfer[]
    try {
      found = await this.find(textOfName(name))
    } catch (error) {
      if (!isRefusedRequest(error)) throw error
      this.log.warn(`search/${name}: the service refused these words (${error.responsestatus ?? error.httpStatus}); the folder stays empty`)
      found = []
    }
    return this.folderOf(found)
  }
}
