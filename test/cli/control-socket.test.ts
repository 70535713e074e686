// The mount's control socket, served and asked in this process (and through the real command
// line for what it prints): it lives in the data folder however long that folder's path, a
// data folder or socket that is not this user's alone is refused before anything is sent, a
// socket's answer is printed as text, and idle connections are capped and closed.
import { chmod, chown, mkdir, readdir, rm, stat } from 'node:fs/promises'
import { createConnection, createServer, type Server, type Socket } from 'node:net'
import path from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { CONTROL_SOCKET } from '../../src/cli/control-place.js'
import { askMount, MAX_CONTROL_CONNECTIONS, REQUEST_DEADLINE_MS, serveControl } from '../../src/cli/control.js'
import type { ControlRequest, ControlResult } from '../../src/pin/control.js'
import { silentLogger, type Logger } from '../../src/base/log.js'
import { cli } from '../mount/harness.js'
import { tempDir, unmountAll, waitFor } from '../support/mount.js'

/** A uid no one on this machine has: a folder or socket "of another user" for these tests. */
const STRANGER = 54_321
const isRoot = process.getuid?.() === 0

afterAll(unmountAll)

/** A fresh owner-only data folder; `depth` pads its path to that many bytes at least. */
async function dataFolder(depth = 0): Promise<string> {
  const base = await tempDir()
  const dir = depth > 0 ? path.join(base, 'd'.repeat(Math.max(1, depth - base.length - 1))) : path.join(base, 'data')
  await mkdir(dir, { recursive: true, mode: 0o700 })
  return dir
}

/** A mount's control socket answering each request with one result per path. */
function serve(dir: string, log: Logger = silentLogger, seen: ControlRequest[] = []): ReturnType<typeof serveControl> {
  return serveControl(dir, async (req) => {
    seen.push(req)
    return req.paths.map((p): ControlResult => ({ path: p, ok: true, message: `${req.op} ${p}` }))
  }, log)
}

/** A listener at file that records what it is sent and answers `reply`: someone else's socket. */
async function listener(file: string, reply: string): Promise<{ server: Server; received: string[] }> {
  const received: string[] = []
  const server = createServer((c) => {
    c.on('data', (d) => {
      received.push(String(d))
      c.end(reply)
    })
  })
  await new Promise<void>((resolve) => server.listen(file, resolve))
  return { server, received }
}

const closeServer = (s: Server): Promise<void> => new Promise((resolve) => s.close(() => resolve()))

describe('where the control socket is', () => {
  it('is control.sock in the data folder, and answers there even when the folder\'s path is too long for a socket address', async () => {
    for (const dir of [await dataFolder(), await dataFolder(150)]) {
      const control = await serve(dir)
      try {
        expect(await readdir(dir)).toContain(CONTROL_SOCKET)
        const st = await stat(path.join(dir, CONTROL_SOCKET))
        expect(st.isSocket()).toBe(true)
        expect(st.mode & 0o777).toBe(0o600)
        expect(await askMount(dir, { op: 'pin', paths: ['/m/a'] })).toEqual([{ path: '/m/a', ok: true, message: 'pin /m/a' }])
      } finally {
        await control.close()
      }
      // The mount's socket goes with it.
      expect(await readdir(dir)).not.toContain(CONTROL_SOCKET)
    }
  })
})

