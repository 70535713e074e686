// MOUNT version 3 (RFC 1813, appendix I), on the NFS server's own port: MNT gives the handle
// of the export ("/") or of any folder under it (libnfs's tools mount the folder that holds
// the file they name), EXPORT lists the one export, UMNT and UMNTALL are accepted and
// forgotten (NFS is stateless: nothing is held per client), DUMP lists no one.
import path from 'node:path'
import { isDirectory } from './attrs.js'
import { NO_RESULTS, type Procedure } from './procedure.js'
import { AUTH_UNIX } from './rpc.js'
import { NFS3, NfsStatusError, nfsStatusOf } from './status.js'

export const MOUNT_PROGRAM = 100005
export const MOUNT_VERSION = 3
/** The one path exported. */
export const EXPORT_PATH = '/'
/** MNTPATHLEN: the longest path a MNT call may name. */
const MAX_MOUNT_PATH = 1024

/**
 * mountstat3 shares its numbers with nfsstat3 for the errors MNT gives; any other status is
 * MNT3ERR_IO.
 */
const MOUNT_STATUSES = new Set<number>([NFS3.PERM, NFS3.NOENT, NFS3.IO, NFS3.ACCES, NFS3.NOTDIR, NFS3.INVAL, NFS3.NAMETOOLONG, NFS3.NOTSUPP, NFS3.SERVERFAULT])

/** The tree's path of a MNT argument: absolute, normalized, never above the export. */
export function mountPathOf(dirpath: string): string {
  // libnfs asks for "" when the file it names is at the top of the export.
  if (dirpath === '') return EXPORT_PATH
  if (!dirpath.startsWith('/') || dirpath.includes('\0')) throw new NfsStatusError(NFS3.NOENT)
  const segments = dirpath.split('/').filter((s) => s !== '' && s !== '.')
  if (segments.includes('..')) throw new NfsStatusError(NFS3.ACCES)
  return path.posix.join('/', ...segments)
}

const mnt: Procedure = async (r, cx) => {
  const dirpath = r.string(MAX_MOUNT_PATH)
  try {
    const p = mountPathOf(dirpath)
    const attr = await cx.core.getattr(p)
    if (!isDirectory(attr)) throw new NfsStatusError(NFS3.NOTDIR)
    const handle = cx.handles.handleOf(p)
    return (w) => {
      w.opaque(handle)
      w.uint32(1).uint32(AUTH_UNIX) // the flavours taken
    }
  } catch (err) {
    const status = nfsStatusOf(err)
    throw new NfsStatusError(MOUNT_STATUSES.has(status) ? status : NFS3.IO)
  }
}

const dump: Procedure = async () => (w) => w.bool(false)

const umnt: Procedure = async (r) => {
  r.string(MAX_MOUNT_PATH)
  return NO_RESULTS
}

const exportList: Procedure = async () => (w) => {
  w.bool(true).string(EXPORT_PATH).bool(false) // one export, open to every host (the server listens on 127.0.0.1 only)
  w.bool(false)
}

/** MOUNT's procedures by number; NULL is the dispatcher's. */
export const MOUNT_PROCEDURES = new Map<number, Procedure>([
  [1, mnt], [2, dump], [3, umnt], [4, async () => NO_RESULTS], [5, exportList],
])
