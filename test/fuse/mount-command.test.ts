// The mount command's life with the real service: sign-in required, background start
// and `transferfs unmount`, SIGKILL then a new mount of the same folder, logout.
import { readdir } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EXIT } from '../../src/cli/output/exit-codes.js'
import { autoUnmountHelpers, DEAD_MOUNT, isMounted, run, undoMountsAt, unmountAll, useMounts, waitFor, waitForExit } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { cli, login, mount, useAccount, type Account } from '../mount/harness.js'
import path from 'node:path'

let service: TestService
let ids: string[]

useMounts()

beforeAll(async () => {
  service = await startTestService()
  ids = await service.controls.seedInbox(service.user.email, 3, { subjectPrefix: 'Lifecycle' })
})

afterAll(async () => {
  await unmountAll()
  await service?.close()
})

const inboxOf = async (a: Account) => (await readdir(path.join(a.mountDir, 'inbox'))).sort()

describe('transferfs mount', () => {
  it('refuses to mount without a session, and says so', async () => {
    const a = await useAccount(service)
    const r = await cli(['mount', a.mountDir, '--foreground'])
    expect(r.code).toBe(EXIT.auth)
    expect(r.stderr).toMatch(/not signed in.*transferfs login/)
    expect(await isMounted(a.mountDir)).toBe(false)
  })

  it('mounts in the background, and `transferfs unmount` ends the daemon', async () => {
    const a = await useAccount(service)
    await login(service)
    const r = await cli(['mount', a.mountDir])
    let pid = 0
    try {
      expect(r.code, r.stderr).toBe(0)
      pid = Number(/process (\d+)/.exec(r.stdout)?.[1])
      expect(pid).toBeGreaterThan(0)
      const names = await inboxOf(a)
      expect(names.length).toBe(3)
      for (const id of ids) expect(names.some((n) => n.endsWith(`(${id})`))).toBe(true)

      const u = await cli(['unmount', a.mountDir])
      expect(u.code, u.stderr).toBe(0)
      expect(await isMounted(a.mountDir)).toBe(false)
      expect(await waitForExit(pid, 15_000)).toBe(true)
    } finally {
      // Unmounted, aborted if it does not go, then the daemon's group killed.
      await undoMountsAt(a.mountDir)
    }
  })

  it('after a SIGKILL of the daemon, mounting the same folder again works', async () => {
    const a = await useAccount(service)
    await login(service)
    const first = await mount(a)
    expect((await inboxOf(a)).length).toBe(3)
    process.kill(first, 'SIGKILL')
    expect(await waitForExit(first)).toBe(true)

    const second = await mount(a)
    expect(second).not.toBe(first)
    expect((await inboxOf(a)).length).toBe(3)
  })

  it('a mount whose process died is cleaned up by `transferfs unmount`', async () => {
    const a = await useAccount(service)
    await login(service)
    const pid = await mount(a)
    // Kill the auto-unmount helper too, so the dead mount stays behind.
    for (const h of await autoUnmountHelpers(a.mountDir)) process.kill(h, 'SIGKILL')
    process.kill(pid, 'SIGKILL')
    await waitForExit(pid)
    const stale = await run('ls', [a.mountDir])
    expect(stale.stderr).toMatch(DEAD_MOUNT)
    const u = await cli(['unmount', a.mountDir])
    expect(u.code, u.stderr).toBe(0)
    expect(await waitFor(async () => !(await isMounted(a.mountDir)), 5000)).toBe(true)
  })

  it('a mount whose process died is cleaned up by the next mount of the same folder', async () => {
    const a = await useAccount(service)
    await login(service)
    const pid = await mount(a)
    for (const h of await autoUnmountHelpers(a.mountDir)) process.kill(h, 'SIGKILL')
    process.kill(pid, 'SIGKILL')
    await waitForExit(pid)
    // A dead FUSE connection answers ENOTCONN, or ECONNABORTED while the kernel is still tearing it down.
    expect((await run('ls', [a.mountDir])).stderr).toMatch(DEAD_MOUNT)

    const again = await mount(a)
    expect(again).not.toBe(pid)
    expect((await inboxOf(a)).length).toBe(3)
  })

  it('logout forgets the session: the next mount refuses', async () => {
    const a = await useAccount(service)
    await login(service)
    const out = await cli(['logout'])
    expect(out.code, out.stderr).toBe(0)
    expect(out.stdout).toContain('signed out')
    const r = await cli(['mount', a.mountDir, '--foreground'])
    expect(r.code).toBe(EXIT.auth)
    expect(r.stderr).toMatch(/not signed in/)
  })
})
