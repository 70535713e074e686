// The mount as a process: SIGINT/SIGTERM end it cleanly, an external unmount ends it,
// and it always ends with process.exit() (fuse-native keeps the event loop alive, so a
// natural exit does not come). When started by startBackgroundMount it reports ready
// (or its error) to the parent over the IPC channel.
import type { FileSystemCore } from '../vfs/core.js'
import { reportFailure, reportReady } from './background.js'
import { stderrLogger, type Logger, type LogLevel } from '../base/log.js'
import { fusermountUnmount, mountFileSystem, type MountHandle, type MountSettings } from './mount.js'

export interface RunMountOptions {
  log?: Logger
  logLevel?: LogLevel
  /** Called once the mount answers (after the parent, if any, was told). */
  onReady?: (handle: MountHandle) => void
  /** The data folder the mount serves from (named in the mount's source for the commands to find). */
  dataDir?: string
}

/** Mounts and serves until a signal or an external unmount, then exits the process. */
export async function runMount(core: FileSystemCore, dir: string, settings: MountSettings, opts: RunMountOptions = {}): Promise<MountHandle> {
  const log = opts.log ?? stderrLogger(opts.logLevel ?? 'info')
  let handle: MountHandle
  try {
    handle = await mountFileSystem(core, dir, settings, log, opts.dataDir)
  } catch (err) {
    await reportFailure(err)
    throw err
  }

  let exiting = false
  const finish = (code: number): void => {
    // Give stderr a moment to drain; exit even if something still holds the loop.
    setTimeout(() => process.exit(code), 50).unref()
    process.exitCode = code
  }
  const stop = (why: string): void => {
    if (exiting) {
      // A second signal: the user does not want to wait.
      log.warn(`${why} again: detaching now`)
      void fusermountUnmount(handle.dir).finally(() => process.exit(1))
      return
    }
    exiting = true
    log.info(`${why}: unmounting ${handle.dir}`)
    handle.unmount().then(
      () => finish(0),
      (err: unknown) => {
        log.error((err as Error).message)
        void fusermountUnmount(handle.dir).finally(() => finish(1))
      },
    )
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGHUP', () => stop('SIGHUP'))
  void handle.ended.then((how) => {
    if (how === 'external' && !exiting) stop('external unmount')
  })

  await reportReady()
  opts.onReady?.(handle)
  return handle
}
