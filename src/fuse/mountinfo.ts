// Reading /proc/self/mountinfo: the only way to ask about a mount that never touches
// the mount itself (stat on a hung FUSE mount can block; on a dead one it fails).
import { readFile } from 'node:fs/promises'
import path from 'node:path'

export interface MountEntry {
  /** major:minor of the mount's device (the FUSE connection's minor is its fusectl id). */
  major: number
  minor: number
  mountPoint: string
  fsType: string
  source: string
}

/** mountinfo escapes space, tab, newline and backslash as \ooo. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)))
}

export function parseMountInfo(text: string): MountEntry[] {
  const entries: MountEntry[] = []
  for (const line of text.split('\n')) {
    if (!line) continue
    const fields = line.split(' ')
    const sep = fields.indexOf('-', 6)
    const dev = fields[2]?.split(':')
    if (sep < 0 || !dev || dev.length !== 2) continue
    entries.push({
      major: Number(dev[0]),
      minor: Number(dev[1]),
      mountPoint: unescape(fields[4] ?? ''),
      fsType: fields[sep + 1] ?? '',
      source: unescape(fields[sep + 2] ?? ''),
    })
  }
  return entries
}

/** The last (topmost) mount at dir, if any. */
export async function findMount(dir: string): Promise<MountEntry | undefined> {
  const entries = parseMountInfo(await readFile('/proc/self/mountinfo', 'utf8'))
  return entries.filter((e) => e.mountPoint === dir).at(-1)
}

export const isFuseType = (fsType: string): boolean => fsType === 'fuse' || fsType.startsWith('fuse.')

/**
 * The mount's source name (libfuse's fsname) as transferfs sets it: `transferfs:` and the data
 * folder the mount was started with, so that a command given a path on the mount finds that
 * mount's control socket and status whatever data folder it uses (the demo keeps its own).
 * Bytes other than letters, digits and `/._-~+@` are written %XX: a comma would split libfuse's
 * options, and mountinfo escapes blanks and backslashes.
 */
export function mountSourceName(base: string, dataDir?: string): string {
  if (!dataDir) return base
  return `${base}:${[...Buffer.from(path.resolve(dataDir), 'utf8')].map((b) => /[A-Za-z0-9/._~+@-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('')}`
}

/** The data folder a source name made by mountSourceName names, or null (another filesystem's, or an older transferfs's). */
export function dataDirOfSource(base: string, source: string): string | null {
  const prefix = `${base}:/`
  if (!source.startsWith(prefix)) return null
  const text = source.slice(base.length + 1)
  if (!/^(?:[A-Za-z0-9/._~+@-]|%[0-9A-F]{2})*$/.test(text)) return null
  return Buffer.from(text.replace(/%([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8')
}

/** The mount an absolute path is on: the topmost mount at the deepest mount point that holds it. */
export function mountHolding(entries: readonly MountEntry[], file: string): MountEntry | undefined {
  let best: MountEntry | undefined
  for (const e of entries) {
    const inside = e.mountPoint === '/' || file === e.mountPoint || file.startsWith(e.mountPoint + '/')
    if (inside && (!best || e.mountPoint.length >= best.mountPoint.length)) best = e
  }
  return best
}
