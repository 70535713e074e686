// The demo's 1 GiB file read whole through `transferfs serve-nfs` by libnfs's nfs-cat, as a Mac
// reads it through mount_nfs: the bytes streamed into md5sum (never held in memory) give the MD5
// the service states, and the service served and hashed each byte once.
import path from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { TransferClient } from '../../src/api/client.js'
import type { Transfer } from '../../src/api/types.js'
import { DEMO_LARGE_FILE_SIZE } from '../../src/emulator/demo-content.js'
import { inboxDetails, login, serviceClient, useAccount } from '../mount/harness.js'
import { run } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { libnfs, listedNames, nfsUrl, serveNfs, type NfsServe } from './harness.js'

let service: TestService
let client: TransferClient
let server: NfsServe
let big: Transfer

beforeAll(async () => {
  service = await startTestService({ demo: true })
  client = await serviceClient(service)
  big = (await inboxDetails(client)).find((t) => t.subject.startsWith('Disk image')) as Transfer
  expect(big?.files[0]?.filesize).toBe(DEMO_LARGE_FILE_SIZE)
  const account = await useAccount(service)
  await login(service)
  server = await serveNfs([path.join(account.home, 'mnt')])
}, 180_000)

afterAll(async () => {
  await server?.stop()
  await client?.close()
  await service?.close()
})

it('nfs-cat of the demo\'s 1 GiB file gives the service\'s MD5, each byte served and hashed once', async () => {
  const inbox = await libnfs('nfs-ls', nfsUrl(server.port, '/inbox'))
  expect(inbox.code, inbox.stderr).toBe(0)
  const folder = listedNames(inbox.stdout).find((n) => n.endsWith(`(${big.id})`))
  expect(folder, inbox.stdout).toBeDefined()
  const file = big.files[0]!
  const before = await service.controls.counters()
  // Quoted for bash: the folder's name holds spaces and parentheses.
  const url = nfsUrl(server.port, `/inbox/${folder}/${file.filename}`).replaceAll("'", "'\\''")
  const r = await run('bash', ['-o', 'pipefail', '-c', `nfs-cat '${url}' | md5sum`], { timeoutMs: 170_000 })
  expect(r.code, r.stderr).toBe(0)
  expect(r.stdout.split(' ')[0]).toBe(file.md5)
  const after = await service.controls.counters()
  for (const counted of ['bytesServed', 'bytesHashed'] as const) {
    const perByte = (after[counted] - before[counted]) / DEMO_LARGE_FILE_SIZE
    expect(perByte, counted).toBeGreaterThanOrEqual(1)
    expect(perByte, counted).toBeLessThanOrEqual(1.02)
  }
}, 180_000)
