// user.transferfs.shown: what a file manager shows of an entry, in one short read: its state
// (user.transferfs.state), then on a second line the words `pin` where it was pinned itself
// (user.transferfs.pin) and `page` where it carries its transfer's address
// (user.xdg.origin.url, read when a menu uses it). The file-manager extensions list folders of
// thousands of transfers and need all three for each entry: three getxattr each made such a
// listing a third slower than without the extension. One is kept short because GIO reads an
// attribute into 63 bytes first and asks again, twice, for a longer one; an address alone is
// often longer. It is answered on every path of the mount (empty where nothing applies), so
// its absence tells a mount of an earlier version, and it is not listed, so copies made with
// their attributes (cp -a, rsync -X) do not carry it off the mount.
import { FsError } from './core.js'
import { PIN_XATTR, STATE_XATTR } from './pinning.js'

export const SHOWN_XATTR = 'user.transferfs.shown'
/** A received file's or transfer's address, under the name browsers give a download's source. */
export const ORIGIN_XATTR = 'user.xdg.origin.url'

/** What `SHOWN_XATTR` tells of an entry. */
export interface Shown {
  /** `STATE_XATTR`'s text; absent where the entry has none. */
  state?: string
  /** `PIN_XATTR` is set: pinned itself. */
  pinned: boolean
  /** It carries `ORIGIN_XATTR`. */
  page: boolean
}

/** The value of `SHOWN_XATTR` for `shown`. */
export function shownText(shown: Shown): Buffer {
  // The state is a line of its own: a newline in a failure's reason would start the flags.
  const state = (shown.state ?? '').replace(/[\r\n]+/g, ' ')
  const flags = [shown.pinned ? 'pin' : '', shown.page ? 'page' : ''].filter(Boolean)
  return Buffer.from(flags.length > 0 ? `${state}\n${flags.join(' ')}` : state, 'utf8')
}

/**
 * What `SHOWN_XATTR` tells, from `get`, the getxattr of the same path (absent: ENODATA): for an
 * area that does not work it out itself (Area.shown), at the cost of its three attributes.
 */
export async function shownOf(get: (name: string) => Promise<Buffer>): Promise<Shown> {
  const has = async (name: string): Promise<Buffer | undefined> => {
    try {
      return await get(name)
    } catch (e) {
      if (e instanceof FsError && e.code === 'ENODATA') return undefined
      throw e
    }
  }
  const state = (await has(STATE_XATTR))?.toString('utf8')
  const shown: Shown = { pinned: (await has(PIN_XATTR)) !== undefined, page: (await has(ORIGIN_XATTR)) !== undefined }
  return state === undefined ? shown : { ...shown, state }
}
