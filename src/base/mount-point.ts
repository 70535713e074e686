// A folder to mount at must be empty: a mount hides what the folder holds (FUSE 2 refuses
// such a folder and says only "fuse failed"; macOS's mount_nfs mounts over it without a word).
// Said before trying, with the way out. A folder that is not there is fine: the mount makes it.
import { readdir } from 'node:fs/promises'

export async function checkEmptyFolder(dir: string): Promise<void> {
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return []
    throw new Error(`cannot mount ${dir}: ${err.code === 'ENOTDIR' ? 'not a directory' : err.message}`)
  })
  if (names.length > 0) {
    throw new Error(`cannot mount ${dir}: the folder is not empty (${names.length} entr${names.length === 1 ? 'y' : 'ies'}), and a mount would hide what is in it; ` +
      'mount on an empty folder (e.g. `mkdir ~/Transfers && transferfs mount ~/Transfers`), or move its contents away first')
  }
}
