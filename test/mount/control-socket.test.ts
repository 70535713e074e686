// The mount's control socket is its owner's alone, through a real mount. Another local user
// (the suite's normal user) listens first where a socket would go in the shared temporary
// folder, for a data folder whose path is too long for a socket address and no
// $XDG_RUNTIME_DIR (as under fstab, cron or ssh without a session): the mount serves its own
// socket all the same, `transferfs pin` pins for real, and the other user hears nothing. And
// thousands of idle connections to the socket are closed, the mount's descriptors stay
// bounded, and a command is still answered.
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readdir, readFile, readlink, rm, stat } from 'node:fs/promises'
import { createConnection, type Socket } from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONTROL_SOCKET } from '../../src/cli/control-place.js'
import { MAX_CONTROL_CONNECTIONS, REQUEST_DEADLINE_MS } from '../../src/cli/control.js'
import { unmountAll, waitFor } from '../support/mount.js'
import { ensureNormalUser, normalUserSkipReason, removeUserFolders, runAs, userFolder, type NormalUser } from '../../scripts/support/normal-user.js'
import { startTestService, type TestService } from '../support/service.js'
import { cli, login, mount, transferFolder, useAccount, type Account } from './harness.js'
import { made, state, type Made } from './pinning.js'

const MiB = 1024 * 1024
const saved = { ...process.env }
let service: TestService

beforeAll(async () => {
  service = await startTestService()
}, 60_000)

afterAll(async () => {
  await unmountAll()
  await removeUserFolders()
  await service?.close()
  process.env = { ...saved }
})

/**
 * Listens on each path given after the log file, as whoever runs it: every request is added
 * to the log, and answered with a forged pin. Writes `ready` next to the log once listening.
 */
const SQUATTER = `
const net = require('node:net'), fs = require('node:fs'), path = require('node:path')
const [log, ...files] = process.argv.slice(1)
let left = files.length
for (const file of files) {
  net.createServer((c) => c.on('data', (d) => {
    fs.appendFileSync(log, String(d))
    c.end(JSON.stringify([{ path: '/', ok: true, message: 'pinned \\u001b]0;owned\\u0007everything: 1 files, 1 GiB' }]) + '\\n')
  })).listen(file, () => {
    fs.chmodSync(file, 0o777)
    if (--left === 0) fs.writeFileSync(path.join(path.dirname(log), 'ready'), '')
  })
}
setTimeout(() => {}, 1 << 30)
`

const skip = normalUserSkipReason()

describe.skipIf(skip !== null)('another user listening first in the temporary folder', () => {
  let other: NormalUser
  let account: Account
  let pinned: Made
  let squatDir = ''
  let squatLog = ''
  /** What the squatter made in the shared folder, removed afterwards. */
  const squatted: string[] = []

  beforeAll(async () => {
    other = await ensureNormalUser()
    pinned = await made(service, 'Squatted pin', [{ name: 'a.bin', size: 2 * MiB }])
    account = await useAccount(service)
    // A data folder past a socket address's 108 bytes, no runtime folder, the system's /tmp.
    const dataDir = path.join(account.home, 'data-'.padEnd(110, 'd'))
    process.env.TRANSFERFS_DATA_DIR = dataDir
    delete process.env.XDG_RUNTIME_DIR
    delete process.env.TMPDIR
    await login(service)

    // The names such a mount could use there: one made from the data folder's path, and a
    // folder named after the owner's uid.
    const hashed = `/tmp/transferfs-${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}.sock`
    const perUser = `/tmp/transferfs-${process.getuid!()}`
    const files = [hashed]
    squatted.push(hashed)
    if (!existsSync(perUser)) {
      squatted.push(perUser)
      const madeDir = await runAs(other, 'mkdir', ['-m', '0777', perUser], { timeoutMs: 10_000 })
      if (madeDir.code !== 0) throw new Error(`mkdir ${perUser}: ${madeDir.stderr}`)
      files.push(path.join(perUser, CONTROL_SOCKET), path.join(perUser, path.basename(hashed)))
    }
    squatDir = await userFolder(other)
    squatLog = path.join(squatDir, 'heard.log')
    void runAs(other, process.execPath, ['-e', SQUATTER, squatLog, ...files], { timeoutMs: 300_000 })
    if (!(await waitFor(() => existsSync(path.join(squatDir, 'ready')), 20_000))) throw new Error('the squatter did not start listening')

    await mount(account)
  }, 180_000)

  afterAll(async () => {
    await unmountAll()
    await removeUserFolders()
    for (const p of squatted) await rm(p, { recursive: true, force: true })
    process.env = { ...saved }
  })

  it('is not the mount\'s socket: `transferfs pin` pins for real, and the other user hears nothing', async () => {
    const dir = await transferFolder(account.mountDir, pinned.id)
    const r = await cli(['pin', dir])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^pinned inbox\/.*Squatted pin.*: 1 files, 2 MiB/)
    expect(r.stdout).not.toMatch(/1 GiB|owned/)
    expect(await waitFor(async () => (await state(dir)) === 'pinned', 60_000, 250), await state(dir)).toBe(true)
    expect(await readFile(squatLog, 'utf8').catch(() => '')).toBe('')
    // The mount's socket is in its data folder, its owner's.
    const sock = await stat(path.join(process.env.TRANSFERFS_DATA_DIR!, CONTROL_SOCKET)).catch(() => null)
    expect(sock?.isSocket()).toBe(true)
    expect(sock?.uid).toBe(process.getuid!())
  }, 120_000)
})

