// The running mount's control socket, for commands that change what the mount does
// (`transferfs pin`, `unpin`, `free`): a Unix socket in the data folder (control-place.ts says
// where, and checks it is the owner's alone), one JSON request per connection and one JSON
// answer. Only the owner's own processes can connect, yet one of them gone wrong (or many at
// once) must not wear the mount down: a connection has a few seconds to send its request, and
// only so many wait at once. A socket rather than the extended attribute the same pin sets on
// the mount: a refused pin can then say how much more room it needs, where an attribute can
// only answer "No space left on device", and Node has no call to set one.
import { chmod, unlink } from 'node:fs/promises'
import { createConnection, createServer, type Server, type Socket } from 'node:net'
import type { Logger } from '../base/log.js'
import type { ControlRequest, ControlResult } from '../pin/control.js'
import { checkSocket, openControlPlace, type ControlPlace } from './control-place.js'

/** Bytes of a request at most: a few thousand paths. */
const MAX_REQUEST_BYTES = 1 << 20
/** ms a command waits for the mount's answer (a pin asks the service what it covers first). */
export const CONTROL_TIMEOUT_MS = 120_000
/** ms a connection has to send its whole request (a command sends it at once) before it is closed. */
export const REQUEST_DEADLINE_MS = 5_000
/** Connections at once; past it the oldest still waiting for its request is closed for the newcomer. */
export const MAX_CONTROL_CONNECTIONS = 64

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
 * replaced. A socket that cannot be made, or a data folder that is not the owner's alone, does
 * not stop the mount: pins are still set with the extended attribute, and the log says why the
 * commands cannot reach it.
 */
export async function serveControl(dataDir: string, handle: (req: ControlRequest) => Promise<ControlResult[]>, log: Logger): Promise<{ close(): Promise<void> }> {
  const none = { close: async () => undefined }
  const unreachable = (file: string, why: string): void => {
    log.warn(`no control socket at ${file} (${why}): transferfs pin, unpin and free cannot reach this mount; setfattr -n user.transferfs.pin still pins`)
  }
  let place: ControlPlace
  try {
    place = await openControlPlace(dataDir)
  } catch (e) {
    unreachable(dataDir, (e as Error).message)
    return none
  }
  if (await answers(place.address)) {
    log.warn(`another mount of this data folder answers on ${place.file}: pin, unpin and free go to it`)
    await place.close()
    return none
  }
  await unlink(place.address).catch(() => undefined)
  const answer = async (line: string): Promise<ControlResult[] | { error: string }> => {
    try {
      const req = JSON.parse(line) as ControlRequest
      if (!['pin', 'unpin', 'free'].includes(req.op) || !Array.isArray(req.paths) || !req.paths.every((p) => typeof p === 'string')) return { error: 'not a request this mount knows' }
      return await handle(req)
    } catch (e) {
      return { error: (e as Error).message }
    }
  }
  const gate = new ConnectionGate()
  const server: Server = createServer((socket) => {
    if (!gate.admit(socket)) return
    let text = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      text += chunk
      if (text.length > MAX_REQUEST_BYTES) return void socket.destroy()
      const end = text.indexOf('\n')
      if (end < 0) return
      socket.pause()
      socket.removeAllListeners('data')
      gate.answering(socket)
      void answer(text.slice(0, end)).then((reply) => socket.end(JSON.stringify(reply) + '\n')).finally(() => gate.answered(socket))
    })
    socket.on('error', () => undefined)
  })
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(place.address, () => resolve())
    })
    await chmod(place.address, 0o600)
    // Checked again once bound: the folder still the owner's alone, the socket the one we made.
    await place.checkFolder()
    await checkSocket(place)
  } catch (e) {
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await place.close()
    unreachable(place.file, (e as Error).message)
    return none
  }
  return {
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      gate.closeAll()
      await closed
      await place.close()
    },
  }
}

