// `transferfs demo` (what `npm start` runs): the local service with the demo transfers,
// signed in as its demo user, mounted at ./demo-mount in the foreground. Everything it
// keeps (settings, session, cache, the service's file bytes) goes under ./.demo/, so the
// user's real transferfs folders are never touched. Ctrl-C unmounts and stops it all.
import type { Command } from 'commander'
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { DIRECT } from '../api/proxy.js'
import { loadSettings } from '../config/index.js'
import { DEMO_PASSWORD } from '../emulator/demo-content.js'
import { startService } from '../emulator/index.js'
import { stderrLogger } from '../base/log.js'
import { fusermountUnmount, mountFileSystem, mountReadAheadKb } from '../fuse/mount.js'
import { composeMount, createClient } from './compose.js'
import { createOwnerOnly } from '../config/owner-only.js'

export const DEMO_STATE_DIR = '.demo'
export const DEMO_MOUNT_DIR = 'demo-mount'

interface DemoOptions {
  mountDir: string
  stateDir: string
  verbose?: boolean
}

function tryThis(dir: string, email: string): string {
  const rel = path.relative(process.cwd(), dir) || '.'
  return [
    '',
    `The demo account ${email} is mounted at ${rel}. Try, in another terminal:`,
    `  ls -l ${rel}/inbox`,
    `  cat "${rel}/inbox/"*"Quarterly report"*/report.txt`,
    `  cp -r "${rel}/inbox/"*"Quarterly report"* /tmp/`,
    `  md5sum "${rel}/inbox/"*"Disk image"*/disk-image.img     # 1 GiB, read on demand and verified`,
    `  getfattr -d "${rel}/inbox/"*"Quarterly report"*/summary.pdf`,
    `  echo ${DEMO_PASSWORD} > "${rel}/inbox/"*"Contracts"*/.password && ls "${rel}/inbox/"*"Contracts"*`,
    `  sqlite3 "${rel}/inbox/"*"Database export"*/inventory.sqlite .tables`,
    `  cp /etc/os-release ${rel}/outbox/ && sleep 5 && ls ${rel}/sent    # sent once settled (3 s)`,
    `  mkdir ${rel}/outbox/Team && cp /etc/hostname ${rel}/outbox/Team/    # to the contact group Team`,
    `  cat ${rel}/.status                                                   # what is being sent`,
    `  xdg-open "${rel}/inbox/"*"Photos"*    # a file manager shows the photos' thumbnails without downloading them`,
    `  cat ${rel}/sent/*/link.url                                           # the link of what you sent`,
    'Ctrl-C here unmounts and stops the demo.',
    '',
  ].join('\n')
}

export async function runDemo(opts: DemoOptions): Promise<void> {
  createOwnerOnly()
  const log = stderrLogger(opts.verbose ? 'debug' : 'info', 'transferfs demo')
  const state = path.resolve(opts.stateDir)
  const mountDir = path.resolve(opts.mountDir)
  const serviceDir = path.join(state, 'service')
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TRANSFERFS_CONFIG_DIR: path.join(state, 'config'),
    TRANSFERFS_CACHE_DIR: path.join(state, 'cache'),
    TRANSFERFS_DATA_DIR: path.join(state, 'data'),
  }
  // The service's transfer ids are new on every start: chunks cached by an earlier demo can never be read again.
  await rm(env.TRANSFERFS_CACHE_DIR!, { recursive: true, force: true })
  await mkdir(serviceDir, { recursive: true })

  log.info('starting the local Transfer Service with the demo transfers (making a 1 GiB file takes a few seconds)')
  const service = await startService({ demo: true, controls: false, dataDir: serviceDir, log: opts.verbose ? (l) => log.debug(l) : undefined })
  let stopping: Promise<void> | undefined
  const stopService = async () => {
    await service.close().catch(() => {})
    // The 1 GiB of demo bytes should not linger in the project folder.
    await rm(serviceDir, { recursive: true, force: true }).catch(() => {})
  }
  try {
    // The service is on this machine, where a proxy the desktop is set up for cannot reach it.
    const settings = await loadSettings(
      { apiUrl: service.baseUrl, apiKey: service.apiKey, ca: service.ca, proxy: DIRECT },
      env,
    )
    const client = await createClient(settings)
    try {
      await client.auth.login(service.user.email, service.user.password)
    } finally {
      await client.close()
    }
    const { core } = await composeMount(settings, mountDir, log, { readAheadKb: mountReadAheadKb(settings.settings) })
    const handle = await mountFileSystem(core, mountDir, settings.settings, log, settings.folders.data)
    process.stdout.write(tryThis(handle.dir, service.user.email))

    const stop = (why: string) => {
      if (stopping) {
        log.warn(`${why} again: detaching now`)
        void fusermountUnmount(handle.dir).finally(() => process.exit(1))
        return
      }
      log.info(`${why}: unmounting and stopping the service`)
      stopping = handle
        .unmount()
        .catch(async (err: unknown) => {
          log.error((err as Error).message)
          await fusermountUnmount(handle.dir)
        })
        .then(stopService)
        .finally(() => process.exit(0))
    }
    process.on('SIGINT', () => stop('SIGINT'))
    process.on('SIGTERM', () => stop('SIGTERM'))
    process.on('SIGHUP', () => stop('SIGHUP'))
    void handle.ended.then((how) => {
      if (how === 'external') stop('external unmount')
    })
  } catch (err) {
    await stopService()
    throw err
  }
}

export function register(program: Command): void {
  program
    .command('demo')
    .description('Try transferfs: the local service with sample transfers, mounted at ./demo-mount (Ctrl-C ends it)')
    .option('--mount-dir <dir>', 'where to mount', DEMO_MOUNT_DIR)
    .option('--state-dir <dir>', 'where the demo keeps its settings, session, cache and service data', DEMO_STATE_DIR)
    .option('-v, --verbose', 'log every request of the service and the mount')
    .action(async (opts: DemoOptions) => {
      await runDemo(opts)
    })
}