describe.skipIf(!isRoot)('a control socket that is not this user\'s alone', () => {
  it('is not asked: a data folder of another user, or one others may write in', async () => {
    for (const [make, says] of [
      [(dir: string) => chown(dir, STRANGER, STRANGER), /belongs to uid 54321, not to you/],
      [(dir: string) => chmod(dir, 0o777), /may be written by others \(mode 777\)/],
    ] as const) {
      const dir = await dataFolder()
      const other = await listener(path.join(dir, CONTROL_SOCKET), '[{"path":"/m/a","ok":true,"message":"pinned"}]\n')
      try {
        await make(dir)
        await expect(askMount(dir, { op: 'pin', paths: ['/m/a'] })).rejects.toThrow(says)
        expect(other.received).toEqual([])
      } finally {
        await closeServer(other.server)
      }
    }
  })

  it('is not asked: a socket of another user in the data folder', async () => {
    const dir = await dataFolder()
    const file = path.join(dir, CONTROL_SOCKET)
    const other = await listener(file, '[]\n')
    try {
      await chown(file, STRANGER, STRANGER)
      await expect(askMount(dir, { op: 'pin', paths: ['/m/a'] })).rejects.toThrow(/belongs to uid 54321, not to you.*refusing to talk to it/)
      expect(other.received).toEqual([])
    } finally {
      await closeServer(other.server)
    }
  })

  it('is not served: the mount says why in its log and makes no socket', async () => {
    const dir = await dataFolder()
    await chmod(dir, 0o777)
    const warnings: string[] = []
    const control = await serve(dir, { ...silentLogger, warn: (m) => warnings.push(m) })
    await control.close()
    expect(await readdir(dir)).toEqual([])
    expect(warnings.join('\n')).toMatch(/no control socket .*may be written by others/)
  })
})

describe('what a command prints of the socket\'s answer', () => {
  const saved = { ...process.env }
  afterEach(() => {
    process.env = { ...saved }
  })

  it('is text: escape sequences and newlines in a message or an error are shown escaped, not acted on', async () => {
    const dir = await dataFolder()
    const home = path.dirname(dir)
    Object.assign(process.env, { TRANSFERFS_DATA_DIR: dir, TRANSFERFS_CONFIG_DIR: path.join(home, 'config'), TRANSFERFS_CACHE_DIR: path.join(home, 'cache') })
    const forged = 'pinned \u001b]0;owned\u0007\u001b[2K1 GiB\ntransferfs: all fine\u009b'
    for (const [reply, stream] of [
      [JSON.stringify([{ path: '/m/a', ok: true, message: forged }]), 'stdout'],
      [JSON.stringify([{ path: '/m/a', ok: false, message: forged }]), 'stderr'],
      [JSON.stringify({ error: forged }), 'stderr'],
    ] as const) {
      const fake = await listener(path.join(dir, CONTROL_SOCKET), `${reply}\n`)
      try {
        const r = await cli(['pin', '/m/a'])
        const shown = r[stream]
        expect(shown, `${r.stdout}${r.stderr}`).toContain('pinned \\x1b]0;owned\\x07\\x1b[2K1 GiB\\ntransferfs: all fine\\x9b')
        expect(r.stdout + r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
        expect((r.stdout + r.stderr).split('\n').filter((l) => l.includes('all fine'))).toHaveLength(1)
      } finally {
        await closeServer(fake.server)
      }
    }
  }, 60_000)
})

describe('idle connections to the control socket', () => {
  it('are capped and closed after the request deadline; a command is still answered at once', async () => {
    const dir = await dataFolder()
    const control = await serve(dir)
    const idle: Socket[] = []
    let closed = 0
    try {
      for (let i = 0; i < 300; i++) {
        const c = createConnection(path.join(dir, CONTROL_SOCKET))
        c.on('error', () => undefined)
        c.on('close', () => closed++)
        idle.push(c)
      }
      // Past the cap, the oldest idle ones are closed at once for the newcomers.
      expect(await waitFor(() => closed >= 300 - MAX_CONTROL_CONNECTIONS, 3_000, 20), `${closed} closed`).toBe(true)
      const started = Date.now()
      expect(await askMount(dir, { op: 'unpin', paths: ['/m/a'] })).toHaveLength(1)
      expect(Date.now() - started).toBeLessThan(1_000)
      // The rest once their deadline passes.
      expect(await waitFor(() => closed === 300, REQUEST_DEADLINE_MS + 3_000, 50), `${closed} closed`).toBe(true)
    } finally {
      for (const c of idle) c.destroy()
      await control.close()
      await rm(dir, { recursive: true, force: true })
    }
  }, 30_000)
})
