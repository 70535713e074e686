// The FUSE layer's public face for the CLI.
export { FuseAdapter, type AdapterTimeouts } from './adapter.js'
export { errnoOf, ERRNO } from './errno.js'
export { mountFileSystem, cleanStaleMount, fusermountUnmount, type MountHandle, type MountSettings } from './mount.js'
export { runMount, type RunMountOptions } from './lifecycle.js'
export { startBackgroundMount, reportReady, reportFailure, DAEMON_ENV, type BackgroundOptions } from './background.js'
export { stderrLogger, silentLogger, type Logger } from './log.js'
