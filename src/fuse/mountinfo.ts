// Reading /proc/self/mountinfo: the only way to ask about a mount that never touches
// the mount itself (stat on a hung FUSE mount can block; on a dead one it fails).
import { readFile } from 'node:fs/promises'

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
