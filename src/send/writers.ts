// Marks of files open for writing, kept on disk while the handle is open. A mark left
// behind by a process that died names a file that may hold only part of what was being
// written (cp was cut off): such an entry is held, not sent, until the user changes or
// renames it. Marks are not synced: they guard against a killed process, where the
// page cache survives; a power loss may lose a mark along with the unsynced bytes.
//
// Each run appends to a log of its own: a line per handle opened for writing and one per
// handle closed (JSON, so any file name fits): no file is created or removed per file
// copied in, which on some disks costs a millisecond each, and a `cp -r` of many small
// files waits for it. At start the logs of earlier runs are replayed,
// and the marks still open in them are kept in one file of leftovers until handled.
import { randomBytes } from 'node:crypto'
import { close, ftruncate, open, promises as fsp, write } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { parseStateText } from '../base/state-file.js'

// A plain descriptor, not a FileHandle: a run that ends without closing it (a crash, or
// a test standing in for one) leaves it to the process's end, without a warning.
const openFd = promisify(open)
const writeFd = promisify(write)
const truncateFd = promisify(ftruncate)
const closeFd = promisify(close)

const LOG_SUFFIX = '.log'
const LEFTOVERS_FILE = 'leftovers.json'
/** A log this long with no handle open is emptied (its marks are all closed). */
const COMPACT_BYTES = 256 * 1024

export class WriterMarks {
  private readonly logFile: string
  private log: Promise<number> | null = null
  /** Log writes one after the other, so an emptying never overtakes a line asked before it. */
  private tail: Promise<void> = Promise.resolve()
  private logBytes = 0
  private readonly openHandles = new Set<number>()
  private leftovers: string[] = []
  private halted = false

  constructor(readonly dir: string) {
    this.logFile = path.join(dir, `${randomBytes(4).toString('hex')}${LOG_SUFFIX}`)
  }

  /** The paths marked by earlier runs and never closed: files a dead process was writing. */
  async init(): Promise<string[]> {
    await fsp.mkdir(this.dir, { recursive: true })
    const found = new Set<string>()
    const consumed: string[] = []
    for (const name of await fsp.readdir(this.dir)) {
      const file = path.join(this.dir, name)
      const text = await fsp.readFile(file, 'utf8').catch(() => '')
      if (name === LEFTOVERS_FILE) {
        for (const p of parseLeftovers(text)) found.add(p)
        continue
      }
      if (name.endsWith(LOG_SUFFIX)) for (const p of replay(text)) found.add(p)
      // A mark file of the earlier layout holds just the path.
      else if (text.startsWith('/')) found.add(text)
      consumed.push(file)
    }
    this.leftovers = [...found]
    // Leftovers are written before the logs they came from go: a crash in between finds both.
    await this.saveLeftovers()
    for (const f of consumed) await fsp.rm(f, { force: true })
    return [...this.leftovers]
  }

  /** The handle `fh` writes to `p` (again after a rename). */
  async set(fh: number, p: string): Promise<void> {
    this.openHandles.add(fh)
    await this.append(JSON.stringify(['+', fh, p]))
  }

  async clear(fh: number): Promise<void> {
    if (!this.openHandles.delete(fh)) return
    await this.append(JSON.stringify(['-', fh]))
    if (this.openHandles.size === 0 && this.logBytes > COMPACT_BYTES && !this.halted) {
      this.logBytes = 0
      await this.inOrder(async () => truncateFd(await this.logFd(), 0))
    }
  }

  /** Leftover marks handled (the entry was changed, renamed or found whole). */
  async remove(paths: readonly string[]): Promise<void> {
    if (this.halted || paths.length === 0) return
    const gone = new Set(paths)
    this.leftovers = this.leftovers.filter((p) => !gone.has(p))
    await this.saveLeftovers()
  }

  halt(): void {
    this.halted = true
    const log = this.log
    // After the lines already asked for.
    if (log) void this.inOrder(async () => closeFd(await log)).catch(() => undefined)
  }

  private logFd(): Promise<number> {
    return (this.log ??= openFd(this.logFile, 'a'))
  }

  private async append(line: string): Promise<void> {
    if (this.halted) return
    const bytes = Buffer.from(`${line}\n`)
    this.logBytes += bytes.length
    await this.inOrder(async () => void (await writeFd(await this.logFd(), bytes)))
  }

  private inOrder(step: () => Promise<void>): Promise<void> {
    const done = this.tail.then(step)
    this.tail = done.catch(() => undefined)
    return done
  }

  private async saveLeftovers(): Promise<void> {
    const file = path.join(this.dir, LEFTOVERS_FILE)
    if (this.leftovers.length === 0) await fsp.rm(file, { force: true })
    else await fsp.writeFile(file, JSON.stringify(this.leftovers))
  }
}

/** Paths opened and not closed in a run's log; a torn last line is skipped. */
function replay(text: string): string[] {
  const open = new Map<number, string>()
  for (const line of text.split('\n')) {
    let rec: unknown
    try {
      rec = JSON.parse(line)
    } catch {
      continue
    }
    if (!Array.isArray(rec) || typeof rec[1] !== 'number') continue
    if (rec[0] === '+' && typeof rec[2] === 'string') open.set(rec[1], rec[2])
    else if (rec[0] === '-') open.delete(rec[1])
  }
  return [...open.values()]
}

function parseLeftovers(text: string): string[] {
  try {
    const list = parseStateText(text, LEFTOVERS_FILE)
    return Array.isArray(list) ? list.filter((p): p is string => typeof p === 'string') : []
  } catch {
    return []
  }
}