/**
 * Which connections the server keeps: each has REQUEST_DEADLINE_MS to send its request, and
 * at most MAX_CONTROL_CONNECTIONS are open at once. A newcomer past that closes the oldest
 * still waiting for its request (a command sends its own at once, so an idle one is the
 * likeliest stray), or, when every one is being answered, is itself closed at once.
 */
class ConnectionGate {
  /** Connections yet to send their request, oldest first, with their deadline. */
  private waiting = new Map<Socket, NodeJS.Timeout>()
  private busy = new Set<Socket>()

  admit(socket: Socket): boolean {
    if (this.waiting.size + this.busy.size >= MAX_CONTROL_CONNECTIONS) {
      const oldest = this.waiting.keys().next()
      if (oldest.done) {
        socket.destroy()
        return false
      }
      this.drop(oldest.value)
    }
    this.waiting.set(socket, setTimeout(() => this.drop(socket), REQUEST_DEADLINE_MS))
    socket.once('close', () => this.forget(socket))
    return true
  }

  /** The request is in: no deadline while the mount works on it (a pin asks the service first). */
  answering(socket: Socket): void {
    clearTimeout(this.waiting.get(socket))
    this.waiting.delete(socket)
    this.busy.add(socket)
  }

  /** The answer is written: the client has REQUEST_DEADLINE_MS more to read it and hang up. */
  answered(socket: Socket): void {
    if (!this.busy.has(socket)) return
    this.busy.delete(socket)
    if (!socket.destroyed) this.waiting.set(socket, setTimeout(() => this.drop(socket), REQUEST_DEADLINE_MS))
  }

  closeAll(): void {
    for (const socket of [...this.waiting.keys()]) this.drop(socket)
  }

  private drop(socket: Socket): void {
    this.forget(socket)
    socket.destroy()
  }

  private forget(socket: Socket): void {
    clearTimeout(this.waiting.get(socket))
    this.waiting.delete(socket)
    this.busy.delete(socket)
  }
}

/**
 * The mount's answer to `req`, or an error saying no mount of this data folder runs. The data
 * folder and the socket are checked to be this user's first: the request names paths on the
 * mount, and the answer is printed. Messages in an error are the mount's text, shown escaped.
 */
export async function askMount(dataDir: string, req: ControlRequest): Promise<ControlResult[]> {
  const notMounted = (file: string): Error => new Error(`transferfs is not mounted with the data folder ${dataDir} (no mount answers on ${file})`)
  let place: ControlPlace
  try {
    place = await openControlPlace(dataDir)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw notMounted(dataDir)
    throw e
  }
  try {
    await checkSocket(place).catch((e: NodeJS.ErrnoException) => {
      throw e.code === 'ENOENT' ? notMounted(place.file) : e
    })
    return await exchange(place, req, () => notMounted(place.file))
  } finally {
    await place.close()
  }
}

function exchange(place: ControlPlace, req: ControlRequest, notMounted: () => Error): Promise<ControlResult[]> {
  return new Promise((resolve, reject) => {
    const c = createConnection(place.address)
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
      const reply = parseReply(text)
      if (reply instanceof Error) reject(reply)
      else resolve(reply)
    })
    c.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') reject(notMounted())
      else reject(err)
    })
  })
}

/** The mount's answer as results, or the error it gave: only the shapes a mount sends. */
function parseReply(text: string): ControlResult[] | Error {
  let reply: unknown
  try {
    reply = JSON.parse(text)
  } catch {
    return new Error('the mount gave no answer')
  }
  if (Array.isArray(reply) && reply.every(isResult)) return reply
  if (reply && typeof reply === 'object' && typeof (reply as { error?: unknown }).error === 'string') {
    // Shown as text where every error is: reportError escapes the whole message once.
    return new Error(`the mount says: ${(reply as { error: string }).error}`)
  }
  return new Error('the mount gave an answer this command does not know')
}

function isResult(r: unknown): r is ControlResult {
  const o = r as Partial<ControlResult> | null
  return !!o && typeof o === 'object' && typeof o.path === 'string' && typeof o.ok === 'boolean' && typeof o.message === 'string' && (o.code === undefined || typeof o.code === 'string')
}
