// Reads through a real mount ride out a service's bad patch: for each burst of faults the
// md5 of a file read cold (a transfer nobody has read in this mount) is exact, and only a
// definitive answer or the end of the read's deadline would fail it. Then the service
// goes away: for 10 s (a read under way finishes once it is back), and for good (a cold
// read fails at once with "Host is down" while cached bytes still read).
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TransferClient } from '../../src/api/client.js'
import { bytes, putTransfer } from '../cli/harness.js'
import { run, unmountAll, waitFor } from '../support/mount.js'
import { startTestService, type FaultSpec, type TestService } from '../support/service.js'
import { login, mount, serviceClient, useAccount, type Account } from './harness.js'

const MiB = 1024 * 1024
/** Large enough to span several fetches and range hashes (the first fetch is 1 MiB, then they grow). */
const FILE_SIZE = 24 * MiB
const READ_TIMEOUT_MS = 20_000

let service: TestService
let client: TransferClient
let account: Account
let seed = 0
/** ms of a cold read without faults, measured first. */
let baselineMs = 0
const timings: string[] = []

interface ColdFile {
  id: string
  path: string
  md5: string
}

/** A new transfer to the account with one file nobody has read: cold by construction. */
async function coldFile(): Promise<ColdFile> {
  const data = bytes(FILE_SIZE, ++seed)
  const t = await putTransfer(client, [{ name: 'big.bin', data }], { subject: `faults ${seed}`, to: [service.user.email] })
  return { id: t.id, path: path.join(account.mountDir, 'by-id', t.id, 'big.bin'), md5: createHash('md5').update(data).digest('hex') }
}

/** md5sum through the mount, timed. */
async function md5Through(file: string): Promise<{ md5: string; ms: number; stderr: string }> {
  const started = Date.now()
  const r = await run('md5sum', [file], { timeoutMs: 120_000 })
  return { md5: r.code === 0 ? r.stdout.split(' ')[0]! : `exit ${r.code}`, ms: Date.now() - started, stderr: r.stderr }
}

/** The mount daemon's log lines about retrying reads of `transferId`. */
async function retryLog(transferId: string): Promise<{ retrying: number; recovered: number }> {
  const log = await readFile(path.join(account.home, 'daemon.log'), 'utf8')
  const lines = log.split('\n').filter((l) => l.includes(`(transfer ${transferId})`))
  return { retrying: lines.filter((l) => /info: .*retrying for up to/.test(l)).length, recovered: lines.filter((l) => /info: .*recovered after/.test(l)).length }
}

async function withFaults(faults: FaultSpec[], name: string): Promise<ColdFile> {
  const file = await coldFile()
  await service.controls.resetCounters()
  for (const f of faults) await service.controls.fault(f)
  try {
    const got = await md5Through(file.path)
    expect(got.md5, got.stderr).toBe(file.md5)
    expect(got.ms).toBeLessThan(READ_TIMEOUT_MS * 3)
    timings.push(`${name}: ${(got.ms / 1000).toFixed(1)} s (${(got.ms / baselineMs).toFixed(1)}× the fault-free read)`)
  } finally {
    await service.controls.clearFaults()
  }
  return file
}

beforeAll(async () => {
  service = await startTestService()
  client = await serviceClient(service)
  account = await useAccount(service, { TRANSFERFS_READ_TIMEOUT_MS: String(READ_TIMEOUT_MS) })
  await login(service)
  await mount(account)
  const file = await coldFile()
  const got = await md5Through(file.path)
  expect(got.md5, got.stderr).toBe(file.md5)
  baselineMs = got.ms
})

afterAll(async () => {
  if (timings.length) console.log(`cold ${FILE_SIZE / MiB} MiB read, fault-free ${(baselineMs / 1000).toFixed(1)} s; under faults:\n  ${timings.join('\n  ')}`)
  await unmountAll()
  await client?.close()
  await service?.close()
})

