// A cold 1 MiB O_DIRECT read through a real mount, on the FUSE library the suite runs on
// (it runs on both): libfuse 3 passes it as one request, libfuse 2 as eight 128 KiB
// requests one after another. Either way the service is asked one range and one range
// hash for it, and the bytes are exact; a 4 KiB read elsewhere still fetches only its own
// 4 KiB. The service's counters tell.
import { createHash } from 'node:crypto'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TransferClient } from '../../src/api/client.js'
import { bytes, putTransfer } from '../cli/harness.js'
import { run, startDaemon, useMounts } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { login, MOUNT_DAEMON, serviceClient, useAccount } from '../mount/harness.js'

const KiB = 1024
const MiB = 1024 * KiB

let service: TestService
let client: TransferClient

beforeAll(async () => {
  service = await startTestService()
  client = await serviceClient(service)
})

afterAll(async () => {
  await client?.close()
  await service?.close()
})

useMounts()

/** md5 of `count` blocks of `bs` bytes at block `skip`, read with O_DIRECT. */
async function directMd5(file: string, bs: number, skip: number, count: number): Promise<string> {
  const r = await run('bash', ['-c', `dd if="$1" iflag=direct bs=${bs} skip=${skip} count=${count} status=none | md5sum`, 'bash', file], { timeoutMs: 60_000 })
  expect(r.code, r.stderr).toBe(0)
  return r.stdout.split(' ')[0]!
}

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex')

describe('random reads through the mount', () => {
  it('a cold 1 MiB O_DIRECT read at a block boundary asks one range and one hash; a 4 KiB read its own 4 KiB', async () => {
    const account = await useAccount(service)
    await login(service)
    await startDaemon(MOUNT_DAEMON, account.mountDir, path.join(account.home, 'daemon.log'))
    const data = bytes(8 * MiB, 3)
    const t = await putTransfer(client, [{ name: 'big.bin', data }], { subject: 'split reads', to: [service.user.email] })
    const file = path.join(account.mountDir, 'by-id', t.id, 'big.bin')
    // Looked up first, so that only the reads below are counted.
    expect((await run('stat', [file])).code).toBe(0)

    await service.controls.resetCounters()
    expect(await directMd5(file, MiB, 5, 1)).toBe(md5(data.subarray(5 * MiB, 6 * MiB)))
    let c = await service.controls.counters()
    expect([c.routes.download ?? 0, c.routes.rangehash ?? 0, c.bytesServed]).toEqual([1, 1, MiB])

    await service.controls.resetCounters()
    const at = 3 * MiB + 40 * KiB
    expect(await directMd5(file, 4 * KiB, at / (4 * KiB), 1)).toBe(md5(data.subarray(at, at + 4 * KiB)))
    c = await service.controls.counters()
    expect([c.routes.download ?? 0, c.bytesServed]).toEqual([1, 4 * KiB])
  })
})
