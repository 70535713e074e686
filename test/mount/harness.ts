// What the real-mount tests share: the local service, a transferfs account set up the
// way a user would (TRANSFERFS_* environment, `transferfs login`), a mount daemon
// running the real `mount` command, and the service's view of the inbox to compare with.
import { createHash } from 'node:crypto'
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { TransferClient } from '../../src/api/client.js'
import type { Transfer } from '../../src/api/types.js'
import { afterAll, beforeAll } from 'vitest'
import { run, startDaemon, tempDir, TS_REGISTER, unmountAll, type RunResult } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { bytes, putTransfer } from '../cli/harness.js'

const HERE = path.dirname(fileURLToPath(import.meta.url))
/** The real entry point, run from TypeScript (src/version.ts finds package.json from src/ too). */
export const CLI = path.join(HERE, '../../src/cli/main.ts')
export const MOUNT_DAEMON = path.join(HERE, 'fixtures/mount-daemon.ts')

export interface Account {
  /** Holds config/, cache/, data/ and the mount folder mnt/. */
  home: string
  mountDir: string
}

/**
 * Points this test process's environment (which the CLI children inherit) at the service
 * and at fresh transferfs folders. Short deadlines keep failing reads short.
 */
export async function useAccount(service: TestService, extraEnv: Record<string, string> = {}): Promise<Account> {
  const home = await tempDir()
  Object.assign(process.env, {
    TRANSFERFS_API_URL: service.baseUrl,
    TRANSFERFS_API_KEY: service.apiKey,
    TRANSFERFS_CA: service.ca,
    TRANSFERFS_CONFIG_DIR: path.join(home, 'config'),
    TRANSFERFS_CACHE_DIR: path.join(home, 'cache'),
    TRANSFERFS_DATA_DIR: path.join(home, 'data'),
    TRANSFERFS_READ_TIMEOUT_MS: '20s',
    TRANSFERFS_UNMOUNT_POLL_MS: '200',
    TRANSFERFS_SHUTDOWN_GRACE_MS: '3s',
    TRANSFERFS_LOG_LEVEL: 'debug',
    // The desktop's thumbnail cache of this account's mounts, not the real user's.
    XDG_CACHE_HOME: path.join(home, 'xdg-cache'),
    ...extraEnv,
  })
  return { home, mountDir: path.join(home, 'mnt') }
}

/** The transferfs command line (run from TypeScript), to completion. */
export function cli(args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return run(process.execPath, ['--import', TS_REGISTER, CLI, ...args], { timeoutMs: opts.timeoutMs ?? 60_000, input: opts.input })
}

export async function login(service: TestService): Promise<void> {
  const r = await cli(['login', '--email', service.user.email, '--password-stdin'], { input: `${service.user.password}\n` })
  if (r.code !== 0) throw new Error(`login failed: ${r.stderr}`)
}

/** Starts `transferfs mount DIR -f` as a daemon; resolves with its pid once the mount answers. */
export function mount(account: Account): Promise<number> {
  return startDaemon(MOUNT_DAEMON, account.mountDir, path.join(account.home, 'daemon.log'))
}

/** A client of the service signed in as the main user, session in memory (the test's own view). */
export async function serviceClient(service: TestService): Promise<TransferClient> {
  const client = new TransferClient({ apiUrl: service.baseUrl, apiKey: service.apiKey, ca: service.caPem })
  await client.auth.login(service.user.email, service.user.password)
  return client
}

/** Every readable inbox transfer with all its files, as the service describes them. */
export async function inboxDetails(client: TransferClient, password?: string): Promise<Transfer[]> {
  const out: Transfer[] = []
  for await (const t of client.transfers.inboxAll()) {
    if (t.status !== 'STATUS_COMPLETE' || t.isexpired) continue
    out.push(await client.transfers.details(t.id, { filesLimit: -1, password: t.passwordprotected ? password : undefined }).catch(() => t))
  }
  return out
}

/** The transfer folder of `id` under `inbox/` (names end in "(<id>)"). */
export async function transferFolder(mountDir: string, id: string): Promise<string> {
  const names = await readdir(path.join(mountDir, 'inbox'))
  const name = names.find((n) => n.endsWith(`(${id})`))
  if (!name) throw new Error(`no folder for transfer ${id} in ${names.join(', ')}`)
  return path.join(mountDir, 'inbox', name)
}

export interface FoundFile {
  /** Relative to the walked folder. */
  rel: string
  abs: string
}

/** Every regular file below dir (the folder's own .transfer.json and .password left out at its top). */
export async function filesBelow(dir: string): Promise<FoundFile[]> {
  const out: FoundFile[] = []
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name
      if (e.isDirectory()) await walk(r)
      else if (!(rel === '' && (e.name === '.transfer.json' || e.name === '.password'))) out.push({ rel: r, abs: path.join(dir, r) })
    }
  }
  await walk('')
  return out
}

/** MD5 of a file, read on worker threads of this process (the mount lives in another one). */
export { md5OfFile } from '../../src/base/file-hash-pool.js'

/** Sorted "md5 size" lines: a transfer's content, whatever its files are called. */
export function contentOf(files: Array<{ md5: string | null; size: number | null }>): string[] {
  return files.map((f) => `${f.md5} ${f.size}`).sort()
}

/** One demo service and one real mount for a whole test file (filled in by beforeAll). */
export interface DemoMount {
  service: TestService
  /** The test's own client, signed in as the demo user. */
  client: TransferClient
  account: Account
  /** The demo inbox with every transfer's details (files included). */
  transfers: Transfer[]
  /** The demo transfer whose subject starts so. */
  bySubject(prefix: string): Transfer
}

/**
 * Starts the demo service, signs the command in and mounts before the file's tests, and
 * ends it all after them. `password` unlocks the protected demo transfer's details.
 */
export function useDemoMount(options: { password?: string } = {}): DemoMount {
  const world = {
    bySubject(prefix: string): Transfer {
      const t = world.transfers.find((x) => x.subject.startsWith(prefix))
      if (!t) throw new Error(`no demo transfer "${prefix}"`)
      return t
    },
  } as DemoMount
  beforeAll(async () => {
    world.service = await startTestService({ demo: true })
    world.client = await serviceClient(world.service)
    world.transfers = await inboxDetails(world.client, options.password)
    world.account = await useAccount(world.service)
    await login(world.service)
    await mount(world.account)
  })
  afterAll(async () => {
    await unmountAll()
    await world.client?.close()
    await world.service?.close()
  })
  return world
}

export interface OneFile {
  service: TestService
  client: TransferClient
  transferId: string
  /** The file's MD5, as the test wrote it. */
  md5: string
}

/**
 * A local service holding one transfer of one file of `size` bytes (made from `seed` with the
 * CLI harness's `bytes`), started before the file's tests and ended after them: for tests that
 * read one cold file through fresh mounts and count what the service served.
 */
export function useOneFile(name: string, size: number, seed: number, subject: string): OneFile {
  const world = {} as OneFile
  beforeAll(async () => {
    world.service = await startTestService()
    world.client = await serviceClient(world.service)
    const data = bytes(size, seed)
    world.md5 = createHash('md5').update(data).digest('hex')
    world.transferId = (await putTransfer(world.client, [{ name, data }], { subject, to: [world.service.user.email] })).id
  }, 300_000)
  afterAll(async () => {
    await world.client?.close()
    await world.service?.close()
  })
  return world
}
