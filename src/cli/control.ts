// The running mount's control socket, for commands that change what the mount does
// (`transferfs pin`, `unpin`, `free`): a Unix socket in the data folder (owner-only, like the
// folder), one JSON request per connection and one JSON answer. A socket rather than the
// extended attribute the same pin sets on the mount: a refused pin can then say how much more
// room it needs, where an attribute can only answer "No space left on device", and Node has no
// call to set one.
import { createConnection, createServer, type Server } from 'node:net'
import { createHash } from 'node:crypto'
import { chmod, unlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Logger } from '../fuse/log.js'

export const CONTROL_SOCKET = 'control.sock'
/** Bytes of a request at most: a few thousand paths. */
const MAX_REQUEST_BYTES = 1 << 20
/** ms a command waits for the mount's answer (a pin asks the service what it covers first). */
export const CONTROL_TIMEOUT_MS = 120_000

export type ControlOp = 'pin' | 'unpin' | 'free'

export interface ControlRequest {
  op: ControlOp
  /** Absolute paths on the mount. */
  paths: string[]
}

export interface ControlResult {
  path: string
  ok: boolean
  /** What happened, for the user: one line. */
  message: string
  /** errno's name when it failed (ENOSPC, ENOENT, EINVAL...). */
  code?: string
}

/** Bytes of a Unix socket's path at most (sun_path is 108 bytes with its terminating zero). */
const SOCKET_PATH_MAX = 107

/**
 * Where the mount of `dataDir` answers: in the data folder, or, when that path is too long for
 * a socket, in the user's runtime folder (owner-only) or the temporary folder, under a name
 * made from the data folder's path.
 */
export function controlSocketOf(dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const inData = path.join(dataDir, CONTROL_SOCKET)
  if (Buffer.byteLength(inData) <= SOCKET_PATH_MAX) return inData
  const id = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16)
  return path.join(env.XDG_RUNTIME_DIR || tmpdir(), `transferfs-${id}.sock`)
}

/** Whether a mount answers on the socket already (another mount of the same data folder). */
function answers(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection(file)
    c.once('connect', () => {
      c.destroy()
      resolve(true)
    })
    c.once('error', () => resolve(false))
  })
}

/**
 * Serves the control socket until closed. When another running mount of the same data folder
 * holds it, this mount has none (said in the log); a socket left by a mount that died is
 * replaced. A socket that cannot be made does not stop the mount: pins are still set with the
 * extended attribute, and the log says why the commands cannot reach it.
 */
export async function serveControl(dataDir: string, handle: (req: ControlRequest) => Promise<ControlResult[]>, log: Logger): Promise<{ close(): Promise<void> }> {
  const file = controlSocketOf(dataDir)
  if (await answers(file)) {
    log.warn(`another mount of this data folder answers on ${file}: pin, unpin and free go to it`)
    return { close: async () => undefined }
  }
  await unlink(file).catch(() => undefined)
  const server: Server = createServer((socket) => {
    let text = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      text += chunk
      if (text.length > MAX_REQUEST_BYTES) socket.destroy()
      const end = text.indexOf('\n')
      if (end < 0) return
      socket.pause()
      void answer(text.slice(0, end)).then((reply) => socket.end(JSON.stringify(reply) + '\n'))
    })
    socket.on('error', () => undefined)
  })
  const answer = async (line: string): Promise<ControlResult[] | { error: string }> => {
    try {
      const req = JSON.parse(line) as ControlRequest
      if (!['pin', 'unpin', 'free'].includes(req.op) || !Array.isArray(req.paths)) return { error: 'not a request this mount knows' }
      return await handle(req)
    } catch (e) {
      return { error: (e as Error).message }
    }
  }
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(file, () => resolve())
    })
    await chmod(file, 0o600)
  } catch (e) {
    server.close()
    log.warn(`no control socket at ${file} (${(e as Error).message}): transferfs pin, unpin and free cannot reach this mount; setfattr -n user.transferfs.pin still pins`)
    return { close: async () => undefined }
  }
  return {
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** The mount's answer to `req`, or an error saying no mount of this data folder runs. */
export async function askMount(dataDir: string, req: ControlRequest): Promise<ControlResult[]> {
  const file = controlSocketOf(dataDir)
  return new Promise((resolve, reject) => {
    const c = createConnection(file)
    let text = ''
    const timer = setTimeout(() => {
      c.destroy()
      reject(new Error(`the mount did not answer within ${CONTROL_TIMEOUT_MS / 1000} s`))
    }, CONTROL_TIMEOUT_MS)
    c.setEncoding('utf8')
    c.on('connect', () => c.write(JSON.stringify(req) + '\n'))
    c.on('data', (chunk: string) => { text += chunk })
    c.on('end', () => {
      clearTimeout(timer)
      try {
        const reply = JSON.parse(text) as ControlResult[] | { error: string }
        if (Array.isArray(reply)) resolve(reply)
        else reject(new Error(reply.error))
      } catch {
        reject(new Error('the mount gave no answer'))
      }
    })
    c.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') reject(new Error(`transferfs is not mounted with the data folder ${dataDir} (no mount answers on ${file})`))
      else reject(err)
    })
  })
}
