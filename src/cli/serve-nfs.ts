// `transferfs serve-nfs [DIR]`: serves the account's tree over NFSv3 on 127.0.0.1, for the
// system's own NFS client to mount (macOS's mount_nfs, Linux's mount -t nfs), until Ctrl-C or
// SIGTERM. It takes the same settings and sign-in as `mount`. The first stdout line is one
// JSON object ({"port", "host", "export"}; NFS and MOUNT share the port), then the commands
// that mount it at DIR. It stops as a mount does: sends pause and pins are kept for the next start.
import type { Command } from 'commander'
import { InvalidArgumentError } from 'commander'
import { homedir } from 'node:os'
import path from 'node:path'
import { stderrLogger } from '../base/log.js'
import { loadSettings } from '../config/index.js'
import { createOwnerOnly, tightenFolders } from '../config/owner-only.js'
import { EXPORT_PATH } from '../nfs/mountd.js'
import { NFS_HOST, NFS_READ_AHEAD_KB, NfsServer } from '../nfs/server.js'
import { addSettingFlags, composeMount } from './compose.js'
import { addExamples } from './output/examples.js'
import { mountNfsCommand, NFS_SOURCE, shownCommand } from './fronts/macos-commands.js'

interface ServeNfsOptions extends Record<string, unknown> {
  port: number
}

/** Where the commands shown mount the export when no DIR is given. */
const DEFAULT_DIR = path.join(homedir(), 'Transfers')

function port(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port is an integer from 0 to 65535')
  return n
}

/** The commands a user types to mount the export at `dir` (nolocks: no lock manager is served). */
export function mountCommands(nfsPort: number, dir: string): { macos: string; linux: string } {
  return {
    macos: shownCommand(mountNfsCommand(nfsPort, dir)),
    linux: shownCommand({ command: 'mount', args: ['-t', 'nfs', '-o', `vers=3,proto=tcp,port=${nfsPort},mountport=${nfsPort},mountproto=tcp,nolock`, NFS_SOURCE, dir] }),
  }
}

async function serveNfs(dirArg: string | undefined, opts: ServeNfsOptions): Promise<void> {
  createOwnerOnly()
  const loaded = await loadSettings(opts)
  await tightenFolders(loaded.folders)
  const { settings } = loaded
  const log = stderrLogger(settings.logLevel)
  const dir = path.resolve(dirArg ?? DEFAULT_DIR)
  const composed = await composeMount(loaded, dir, log, { readAheadKb: NFS_READ_AHEAD_KB })
  let server: NfsServer
  try {
    server = await NfsServer.start({ core: composed.core, dataDir: loaded.folders.data, port: opts.port, deadlines: settings, log,
      // Only the account's owner gets in, through the system's NFS client (a reserved port).
      ownerUid: process.getuid?.() ?? null, reservedPortsOnly: true,
    })
  } catch (err) {
    await composed.core.shutdown()
    throw new Error(`cannot serve NFS on ${NFS_HOST}:${opts.port}: ${(err as Error).message}`, { cause: err })
  }
  const commands = mountCommands(server.port, dir)
  process.stdout.write(`${JSON.stringify({ port: server.port, host: NFS_HOST, export: EXPORT_PATH })}\n`)
  process.stdout.write(`mount it with (macOS): ${commands.macos}\n            (Linux, as root): ${commands.linux}\n`)
  log.info(`serving NFSv3 on ${NFS_HOST}:${server.port}; Ctrl-C or SIGTERM ends it`)

  let stopping = false
  const stop = (why: string): void => {
    if (stopping) {
      log.warn(`${why} again: exiting now`)
      process.exit(1)
    }
    stopping = true
    log.info(`${why}: stopping the NFS server`)
    let timer: NodeJS.Timeout | undefined
    const grace = new Promise<void>((resolve) => (timer = setTimeout(() => {
      log.warn('shutdown did not finish in time')
      resolve()
    }, settings.shutdownGraceMs)))
    const down = (async () => {
      await server.close()
      await composed.core.shutdown()
    })()
    Promise.race([down, grace]).then(
      () => {
        clearTimeout(timer)
        process.exit(0)
      },
      (err: unknown) => {
        log.error(`stopping: ${(err as Error).message}`)
        process.exit(1)
      },
    )
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGHUP', () => stop('SIGHUP'))
}

export function register(program: Command): void {
  const cmd = program
    .command('serve-nfs')
    .description('Serve the Transfer Service account over NFSv3 on 127.0.0.1, for the system\'s NFS client to mount (macOS: mount_nfs), until Ctrl-C')
    .argument('[dir]', `the folder it will be mounted at, named in the mount command shown and in notifications (default: ~/Transfers)`)
    .option('--port <n>', 'the port NFS and MOUNT share (0 = any free port)', port, 0)
  addExamples(addSettingFlags(cmd), [
    'transferfs serve-nfs ~/Transfers --port 20490',
    `${shownCommand(mountNfsCommand(20490, '~/Transfers'))}   # macOS, in another terminal (\`transferfs mount\` does both there)`,
  ]).action(async (dir: string | undefined, opts: ServeNfsOptions) => serveNfs(dir, opts))
}
