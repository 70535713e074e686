// What the user pinned, kept in the data folder (pins.json) so pins survive remounts,
// restarts and upgrades: each pin's scope (by identity: keeping.ts), the path it had on the
// mount when pinned (how status names it), and every file it has covered so far. The files
// are kept with it because a pin keeps what it covered until it is unpinned, even when the
// service no longer lists it (a transfer that expired): on the next start those files are
// kept again, and unpinning lets them go, without asking the service.
import { promises as fsp } from 'node:fs'
import { writeFileDurably } from '../base/durable-file.js'
import type { Transfer } from '../api/types.js'
import type { RemoteFile } from '../read/source.js'
import { sameScope, type PinScope } from '../vfs/keeping.js'

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
export function keptCopy(transfer: Transfer): Transfer {
  const { key: _key, ...rest } = transfer
  return rest as Transfer
}

export class PinStore {
  private constructor(
    readonly file: string,
    private pins: SavedPin[],
  ) {}

  /** The pins saved in `file`; none when it does not exist. A file that cannot be read is an error, never taken for "no pins". */
  static async open(file: string): Promise<PinStore> {
    let text: string
    try {
      text = await fsp.readFile(file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new PinStore(file, [])
      throw err
    }
    const parsed = JSON.parse(text) as { version?: number; pins?: SavedPin[] }
    if (parsed.version !== VERSION || !Array.isArray(parsed.pins)) throw new Error(`${file}: not a pins file this version of transferfs knows (version ${String(parsed.version)})`)
    return new PinStore(file, parsed.pins)
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
    for (const t of transfers) seen.set(t.id, keptCopy(t))
    const next = { ...pin, files: [...known.values()], transfers: [...seen.values()] }
    await this.saveAs(this.pins.map((p) => (p === pin ? next : p)))
    Object.assign(pin, next)
  }

  private async saveAs(pins: SavedPin[]): Promise<void> {
    await writeFileDurably(this.file, JSON.stringify({ version: VERSION, pins }) + '\n')
    this.pins = pins
  }
}