describe('a cold read through the mount is exact under each burst of faults', () => {
  it('download 503 ×10, logged once when retrying starts and once when it recovers, not per try', async () => {
    const file = await withFaults([{ route: 'download', kind: 'status', status: 503, count: 10 }], 'download 503 ×10')
    const log = await retryLog(file.id)
    expect(log.retrying).toBeGreaterThanOrEqual(1)
    expect(log.retrying).toBeLessThan(10)
    expect(log.recovered).toBe(log.retrying)
  })
  it('download 500 ×6', () => withFaults([{ route: 'download', kind: 'status', status: 500, count: 6 }], 'download 500 ×6'))
  it('download 429 ×5 with Retry-After', async () => {
    await withFaults([{ route: 'download', kind: 'status', status: 429, count: 5 }], 'download 429 ×5 (Retry-After: 1)')
  })
  it('GetRangeHash 503 ×8', () => withFaults([{ route: 'rangehash', kind: 'status', status: 503, count: 8 }], 'GetRangeHash 503 ×8'))
  it('details 503 ×6', () => withFaults([{ route: 'details', kind: 'status', status: 503, count: 6 }], 'details 503 ×6'))
  it('5 corrupt bodies', () => withFaults([{ route: 'download', kind: 'corrupt', count: 5 }], '5 corrupt bodies'))
  it('5 corrupt hashes', () => withFaults([{ route: 'rangehash', kind: 'corrupt', count: 5 }], '5 corrupt hashes'))
  it('5 resets mid-body', () => withFaults([{ route: 'download', kind: 'reset', count: 5 }], '5 resets mid-body'))
  it('a 5 s stall', () => withFaults([{ route: 'download', kind: 'stall', ms: 5000, count: 1 }], 'a 5 s stall'))
  it('a mix of the above', () =>
    withFaults([
      { route: 'details', kind: 'status', status: 503, count: 2 },
      { route: 'download', kind: 'status', status: 503, count: 3 },
      { route: 'download', kind: 'corrupt', count: 2 },
      { route: 'download', kind: 'reset', count: 2 },
      { route: 'download', kind: 'status', status: 429, count: 2 },
      { route: 'rangehash', kind: 'status', status: 500, count: 3 },
      { route: 'rangehash', kind: 'corrupt', count: 2 },
      { route: 'download', kind: 'stall', ms: 3000, count: 1 },
    ], 'a mix (22 faults)'))
})

describe('the service goes away', () => {
  it('stopped for 10 s and restarted on the same ports: a read under way finishes with the right md5', async () => {
    const file = await coldFile()
    // Slow enough that the outage falls in the middle of the read.
    await service.controls.throttle({ bytesPerSecond: 4 * MiB })
    const started = Date.now()
    const reading = md5Through(file.path)
    await new Promise((r) => setTimeout(r, 1500))
    await service.pause()
    await new Promise((r) => setTimeout(r, 5_000))
    // `.status` (and so `transferfs status`) says what is going on, and why.
    const during = await readFile(path.join(account.mountDir, '.status'), 'utf8')
    expect(during).toMatch(/^service: (unreachable|retrying 1 read)/)
    expect(during).toMatch(/ECONNREFUSED/)
    await new Promise((r) => setTimeout(r, 5_000))
    await service.resume()
    const got = await reading
    await service.controls.clearFaults()
    expect(got.md5, got.stderr).toBe(file.md5)
    expect(await waitFor(async () => !(await readFile(path.join(account.mountDir, '.status'), 'utf8')).startsWith('service:'), 10_000)).toBe(true)
    timings.push(`service stopped 10 s mid-read (4 MiB/s throttle): ${((Date.now() - started) / 1000).toFixed(1)} s`)
  })

  it('stopped for good: a cold read fails fast with "Host is down", cached bytes still read', async () => {
    const cached = await coldFile()
    expect((await md5Through(cached.path)).md5).toBe(cached.md5)
    const cold = await coldFile()
    // Its details are known (the lookup happened while the service was up); its bytes are not.
    const head = await run('stat', ['-c', '%s', cold.path])
    expect(head.stdout.trim()).toBe(String(FILE_SIZE))
    await service.pause()
    try {
      let started = Date.now()
      const first = await run('head', ['-c', '4096', cold.path])
      const firstMs = Date.now() - started
      expect(first.code).not.toBe(0)
      expect(first.stderr).toMatch(/host is down/i)
      // Found unreachable after a few refused connections: far sooner than the read deadline.
      expect(firstMs).toBeLessThan(READ_TIMEOUT_MS / 2)
      started = Date.now()
      const again = await run('head', ['-c', '4096', cold.path])
      const againMs = Date.now() - started
      expect(again.stderr).toMatch(/host is down/i)
      expect(againMs).toBeLessThan(1000)
      timings.push(`service gone: first cold read fails in ${firstMs} ms, the next in ${againMs} ms`)
      // Bytes read before are served from the caches (O_DIRECT: not the kernel's page cache).
      const r = await run('bash', ['-c', 'dd if="$1" iflag=direct bs=1M status=none | md5sum', 'bash', cached.path], { timeoutMs: 60_000 })
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout.split(' ')[0]).toBe(cached.md5)
    } finally {
      await service.resume()
    }
    // Back: the probe finds the service (it knocks at least every 5 s) and the same cold
    // file reads without a remount.
    const started = Date.now()
    expect(await waitFor(async () => (await run('head', ['-c', '1', cold.path])).code === 0, 8000, 200)).toBe(true)
    timings.push(`service back: the mount is online again after ${Date.now() - started} ms`)
    const back = await md5Through(cold.path)
    expect(back.md5, back.stderr).toBe(cold.md5)
  })
})
