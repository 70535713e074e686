// The mount's status on disk, for what cannot ask the mount process directly: `transferfs
// status` reads status.json. It is replaced atomically (temp + rename) when the status
// changed, checked every `intervalMs`, and once more when stopped (with `running: false`).
// It is read as any version wrote it: a mount started by an earlier version may still be
// running after an upgrade (fromEarlierVersions).
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { writeFileAtomically } from '../base/durable-file.js'
import { readStateFile, stateCount } from '../base/state-file.js'
import { renderStatusJson, type MountStatus } from './mount-status.js'

export const STATUS_JSON_FILE = 'status.json'
/** ms: how often the status files are brought up to date while mounted. */
export const STATUS_WRITE_INTERVAL_MS = 1000

/** What status.json holds: the status plus who wrote it, so a reader can tell a dead mount. */
export interface StatusFileContent extends MountStatus {
  pid: number
  /** False once the mount stopped (the entries are then what it left unsent). */
  running: boolean
  /** ms: the writer's interval; a file older than a few of them is from a mount that died. */
  intervalMs: number
}

export class StatusFiles {
  private timer: NodeJS.Timeout | null = null
  private lastJson = ''
  /** When status.json was last written: it is rewritten every few intervals even unchanged, so readers see the mount alive. */
  private lastWrite: number | null = null
  private writing: Promise<void> = Promise.resolve()

  constructor(
    readonly dir: string,
    private readonly source: () => MountStatus,
    private readonly intervalMs = STATUS_WRITE_INTERVAL_MS,
  ) {}

  get jsonFile(): string {
    return path.join(this.dir, STATUS_JSON_FILE)
  }

  async start(): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true, mode: 0o700 })
    await this.update(true)
    this.timer = setInterval(() => void this.update(true), this.intervalMs)
    this.timer.unref()
  }

  /** Writes now when the status changed (the time alone does not count as a change, but is refreshed every few intervals). */
  update(running: boolean): Promise<void> {
    const next = this.writing.then(async () => {
      const status = this.source()
      const content: StatusFileContent = { ...status, pid: process.pid, running, intervalMs: this.intervalMs }
      const { at: _at, ...comparable } = content
      const json = JSON.stringify(comparable)
      // Rewritten now and then even when unchanged: its time says the mount is alive.
      const rewriteDue = Date.now() - (this.lastWrite ?? 0) > 5 * this.intervalMs
      if (json !== this.lastJson || rewriteDue) {
        await writeFileAtomically(this.jsonFile, renderStatusJson(content))
        this.lastJson = json
        this.lastWrite = Date.now()
      }
    }).catch(() => undefined)
    this.writing = next
    return next
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await this.update(false)
  }
}

/** status.json as a reader finds it, or null when no mount ever wrote one. */
export async function readStatusFile(dir: string): Promise<StatusFileContent | null> {
  try {
    return (fromEarlierVersions((await readStateFile(path.join(dir, STATUS_JSON_FILE))) ?? null)) as StatusFileContent | null
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
}

/**
 * status.json in this version's shape, whichever version wrote it. Versions before the pins'
 * section was named for the feature's one word wrote it as `keep`, its cache's pinned bytes
 * as `keptBytes` and a pin that is all on disk as state `kept`; those read as `pins`,
 * `pinnedBytes` and `pinned`, so `transferfs status` (and its --json) says one word even of
 * a mount an upgrade left running. Anything else passes as it is.
 */
export function fromEarlierVersions(raw: unknown): unknown {
  if (!isRecord(raw) || !('keep' in raw) || 'pins' in raw) return raw
  return renamed(raw, 'keep', 'pins', earlierPins(raw.keep))
}

/** An earlier version's pins section (`keep`) as this version's. */
function earlierPins(keep: unknown): unknown {
  if (!isRecord(keep)) return keep
  let pins: Record<string, unknown> = keep
  const { cache, entries } = keep
  if (isRecord(cache) && 'keptBytes' in cache && !('pinnedBytes' in cache)) pins = { ...pins, cache: renamed(cache, 'keptBytes', 'pinnedBytes', cache.keptBytes) }
  if (Array.isArray(entries)) pins = { ...pins, entries: entries.map((e: unknown) => (isRecord(e) && e.state === 'kept' ? { ...e, state: 'pinned' } : e)) }
  return pins
}

/** `o` with its key `from` named `to` (holding `value`), in the same place among the others. */
function renamed(o: Record<string, unknown>, from: string, to: string, value: unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => (k === from ? [to, value] : [k, v])))
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** True when the file was written by a mount that is still running. */
export function isLive(s: StatusFileContent, now = Date.now()): boolean {
  if (!s.running) return false
  // Written by a mount, but read as any file: numbers that are not counts say nothing alive.
  if (stateCount(s.pid) === null || stateCount(s.at) === null || stateCount(s.intervalMs) === null) return false
  try {
    process.kill(s.pid, 0)
  } catch {
    return false
  }
  return now - s.at < 10 * s.intervalMs
}