/** The mount process's open sockets. */
async function socketsOf(pid: number): Promise<number> {
  let n = 0
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')).startsWith('socket:')) n++
  }
  return n
}

async function rssOf(pid: number): Promise<number> {
  return Number(/^VmRSS:\s+(\d+)/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024
}

/** Opens n connections to file, 200 at a time, that send nothing; resolves once each is open or closed. */
async function idleConnections(file: string, n: number, closed: { count: number }): Promise<Socket[]> {
  const all: Socket[] = []
  for (let i = 0; i < n; i += 200) {
    await Promise.all(Array.from({ length: Math.min(200, n - i) }, () => new Promise<void>((resolve) => {
      const c = createConnection(file)
      all.push(c)
      c.once('connect', () => resolve())
      c.once('error', () => resolve())
      c.once('close', () => {
        closed.count++
        resolve()
      })
    })))
  }
  return all
}

describe('thousands of idle connections to the control socket', () => {
  let account: Account
  let pid: number
  let pinned: Made

  beforeAll(async () => {
    pinned = await made(service, 'Flooded pin', [{ name: 'b.bin', size: MiB }])
    account = await useAccount(service)
    await login(service)
    pid = await mount(account)
  }, 180_000)

  afterAll(async () => {
    await unmountAll()
    process.env = { ...saved }
  })

  it('are closed by the cap and the deadline; the mount\'s sockets stay bounded and a pin is answered', async () => {
    const N = 3000
    const before = { sockets: await socketsOf(pid), rss: await rssOf(pid) }
    const closed = { count: 0 }
    const idle = await idleConnections(path.join(account.home, 'data', CONTROL_SOCKET), N, closed)
    try {
      const during = { sockets: await socketsOf(pid), rss: await rssOf(pid) }
      // Held open by the test, yet the mount keeps no more than the cap of them.
      expect(during.sockets - before.sockets, JSON.stringify({ before, during })).toBeLessThanOrEqual(MAX_CONTROL_CONNECTIONS + 8)
      // The mount closes what is over the cap as it accepts, so under load the last closes may
      // still be on their way when the last connect lands: waited for, for less than the deadline.
      expect(await waitFor(() => closed.count >= N - MAX_CONTROL_CONNECTIONS, 2_000, 50), `${closed.count} of ${N} closed`).toBe(true)
      const started = Date.now()
      const r = await cli(['pin', await transferFolder(account.mountDir, pinned.id)])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toMatch(/pinned inbox\/.*Flooded pin.*: 1 files/)
      const pinMs = Date.now() - started
      // The rest are closed once their deadline passes.
      expect(await waitFor(() => closed.count === N, REQUEST_DEADLINE_MS + 5_000, 100), `${closed.count} of ${N} closed`).toBe(true)
      const after = { sockets: await socketsOf(pid), rss: await rssOf(pid) }
      expect(after.sockets).toBeLessThanOrEqual(before.sockets + 8)
      console.log(`control socket flood: ${JSON.stringify({ before, during, after, pinMs })}`)
    } finally {
      for (const c of idle) c.destroy()
    }
  }, 120_000)
})
