// Two ways a new user goes wrong, each answered with what to do: mounting on a folder
// that holds something, and a service whose certificate this machine does not trust.
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isMounted, tempDir, unmountAll } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { cli, login, useAccount } from './harness.js'

let service: TestService

beforeAll(async () => {
  service = await startTestService()
  await useAccount(service)
  await login(service)
})

afterAll(async () => {
  await unmountAll()
  await service?.close()
})

describe('rough edges', () => {
  it('mounting on a folder that is not empty says so and how to go on, and mounts nothing', async () => {
    const dir = path.join(await tempDir(), 'full')
    await mkdir(dir)
    await writeFile(path.join(dir, 'notes.txt'), 'mine\n')
    const r = await cli(['mount', dir])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/not empty/)
    expect(r.stderr).toMatch(/empty folder/)
    expect(r.stderr).not.toMatch(/fuse failed/)
    expect(await isMounted(dir)).toBe(false)
  })

  it('a certificate this machine does not trust gets a hint naming --ca and TRANSFERFS_CA (exit 5)', async () => {
    const saved = process.env.TRANSFERFS_CA
    delete process.env.TRANSFERFS_CA
    try {
      const r = await cli(['inbox'])
      expect(r.code).toBe(5)
      expect(r.stderr).toMatch(/--ca/)
      expect(r.stderr).toMatch(/TRANSFERFS_CA/)
    } finally {
      process.env.TRANSFERFS_CA = saved
    }
  })
})
