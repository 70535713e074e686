// What the command tests share: the local service, a transferfs account set up as a user
// would (TRANSFERFS_* environment, `transferfs login`; see test/mount/harness.ts), the CLI
// run as a child process, and transfers put on the service through the client.
import { spawn, type ChildProcess } from 'node:child_process'
import { createCipheriv, createHash } from 'node:crypto'
import { TransferClient } from '../../src/api/client.js'
import type { Transfer } from '../../src/api/types.js'
import { CLI, cli, login, serviceClient, useAccount, type Account } from '../mount/harness.js'
import { TS_REGISTER, type RunResult } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'

export { cli, login, useAccount, serviceClient, type Account }

export interface CliWorld {
  service: TestService
  account: Account
  /** The main user, signed in here (the test's own view of the service). */
  client: TransferClient
}

/** A service, a signed-in transferfs account and a client of the test's own. */
export async function startWorld(): Promise<CliWorld> {
  const service = await startTestService()
  const account = await useAccount(service)
  await login(service)
  const client = await serviceClient(service)
  return { service, account, client }
}

export async function stopWorld(w: CliWorld | undefined): Promise<void> {
  if (!w) return
  await w.client.close().catch(() => {})
  await w.service.close().catch(() => {})
}

/** Parses stdout as JSON, with the whole run in the failure message when it is not. */
export function jsonOf<T = unknown>(r: RunResult): T {
  try {
    return JSON.parse(r.stdout) as T
  } catch {
    throw new Error(`not JSON (exit ${r.code}):\nstdout: ${r.stdout}\nstderr: ${r.stderr}`)
  }
}

export interface NewFile {
  name: string
  data: Buffer
}

/** A complete transfer sent by the main user through the client (not the CLI under test). */
export async function putTransfer(client: TransferClient, files: NewFile[], opts: { subject?: string; password?: string; to?: string[] } = {}): Promise<Transfer> {
  const init = await client.transfers.initialize({
    subject: opts.subject ?? 'test transfer', ...(opts.password ? { password: opts.password } : {}), ...(opts.to ? { to: opts.to } : {}),
  })
  for (const f of files) {
    await client.upload.uploadFile({
      transferUrl: init.transferurl, transferId: init.transferid, transferKey: init.transferkey, fileName: f.name,
      source: { size: f.data.length, read: async (s, e) => f.data.subarray(s, e) },
    })
  }
  return client.transfers.complete(init.transferid, init.transferkey)
}

/**
 * Deterministic bytes (no two chunks alike, so a chunk written at the wrong place shows): the
 * AES-CTR keystream of a key made from the seed, the same on every run, and the bytes of a
 * shorter call the start of a longer one with the same seed. Made by OpenSSL at GB/s: the
 * suite makes a few GiB of them.
 */
export function bytes(size: number, seed = 1): Buffer {
  const key = createHash('sha256').update(`transferfs test bytes ${seed}`).digest().subarray(0, 16)
  const cipher = createCipheriv('aes-128-ctr', key, Buffer.alloc(16))
  const out = Buffer.allocUnsafe(size)
  // Through a zeroed piece of 4 MiB at a time: twice the bytes are never held.
  const zeros = Buffer.alloc(Math.min(size, 4 * 1024 * 1024))
  for (let at = 0; at < size; at += zeros.length) cipher.update(zeros.subarray(0, Math.min(zeros.length, size - at))).copy(out, at)
  return out
}

/** The CLI started and left running (to be killed mid-way). */
export function startCli(args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', TS_REGISTER, CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
}
