// Who besides the owner may read what the mount shows, as the group and other read bits of
// a mode (0o040, 0o004; 0o044 for both). The mount is read by other local users only with
// allowOther, and then the kernel checks the modes shown (default_permissions): these bits
// decide what they see. The owner always reads; nothing shown this way is writable.

/** Group and other may both read: what a file of no one's private making shows. */
export const EVERYONE = 0o044
/** Only the owner reads. */
export const OWNER_ONLY = 0

/**
 * Which of group and other could read a file with `fileMode` at the end of a path through
 * folders of `folderModes`: read on the file and search (x) on every folder above it, for the
 * same class (a 0644 file in a 0700 folder is the owner's alone).
 */
export function readersOf(fileMode: number, folderModes: readonly number[]): number {
  let readers = fileMode & EVERYONE
  for (const mode of folderModes) readers &= (mode & 0o011) << 2
  return readers
}

/** A read-only file's permission bits: the owner reads, and `readers` as well. */
export function readOnlyFileMode(readers: number): number {
  return 0o400 | (readers & EVERYONE)
}

/**
 * A folder's permission bits: the owner's from `ownerBits` (0o500, or 0o700 where the owner
 * may set a pin), and `readers` may list and enter it (r and x of their class).
 */
export function folderMode(ownerBits: number, readers: number): number {
  const r = readers & EVERYONE
  return (ownerBits & 0o700) | r | (r >> 2)
}
