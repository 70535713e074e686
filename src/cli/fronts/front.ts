// Which front door `transferfs mount` and `unmount` use, chosen in this one place by the
// platform: FUSE on Linux; on macOS, where FUSE takes a third-party driver, the NFS server
// mounted by the system's own NFS client. A front is loaded only once chosen, so nothing on
// macOS loads the FUSE addon. Another front (Windows) is one more case here.
import type { FrontKind, MountFront } from './mount-front.js'

export type { FrontKind, MountFront } from './mount-front.js'

/**
 * Names the platform to act as, in place of the real one: the tests run macOS's front on
 * Linux with it (with stand-ins for mount_nfs, mount and umount on PATH). Nothing else sets it.
 */
export const PLATFORM_ENV = 'TRANSFERFS_PLATFORM'

/** The platform this process acts as: PLATFORM_ENV when set, else the real one. */
export function platformOf(env: NodeJS.ProcessEnv = process.env, actual: NodeJS.Platform = process.platform): string {
  return env[PLATFORM_ENV] || actual
}

export class UnsupportedPlatformError extends Error {
  override readonly name = 'UnsupportedPlatformError'
}

/** The front a platform mounts with; throws what is supported on any other. */
export function frontKindOf(platform: string): FrontKind {
  switch (platform) {
    case 'linux':
      return 'fuse'
    case 'darwin':
      return 'nfs'
    default:
      throw new UnsupportedPlatformError(`transferfs mounts on Linux (FUSE) and macOS (NFS), not on ${platform} yet; the commands that do not mount work here`)
  }
}

/** The front of this platform, loaded now. */
export async function chooseFront(platform: string = platformOf()): Promise<MountFront> {
  switch (frontKindOf(platform)) {
    case 'fuse':
      return (await import('./fuse-front.js')).fuseFront
    case 'nfs':
      return (await import('./nfs-front.js')).nfsFront
  }
}
