// What a front door of the mount is to the commands: `transferfs mount` and `unmount` drive
// each front through this (front.ts chooses one by platform).
import type { Logger } from '../../base/log.js'
import type { LoadedSettings, Settings } from '../../config/index.js'
import type { FileSystemCore } from '../../vfs/core.js'

export type FrontKind = 'fuse' | 'nfs'

export interface RunFrontOptions {
  log: Logger
  /** The data folder the mount serves from. */
  dataDir: string
  /** Called once the mount answers (after the waiting parent, if any, was told). */
  onReady: (dir: string) => void
}

export interface MountFront {
  readonly kind: FrontKind
  /** What can fail before a daemon is started, said in the user's terminal: the FUSE library, the folder. */
  precheck(dir: string, loaded: LoadedSettings): Promise<void>
  /** KiB the front's clients read ahead of a sequential reader (the read path counts that far ahead as one run). */
  readAheadKb(settings: Settings): number
  /** Mounts `core` at `dir` and serves it until a signal or an unmount; the process then exits. */
  run(core: FileSystemCore, dir: string, settings: Settings, opts: RunFrontOptions): Promise<void>
  /** `transferfs unmount DIR`: unmounts, and the mount's process ends (sends pause, pins stay). */
  unmount(dir: string): Promise<void>
}
