// `transferfs mount DIR [-f]`: mounts the account at DIR, through the front of this platform
// (fronts/front.ts: FUSE on Linux, the NFS server and mount_nfs on macOS). With -f it serves
// in this process until Ctrl-C, `transferfs unmount` or an external unmount; without it a
// detached daemon does (this process returns once the mount answers). A FUSE mount left by
// a dead daemon ("Transport endpoint is not connected") is cleaned first.
import type { Command } from 'commander'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { loadSettings } from '../config/index.js'
import { createOwnerOnly, tightenFolders } from '../config/owner-only.js'
import { DAEMON_ENV, reportFailure, startBackgroundMount } from '../fuse/background.js'
import { stderrLogger } from '../base/log.js'
import { readSystemStore } from '../api/trust.js'
import { addSettingFlags, composeMount, MOUNT_LOG_FILE, settingArgs, settingEnv, warnOnStderr } from './compose.js'
import { chooseFront, type MountFront } from './fronts/front.js'

interface MountOptions extends Record<string, unknown> {
  foreground?: boolean
}

/** ms: how long `mount` waits for the daemon's mount to answer (the first inbox listing is not needed). */
const READY_TIMEOUT_MS = 60_000

export async function mountForeground(front: MountFront, dir: string, opts: MountOptions): Promise<void> {
  let settings
  let composed
  let log
  try {
    createOwnerOnly()
    settings = await loadSettings(opts)
    await tightenFolders(settings.folders)
    log = stderrLogger(settings.settings.logLevel)
    composed = await composeMount(settings, path.resolve(dir), log, { readAheadKb: front.readAheadKb(settings.settings) })
  } catch (err) {
    // The background parent is waiting for a word; give it the reason.
    await reportFailure(err)
    throw err
  }
  if (composed.content.diskCacheError) log.warn(`disk cache unavailable, reading through memory only: ${(composed.content.diskCacheError as Error).message}`)
  await front.run(composed.core, dir, settings.settings, {
    log,
    dataDir: settings.folders.data,
    onReady: (at) => {
      if (process.env[DAEMON_ENV] !== '1') process.stderr.write(`transferfs: ${at} is mounted; Ctrl-C or \`transferfs unmount ${at}\` ends it\n`)
    },
  })
}

async function mountBackground(dir: string, opts: MountOptions): Promise<void> {
  // Settings are read here too, so a mistake is reported before any process is started.
  const settings = await loadSettings(opts)
  // The daemon's warnings go to its log: one about the system's store is said here as well.
  await readSystemStore(process.env, warnOnStderr)
  await mkdir(settings.folders.data, { recursive: true, mode: 0o700 })
  const logFile = path.join(settings.folders.data, MOUNT_LOG_FILE)
  const script = process.argv[1]
  if (!script) throw new Error('cannot tell which script to start the mount daemon with')
  const { pid } = await startBackgroundMount({
    args: [script, 'mount', dir, '--foreground', ...settingArgs(opts)],
    env: { ...process.env, ...settingEnv(opts) },
    logFile,
    readyTimeoutMs: READY_TIMEOUT_MS,
  })
  process.stdout.write(`${dir} is mounted (process ${pid}, log ${logFile}); end it with \`transferfs unmount ${dir}\`\n`)
}

export function register(program: Command): void {
  const cmd = program
    .command('mount')
    .description('Mount the Transfer Service account at DIR (in the background unless -f)')
    .argument('<dir>', 'the folder to mount at (created when missing)')
    .option('-f, --foreground', 'serve in this process until Ctrl-C')
  addSettingFlags(cmd).action(async (dirArg: string, opts: MountOptions) => {
    const dir = path.resolve(dirArg)
    const front = await chooseFront()
    // Said before a daemon is started, in this terminal: a FUSE library or addon missing, a folder in use.
    await front.precheck(dir, await loadSettings(opts))
    if (opts.foreground || process.env[DAEMON_ENV] === '1') await mountForeground(front, dir, opts)
    else await mountBackground(dir, opts)
  })
}
