// A folder's entries held between the pages of one READDIR or READDIRPLUS listing. A client
// pages a large folder by cookie (libnfs asks for 8 KiB at a time: some 80 calls for an inbox
// of 5,000 transfers), and a page that asked the core again would have the service list the
// folder again whenever the core's copy went stale meanwhile. So the first page (cookie 0)
// takes the folder's names, and for READDIRPLUS their attributes, once; the pages after it
// name that listing by the cookie verifier they were given, and are cut from it. A verifier
// this server does not hold (it restarted, or let the listing go) takes a new listing, and the
// page still starts after the entry its cookie names: cookies name entries by their names.
import { randomBytes } from 'node:crypto'
import type { NodeAttr } from '../vfs/core.js'

export interface Listing {
  readonly dir: string
  /** ".", "..", then the core's names. */
  readonly names: readonly string[]
  /** Each name's attributes (null where they could not be had), taken for READDIRPLUS; absent for READDIR. */
  readonly attrs?: ReadonlyArray<NodeAttr | null>
  /** The cookie verifier that names it (never all zeros, which clients send with cookie 0). */
  readonly verifier: Buffer
}

/** ms a listing is held after its last page: pages come back to back, and their attributes age. */
export const LISTING_HOLD_MS = 30_000
/** Listings held at most (the least recently paged let go first). */
const MAX_LISTINGS = 16

export class Listings {
  private readonly held = new Map<string, { listing: Listing; usedAt: number }>()
  /** Told apart from an earlier start's verifiers, which name nothing here. */
  private readonly epoch = randomBytes(4)
  private next = 1

  constructor(private readonly now: () => number = Date.now) {}

  /** The listing of `dir` the verifier names, with attributes when `plus` asks for them; undefined when not held. */
  find(verifier: Buffer, dir: string, plus: boolean): Listing | undefined {
    const key = verifier.toString('hex')
    const entry = this.held.get(key)
    if (!entry || entry.listing.dir !== dir || (plus && !entry.listing.attrs)) return undefined
    if (this.now() - entry.usedAt > LISTING_HOLD_MS) {
      this.held.delete(key)
      return undefined
    }
    // Most recently paged last: the first in the map is the one to let go.
    this.held.delete(key)
    this.held.set(key, { listing: entry.listing, usedAt: this.now() })
    return entry.listing
  }

  /** Holds a new listing of `dir` and returns it, with the verifier that names it. */
  hold(dir: string, names: readonly string[], attrs?: ReadonlyArray<NodeAttr | null>): Listing {
    const verifier = Buffer.alloc(8)
    this.epoch.copy(verifier)
    verifier.writeUInt32BE(this.next, 4)
    this.next = this.next >= 0xffff_ffff ? 1 : this.next + 1
    const listing: Listing = { dir, names, attrs, verifier }
    this.held.set(verifier.toString('hex'), { listing, usedAt: this.now() })
    for (const key of this.held.keys()) {
      if (this.held.size <= MAX_LISTINGS) break
      this.held.delete(key)
    }
    return listing
  }
}
