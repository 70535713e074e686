// What the user pinned, kept in the data folder (pins.json) so pins survive remounts,
// restarts and upgrades: each pin's scope (by identity: pinning.ts), the path it had on the
// mount when pinned (how status names it), and every file it has covered so far. The files
// are kept with it because a pin keeps what it covered until it is unpinned, even when the
// service no longer lists it (a transfer that expired): on the next start those files are
// pinned again, and unpinning lets them go, without asking the service.
import { readFile } from 'node:fs/promises'
import { writeFileDurably } from '../base/durable-file.js'
import { parseStateText, setAside, stateCount, StateFileError } from '../base/state-file.js'
import type { Transfer } from '../api/types.js'
import type { RemoteFile } from '../read/source.js'
import { sameScope, type PinScope } from '../vfs/pinning.js'

export const PINS_FILE = 'pins.json'
/** The layout of pins.json; a file of another version is not guessed at. */
const VERSION = 1

export interface SavedPin {
  scope: PinScope
  /** Its path on the mount when pinned ("inbox/Photos from Ann"). */
  label: string
  /** ms since the epoch. */
  since: number
  /** Every file it has covered, by cache key (the newest description of each). */
  files: RemoteFile[]
  /** The transfers of those files as last seen, without their keys: what is shown of them while the service cannot be reached. */
  transfers: Transfer[]
}

/** A transfer as a pin keeps it: its key (a sender's secret) is never written here. */
export function pinnedCopy(transfer: Transfer): Transfer {
  const { key: _key, ...rest } = transfer
  return rest as Transfer
}

/** A damaged pins file found on opening. */
export interface PinsDamage {
  /** What is wrong, naming the file (file:line:column for a file that is not JSON) and none of its text. */
  why: string
  /** Where the damaged file was moved. */
  movedTo: string
  /** Pins that validated and are kept. */
  kept: number
  /** Entries dropped; null when the file could not be read as a list at all. */
  dropped: number | null
}

/** A sentence for the log and `.status` about a damaged pins file. */
export function damageText(d: PinsDamage): string {
  const dropped = d.dropped === null ? '' : `, ${d.dropped} dropped`
  return `${d.why}; set aside as ${d.movedTo}; ${d.kept} pin${d.kept === 1 ? '' : 's'} kept${dropped}`
}

export class PinStore {
  /** Set when the file opened was damaged: what was found, where it was moved, what was kept. */
  damage: PinsDamage | null = null

  private constructor(
    readonly file: string,
    private pins: SavedPin[],
  ) {}

  /**
   * The pins saved in `file`; none when it does not exist. A file that does not parse, or
   * holds entries that are not pins, is damaged: it is set aside (renamed with the time, see
   * `setAside`), the pins that validate are kept and saved again, and `damage` says what
   * happened, so that the mount starts with what could be saved and says so. A file of
   * another version is refused (never guessed at, never set aside); a file that cannot be
   * read at all is an error, never taken for "no pins".
   */
  static async open(file: string): Promise<PinStore> {
    let text: string
    try {
      text = await readFile(file, 'utf8')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return new PinStore(file, [])
      throw e
    }
    let parsed: unknown
    try {
      parsed = parseStateText(text, file)
    } catch (e) {
      if (!(e instanceof StateFileError)) throw e
      const { valid, lines } = salvage(text)
      return PinStore.damaged(file, valid, e.message, lines === null ? null : lines - valid.length)
    }
    const { version, pins } = (isObject(parsed) ? parsed : {}) as { version?: unknown; pins?: unknown }
    if (typeof version === 'number' && version !== VERSION) throw new Error(`${file}: not a pins file this version of transferfs knows (version ${String(version)})`)
    if (version !== VERSION || !Array.isArray(pins)) return PinStore.damaged(file, [], `${file}: not a pins file`, null)
    const valid = pins.filter(isSavedPin)
    if (valid.length === pins.length) return new PinStore(file, valid)
    const dropped = pins.length - valid.length
    return PinStore.damaged(file, valid, `${file}: ${dropped} of ${pins.length} entries are not pins`, dropped)
  }

  /** The store of the pins saved from a damaged file, which is set aside. */
  private static async damaged(file: string, valid: SavedPin[], why: string, dropped: number | null): Promise<PinStore> {
    const movedTo = await setAside(file)
    const store = new PinStore(file, [])
    if (valid.length > 0) await store.saveAs(valid)
    store.damage = { why, movedTo, kept: valid.length, dropped }
    return store
  }

  list(): readonly SavedPin[] {
    return this.pins
  }

