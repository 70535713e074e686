// Everything transferfs keeps is the account owner's alone: the session, settings, cached
// bytes of received files (password-protected transfers included, once unlocked), outbox
// staging, the send journal and the logs. Folders are 0700 and files 0600, whatever the
// user's umask: a process that writes there sets an owner-only umask first, so temporary
// files are covered too, and a mount tightens what an older version left open.
import { chmod, lstat, readdir } from 'node:fs/promises'
import path from 'node:path'
import type { Folders } from './paths.js'

/** What a transferfs process that writes into its folders masks from every mode. */
export const OWNER_ONLY_UMASK = 0o077
export const OWNER_DIR_MODE = 0o700
export const OWNER_FILE_MODE = 0o600

/** From now on, nothing this process creates is readable by anyone but its owner. */
export function createOwnerOnly(): void {
  process.umask(OWNER_ONLY_UMASK)
}

/**
 * Takes group and other rights off every folder and file under the three folders (they
 * are transferfs' own), leaving symbolic links alone. Cheap when nothing is open: one
 * lstat per entry, a chmod only where something was.
 */
export async function tightenFolders(folders: Folders): Promise<void> {
  await Promise.all([folders.config, folders.cache, folders.data].map((dir) => tighten(dir)))
}

async function tighten(target: string): Promise<void> {
  const st = await lstat(target).catch(() => null)
  if (!st || st.isSymbolicLink()) return
  if ((st.mode & 0o077) !== 0) await chmod(target, st.mode & (st.isDirectory() ? OWNER_DIR_MODE : OWNER_FILE_MODE)).catch(() => {})
  if (!st.isDirectory()) return
  const names = await readdir(target).catch(() => [] as string[])
  for (const name of names) await tighten(path.join(target, name))
}
