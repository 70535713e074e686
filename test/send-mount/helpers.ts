// Send-specific helpers on top of the real-mount harness (test/mount/harness.ts): an
// account signed in as a given user with a short settle time, the sent log, the service's
// view of a sent transfer, and source trees to copy in.
import { createHash } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { TransferClient } from '../../src/api/client.js'
import type { SentRecord } from '../../src/send/ports.js'
import { afterAll, beforeAll } from 'vitest'
import { tempDir, unmountAll, waitFor } from '../support/mount.js'
import { startTestService, type NewUser, type TestService } from '../support/service.js'
import { cli, mount, useAccount, type Account } from '../mount/harness.js'

export const SETTLE = '400'

export interface User {
  email: string
  password: string
}

/** A fresh transferfs account signed in as `user`, entries settling after SETTLE ms. */
export async function sendingAccount(service: TestService, user: User, env: Record<string, string> = {}): Promise<Account> {
  const a = await useAccount(service, { TRANSFERFS_SETTLE_MS: SETTLE, ...env })
  const r = await cli(['login', '--email', user.email, '--password-stdin'], { input: `${user.password}\n` })
  if (r.code !== 0) throw new Error(`login failed: ${r.stderr}`)
  return a
}

export async function clientAs(service: TestService, user: User): Promise<TransferClient> {
  const client = new TransferClient({ apiUrl: service.baseUrl, apiKey: service.apiKey, ca: service.caPem })
  await client.auth.login(user.email, user.password)
  return client
}

export async function sentRecords(a: Account): Promise<SentRecord[]> {
  // The account's data folder: useAccount's, unless the test's settings named another.
  const dataDir = process.env.TRANSFERFS_DATA_DIR ?? path.join(a.home, 'data')
  const text = await fsp.readFile(path.join(dataDir, 'sent.jsonl'), 'utf8').catch(() => '')
  return text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as SentRecord)
}

/** Names in outbox/ (through the mount) recursively, files only. */
export async function outboxFiles(a: Account): Promise<string[]> {
  const out: string[] = []
  const walk = async (rel: string): Promise<void> => {
    for (const e of await fsp.readdir(path.join(a.mountDir, 'outbox', rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name
      if (e.isDirectory()) await walk(r)
      else out.push(r)
    }
  }
  await walk('')
  return out
}

/** Waits until outbox/ holds no file (every entry sent); false after timeoutMs. */
export function outboxDrained(a: Account, timeoutMs = 60_000): Promise<boolean> {
  return waitFor(async () => (await outboxFiles(a).catch(() => ['?'])).length === 0, timeoutMs, 200)
}

export function md5(data: Buffer): string {
  return createHash('md5').update(data).digest('hex')
}

/** Deterministic bytes (cheap to make, distinct per seed). */
export function bytes(size: number, seed: number): Buffer {
  const b = Buffer.alloc(size)
  for (let i = 0; i + 4 <= size; i += 512) b.writeUInt32LE((Math.imul(i, 2654435761) + seed) >>> 0, i)
  return b
}

/** A source tree: nested folders, files of a few sizes (one multi-chunk), and a symbolic link. Returns file → MD5. */
export async function makeTree(root: string, seed: number): Promise<Map<string, string>> {
  const files = new Map<string, string>()
  const put = async (rel: string, data: Buffer): Promise<void> => {
    await fsp.mkdir(path.dirname(path.join(root, rel)), { recursive: true })
    await fsp.writeFile(path.join(root, rel), data)
    files.set(rel, md5(data))
  }
  await put('a.txt', Buffer.from(`hello ${seed}\n`))
  await put('empty.dat', Buffer.alloc(0))
  await put('docs/report.pdf', bytes(700_000, seed))
  await put('docs/deep/raw.csv', bytes(3_000_000 + seed, seed + 1))
  await fsp.symlink('a.txt', path.join(root, 'link-to-a'))
  await fsp.utimes(path.join(root, 'a.txt'), new Date('2020-01-02T03:04:05Z'), new Date('2020-01-02T03:04:05Z'))
  return files
}

export async function sourceDir(): Promise<string> {
  return tempDir('transferfs-test-src-')
}

/** file name → MD5 of a transfer, as the service describes it. */
export async function transferFiles(client: TransferClient, id: string): Promise<Map<string, string>> {
  const t = await client.transfers.details(id, { filesLimit: -1 })
  return new Map((t.files ?? []).map((f) => [f.filename ?? '', f.md5 ?? '']))
}

/** A service, a user of its own signed in here and mounted, for a whole test file. */
export interface SendingMount {
  service: TestService
  /** The test's own client, signed in as the user. */
  client: TransferClient
  account: Account
  /** The mount daemon (a test that kills it mounts again and sets it). */
  pid: number
  /** A folder for source files. */
  src: string
}

/** Starts it before the file's tests (creating `user` with its extra fields) and ends it after them; `env` adds to the account's settings. */
export function useSendingMount(user: NewUser, env: Record<string, string> = {}): SendingMount {
  const world = {} as SendingMount
  beforeAll(async () => {
    world.service = await startTestService()
    await world.service.controls.createUser(user)
    world.client = await clientAs(world.service, user)
    world.account = await sendingAccount(world.service, user, env)
    world.pid = await mount(world.account)
    world.src = await sourceDir()
  }, 60_000)
  afterAll(async () => {
    await unmountAll()
    await world.client?.close()
    await world.service?.close()
  })
  return world
}
