// Arrivals through a real mount: a transfer sent to the account while someone looks at
// inbox/ shows in `ls inbox/` within the watched interval (10 s), found by the mount's
// small newer-than inbox call (the listing TTL is set far longer, so nothing else could
// show it), and `transferfs inbox --watch` prints it, as a line and as JSON.
import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run, TS_REGISTER, unmountAll, waitFor } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { CLI, login, mount, useAccount, type Account } from './harness.js'

/** ms: the README's "within 10 s" while someone looks at inbox/ (Desktop), and room for a slow machine. */
const WATCHED_WITHIN_MS = 10_000
const SLOW_MACHINE_MARGIN_MS = 8_000

let service: TestService
let account: Account
const children: ChildProcess[] = []

beforeAll(async () => {
  service = await startTestService()
  await service.controls.seedInbox(service.user.email, 2, { subjectPrefix: 'Earlier' })
  // No session bus: the mount stays silent (no notifications attempted).
  delete process.env.DBUS_SESSION_BUS_ADDRESS
  account = await useAccount(service, { TRANSFERFS_LISTING_TTL_MS: '10m' })
  await login(service)
  await mount(account)
})

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL')
  await unmountAll()
  await service?.close()
})

/** `transferfs inbox --watch ...` running; resolves once it has taken its starting point. */
async function watcher(extra: string[]): Promise<{ lines: string[]; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', TS_REGISTER, CLI, 'inbox', '--watch', '--interval', '1s', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  const lines: string[] = []
  let out = ''
  let err = ''
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString()
    const parts = out.split('\n')
    out = parts.pop()!
    lines.push(...parts)
  })
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()))
  if (!(await waitFor(() => err.includes('watching the inbox'), 30_000))) throw new Error(`the watch did not start: ${err}`)
  return { lines, child }
}

const ls = async (dir: string): Promise<string[]> => {
  const r = await run('ls', ['-1A', dir])
  expect(r.code).toBe(0)
  return r.stdout.split('\n').filter(Boolean)
}

describe('arrivals', () => {
  it('a new transfer shows in ls inbox/ within the interval while someone looks, and inbox --watch prints it', async () => {
    const inbox = path.join(account.mountDir, 'inbox')
    const plain = await watcher([])
    const json = await watcher(['--json'])
    expect(await ls(inbox)).toHaveLength(2) // someone looks at the inbox now

    const [id] = await service.controls.seedInbox(service.user.email, 1, { subjectPrefix: 'Arrival' })
    const arrivedAt = Date.now()
    let name: string | undefined
    const shown = await waitFor(async () => {
      name = (await ls(inbox)).find((n) => n.endsWith(`(${id})`))
      return name !== undefined
    }, WATCHED_WITHIN_MS + SLOW_MACHINE_MARGIN_MS, 250)
    const tookMs = Date.now() - arrivedAt
    expect(shown, 'the new transfer never showed in ls inbox/').toBe(true)
    expect(tookMs).toBeLessThan(WATCHED_WITHIN_MS + SLOW_MACHINE_MARGIN_MS)
    expect(name).toContain('Arrival')
    expect(await ls(path.join(inbox, name!))).toContain('.transfer.json')

    expect(await waitFor(() => plain.lines.some((l) => l.includes(`inbox/${name}`)), 20_000)).toBe(true)
    const line = plain.lines.find((l) => l.includes(`inbox/${name}`))!
    expect(line).toContain('Arrival')
    expect(line).toMatch(/1 file, /)
    expect(await waitFor(() => json.lines.length > 0, 20_000)).toBe(true)
    const printed = json.lines.map((l) => JSON.parse(l) as { id: string; folder: string; key?: unknown })
    expect(printed.map((p) => p.id)).toEqual([id])
    expect(printed[0]!.folder).toBe(`inbox/${name}`)
    expect(printed[0]!.key).toBeUndefined()
    expect(plain.lines).toHaveLength(1) // the two earlier transfers are not arrivals

    for (const w of [plain, json]) {
      const exited = new Promise<number | null>((resolve) => w.child.once('exit', (code) => resolve(code)))
      w.child.kill('SIGINT')
      expect(await exited).toBe(0)
    }
  })
})
