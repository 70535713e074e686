// Every setting of the filesystem model, with its default and unit, in one place.
// The mount (src/config) fills these from flags, environment and the config file.

export interface VfsSettings {
  /** How long a listing (inbox, sent, a transfer's details, by-id look-ups, the account) is fresh, in ms. */
  listingTtlMs: number
  /**
   * After a first load failed (nothing cached yet), how long the same failure is answered again
   * without a new call, in ms: an `ls -l` storm while offline costs one call, not one per entry.
   */
  failureBackoffMs: number
  /** Details fetched at once when the sent listing is built (one per transfer sent from here). */
  detailsConcurrency: number
  /** Owner of every node (the mounting user). */
  uid: number
  gid: number
}

export const VFS_DEFAULTS: Readonly<Omit<VfsSettings, 'uid' | 'gid'>> = {
  listingTtlMs: 30_000,
  failureBackoffMs: 5_000,
  detailsConcurrency: 4,
}

export function vfsSettings(overrides: Partial<VfsSettings> = {}): VfsSettings {
  return {
    ...VFS_DEFAULTS,
    uid: process.getuid?.() ?? 0,
    gid: process.getgid?.() ?? 0,
    ...overrides,
  }
}
