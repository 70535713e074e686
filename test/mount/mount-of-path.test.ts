// `transferfs pin`, `unpin`, `free` and `status` reach the mount the path they are given is on,
// whatever data folder that mount was started with (as the demo keeps its own): the command's
// own data folder here is another one, with no mount. A path on no transferfs mount still goes
// to the configured data folder's mount, and says so.
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run, TS_REGISTER, unmountAll, waitFor } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { cli, CLI, login, mount, transferFolder, useAccount, type Account } from './harness.js'
import { made, state, type Made } from './pinning.js'

describe('commands reach the mount their path is on', () => {
  let service: TestService
  let account: Account
  let pinned: Made
  const saved = { ...process.env }

  beforeAll(async () => {
    service = await startTestService()
    pinned = await made(service, 'Elsewhere', [{ name: 'a.bin', size: 256 * 1024 }])
    account = await useAccount(service)
    await login(service)
    await mount(account)
    // From here the commands' data folder is another one (empty, its owner's): no mount uses it.
    const other = path.join(account.home, 'other-data')
    await mkdir(other, { recursive: true, mode: 0o700 })
    process.env.TRANSFERFS_DATA_DIR = other
  }, 120_000)

  afterAll(async () => {
    await unmountAll()
    await service?.close()
    process.env = { ...saved }
  })

  it('transferfs pin and unpin of a path on the mount reach it without --data-dir', async () => {
    const dir = await transferFolder(account.mountDir, pinned.id)
    const r = await cli(['pin', dir])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^pinned inbox\/.*Elsewhere/)
    expect(await waitFor(async () => (await state(dir)) === 'pinned', 30_000, 250), await state(dir)).toBe(true)
    const free = await cli(['free', path.join(dir, 'a.bin')])
    expect(free.code, free.stderr).toBe(0)
    const unpin = await cli(['unpin', dir])
    expect(unpin.code, unpin.stderr).toBe(0)
    expect(unpin.stdout).toMatch(/^unpinned inbox\//)
  }, 60_000)

  it('transferfs status PATH, or run inside the mount, reports that mount', async () => {
    const withPath = await cli(['status', '--json', path.join(account.mountDir, 'inbox')])
    expect(withPath.code, withPath.stderr).toBe(0)
    expect((JSON.parse(withPath.stdout) as { mounted: boolean }).mounted).toBe(true)
    const inside = await run(process.execPath, ['--import', TS_REGISTER, CLI, 'status', '--json'], { cwd: path.join(account.mountDir, 'inbox'), timeoutMs: 60_000 })
    expect(inside.code, inside.stderr).toBe(0)
    expect((JSON.parse(inside.stdout) as { mounted: boolean }).mounted).toBe(true)
    // A --data-dir on the command line is the user's choice: it wins over the folder run in.
    const chosen = await run(process.execPath, ['--import', TS_REGISTER, CLI, 'status', '--json', '--data-dir', process.env.TRANSFERFS_DATA_DIR!], { cwd: path.join(account.mountDir, 'inbox'), timeoutMs: 60_000 })
    expect(chosen.code, chosen.stderr).toBe(0)
    expect((JSON.parse(chosen.stdout) as { mounted: boolean }).mounted).toBe(false)
  }, 60_000)

  it('a path on no transferfs mount goes to the configured data folder, and the command says so', async () => {
    const r = await cli(['pin', account.home])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain(`${account.home} is not on a transferfs mount: using the data folder ${process.env.TRANSFERFS_DATA_DIR}`)
    expect(r.stderr).toContain('transferfs is not mounted with the data folder')
    const s = await cli(['status', '--json', account.home])
    expect(s.code, s.stderr).toBe(0)
    expect((JSON.parse(s.stdout) as { mounted: boolean }).mounted).toBe(false)
    expect(s.stderr).toContain('is not on a transferfs mount')
  }, 60_000)
})
