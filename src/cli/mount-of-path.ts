// Which mount a command's paths are on: `transferfs pin`, `unpin`, `free` and `status` talk to
// the mount a path is on, whatever data folder it was started with (the demo keeps its own).
// The mount names its data folder in its source (fuse/mountinfo.ts mountSourceName), read
// from /proc/self/mountinfo: asking there never touches the mount. What the folder holds
// (the control socket, the status) is then checked to be this user's as for any data folder
// (control-place.ts): a mount of someone else's naming a folder is refused, not trusted.
import { readFile, realpath } from 'node:fs/promises'
import path from 'node:path'
import { FS_NAME } from '../fuse/mount.js'
import { dataDirOfSource, mountHolding, parseMountInfo } from '../fuse/mountinfo.js'

export interface PathPlace {
  /** The path as the mount sees it: absolute, symbolic links on the way resolved. */
  path: string
  /** The data folder of the transferfs mount the path is on; null when it is on none (or on an older version's, which names none). */
  dataDir: string | null
  /** Where the path is on a transferfs mount: its mount point; null when it is on none. */
  mountPoint: string | null
}

/** Where each path is: on which transferfs mount, and that mount's data folder. */
export async function placesOf(paths: readonly string[]): Promise<PathPlace[]> {
  const mounts = parseMountInfo(await readFile('/proc/self/mountinfo', 'utf8').catch(() => ''))
  return Promise.all(paths.map(async (p) => {
    const absolute = await realpath(p).catch(() => path.resolve(p))
    const m = mountHolding(mounts, absolute)
    if (!m || m.fsType !== `fuse.${FS_NAME}`) return { path: absolute, dataDir: null, mountPoint: null }
    return { path: absolute, dataDir: dataDirOfSource(FS_NAME, m.source), mountPoint: m.mountPoint }
  }))
}

/** Said when a path is on no transferfs mount and the configured data folder's mount is asked instead. */
export function notOnMount(p: string, dataDir: string): string {
  return `${p} is not on a transferfs mount: using the data folder ${dataDir}`
}
