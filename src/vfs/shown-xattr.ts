// user.transferfs.shown: what a file manager shows of an entry (its state, whether it was
// pinned itself, its transfer's address), in one read. The file-manager extensions list a
// folder of thousands of transfers and need all three for each entry: three getxattr each
// made the listing a third slower than without the extension; one keeps it near the
// listing's own time. The value is a JSON object from each of those attributes' names to
// its text, with the absent ones left out: the same values a getxattr of each gives.
// It is answered on every path of the mount (`{}` where none applies), so its absence
// tells a mount of an earlier version, and it is not listed, so copies with their
// attributes (cp -a, rsync -X) do not carry it off the mount.
import { FsError } from './core.js'
import { PIN_XATTR, STATE_XATTR } from './pinning.js'

export const SHOWN_XATTR = 'user.transferfs.shown'
/** A received file's or transfer's address, under the name browsers give a download's source. */
export const ORIGIN_XATTR = 'user.xdg.origin.url'
/** What `SHOWN_XATTR` carries, in this order. */
export const SHOWN_PARTS = [STATE_XATTR, PIN_XATTR, ORIGIN_XATTR] as const

/** The value of `SHOWN_XATTR`, from `get`, the getxattr of the same path (absent: ENODATA). */
export async function shownOf(get: (name: string) => Promise<Buffer>): Promise<Buffer> {
  const shown: Record<string, string> = {}
  for (const name of SHOWN_PARTS) {
    try {
      shown[name] = (await get(name)).toString('utf8')
    } catch (e) {
      if (!(e instanceof FsError && e.code === 'ENODATA')) throw e
    }
  }
  return Buffer.from(JSON.stringify(shown), 'utf8')
}
