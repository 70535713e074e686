// The macOS system commands the NFS front runs, as argument lists (never through a shell), and
// the one reading of their answers it needs: which folders `mount` lists as NFS mounts of the
// loopback server. The one place the mount_nfs options are written: `transferfs mount` runs
// them and `transferfs serve-nfs` prints them.
import { EXPORT_PATH } from '../../nfs/mountd.js'
import { MAX_IO_BYTES } from '../../nfs/nfs3-read.js'
import { NFS_HOST } from '../../nfs/server.js'

export interface SystemCommand {
  /** Looked up on PATH, then in the system's own folders (systemCommandPath). */
  command: string
  args: string[]
}

/** What the export is mounted from, as mount_nfs takes it and `mount` lists it. */
export const NFS_SOURCE = `${NFS_HOST}:${EXPORT_PATH}`

/**
 * mount_nfs's options: NFSv3 over TCP, NFS and MOUNT on the server's one port (no portmapper),
 * from a reserved port (the server serves no other; it is macOS's default, said so it stays),
 * locks kept on this machine (no lock manager is served: `nolocks` for the old name of the
 * option, `locallocks` so that programs that lock files, such as Office's, still can), and
 * READs and WRITEs of the server's 1 MiB (its FSINFO rtmax and wtmax).
 */
export function mountNfsOptions(port: number): string {
  return [`vers=3`, 'tcp', `port=${port}`, `mountport=${port}`, 'resvport', 'nolocks', 'locallocks', `rsize=${MAX_IO_BYTES}`, `wsize=${MAX_IO_BYTES}`].join(',')
}

export function mountNfsCommand(port: number, dir: string): SystemCommand {
  return { command: 'mount_nfs', args: ['-o', mountNfsOptions(port), NFS_SOURCE, dir] }
}

/** `umount DIR`; forced (`-f`) only for a mount whose server is gone, which nothing else can undo. */
export function umountCommand(dir: string, force = false): SystemCommand {
  return { command: 'umount', args: [...(force ? ['-f'] : []), dir] }
}

/** `diskutil unmount DIR`: what Finder's eject does, tried when umount fails. */
export function diskutilUnmountCommand(dir: string): SystemCommand {
  return { command: 'diskutil', args: ['unmount', dir] }
}

/** `mount` with no arguments: every mount, as the kernel lists them (it never touches a mount). */
export const LIST_MOUNTS: SystemCommand = { command: 'mount', args: [] }

/** A command as a person would type it in a shell (arguments quoted where a shell would split them). */
export function shownCommand(c: SystemCommand): string {
  const quote = (a: string) => (/^[\w@%+=:,./~-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)
  return [c.command, ...c.args.map(quote)].join(' ')
}

export interface ListedMount {
  source: string
  mountPoint: string
  /** The file system's type: nfs, apfs, smbfs... */
  fsType: string
}

/**
 * The mounts of macOS's `mount` output, one a line: `127.0.0.1:/ on /Users/me/Transfers (nfs,
 * nodev, nosuid, mounted by me)`. The type is the first word in the parentheses; the mount
 * point is everything between " on " and the last " (", so it may hold blanks.
 */
export function parseMountList(text: string): ListedMount[] {
  const out: ListedMount[] = []
  for (const line of text.split('\n')) {
    const m = /^(.+?) on (.+) \(([^,()]+)(?:,[^()]*)?\)$/.exec(line.trim())
    if (m) out.push({ source: m[1] as string, mountPoint: m[2] as string, fsType: (m[3] as string).trim() })
  }
  return out
}

/** The last mount listed at `dir`, if any (a later mount hides an earlier one). */
export function mountAt(mounts: readonly ListedMount[], dir: string): ListedMount | undefined {
  return mounts.filter((m) => m.mountPoint === dir).at(-1)
}

/** A mount of the loopback server's export: what `transferfs mount` makes on macOS. */
export function isLoopbackNfs(m: ListedMount): boolean {
  return m.fsType === 'nfs' && m.source === NFS_SOURCE
}