  find(scope: PinScope): SavedPin | undefined {
    return this.pins.find((p) => sameScope(p.scope, scope))
  }

  /** Adds the pin (or gives the one of that scope already there), saved before it resolves. */
  async add(pin: SavedPin): Promise<SavedPin> {
    const had = this.find(pin.scope)
    if (had) return had
    await this.saveAs([...this.pins, pin])
    return pin
  }

  async remove(scope: PinScope): Promise<SavedPin | undefined> {
    const had = this.find(scope)
    if (had) await this.saveAs(this.pins.filter((p) => p !== had))
    return had
  }

  /** Adds what a pin now covers (arrivals in a pinned inbox, newer details); saved before it resolves. */
  async cover(pin: SavedPin, files: readonly RemoteFile[], transfers: readonly Transfer[]): Promise<void> {
    const known = new Map(pin.files.map((f) => [f.cacheKey, f]))
    for (const f of files) known.set(f.cacheKey, f)
    const seen = new Map((pin.transfers ?? []).map((t) => [t.id, t]))
    for (const t of transfers) seen.set(t.id, pinnedCopy(t))
    const next = { ...pin, files: [...known.values()], transfers: [...seen.values()] }
    await this.saveAs(this.pins.map((p) => (p === pin ? next : p)))
    Object.assign(pin, next)
  }

  private async saveAs(pins: SavedPin[]): Promise<void> {
    await writeFileDurably(this.file, pinsText(pins))
    this.pins = pins
  }
}

/** The header line of the layout pinsText writes. */
const HEAD = `{"version":${VERSION},"pins":[`

/**
 * pins.json's text: one pin a line, so that a file cut short (a disk that lost its tail)
 * still gives back every pin before the cut (salvage).
 */
function pinsText(pins: readonly SavedPin[]): string {
  return `${HEAD}\n${pins.map((p) => JSON.stringify(p)).join(',\n')}\n]}\n`
}

/** The pins of a file in pinsText's layout that does not parse whole: every line that is a pin; `lines`, the pin lines seen (null: not that layout). */
function salvage(text: string): { valid: SavedPin[]; lines: number | null } {
  const lines = text.split('\n')
  if (lines[0] !== HEAD) return { valid: [], lines: null }
  const body = lines.slice(1).filter((l) => l !== '' && l !== ']}')
  const valid: SavedPin[] = []
  for (const line of body) {
    let pin: unknown
    try {
      pin = JSON.parse(line.replace(/,$/, ''))
    } catch {
      continue
    }
    if (isSavedPin(pin)) valid.push(pin)
  }
  return { valid, lines: body.length }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

const PLACES: readonly unknown[] = ['inbox', 'sent', 'by-id']

function isScope(v: unknown): v is PinScope {
  if (!isObject(v)) return false
  if (v.kind === 'inbox') return true
  if (v.kind === 'search') return typeof v.words === 'string'
  if (v.kind !== 'transfer' || !PLACES.includes(v.place) || !isObject(v.ref)) return false
  const { ref } = v
  return typeof ref.key === 'string' && (ref.via === 'id' || ref.via === 'trackid') && typeof ref.token === 'string' &&
    Array.isArray(v.below) && v.below.every((b) => typeof b === 'string')
}

/** A file as the read path needs it: its size a whole number, since blocks and room are counted from it. */
function isRemoteFile(v: unknown): v is RemoteFile {
  return isObject(v) && typeof v.transferId === 'string' && typeof v.fileName === 'string' && stateCount(v.size) !== null &&
    (v.md5 === null || typeof v.md5 === 'string') && typeof v.downloadUrl === 'string' && typeof v.cacheKey === 'string'
}

/** A transfer as shown offline: the sizes in it are summed and shown, so each is a whole number or absent. */
function isPinnedTransfer(v: unknown): v is Transfer {
  if (!isObject(v) || typeof v.id !== 'string') return false
  const size = (n: unknown): boolean => n === null || n === undefined || stateCount(n) !== null
  if (!size(v.transfersize)) return false
  return v.files === undefined || (Array.isArray(v.files) && v.files.every((f) => isObject(f) && size(f.filesize)))
}

function isSavedPin(v: unknown): v is SavedPin {
  return isObject(v) && isScope(v.scope) && typeof v.label === 'string' && stateCount(v.since) !== null &&
    Array.isArray(v.files) && v.files.every(isRemoteFile) &&
    (v.transfers === undefined || (Array.isArray(v.transfers) && v.transfers.every(isPinnedTransfer)))
}
