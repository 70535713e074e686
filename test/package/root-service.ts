// The local Transfer Service run inside a Debian root by the package's own command
// (`transferfs serve --demo --controls`, as a user would try it), and its test controls
// (docs/local-service.md) reached from this machine: the root shares this machine's network,
// and its certificate authority is a file in the root.
import { readFile } from 'node:fs/promises'
import { Agent, request } from 'undici'
import type { ServiceAnnouncement } from '../../src/api/types.js'
import type { DebianRoot } from './debian-root.js'

export interface RootService {
  announcement: ServiceAnnouncement
  /** What it wrote to stderr (the end of it). */
  log(): string
  /** A test control of the service, answered with 200 and JSON, or an error with its log. */
  control<T>(method: 'GET' | 'POST' | 'DELETE', route: string, body?: unknown): Promise<T>
  close(): Promise<void>
}

/** Starts command (argv in the root; it prints the announcement first) as user; resolves with it announced. */
export async function startRootService(root: DebianRoot, command: string[], user: string, timeoutMs = 180_000): Promise<RootService> {
  const child = root.start(command, { user })
  let stderr = ''
  child.stderr!.on('data', (b: Buffer) => { stderr = (stderr + b.toString()).slice(-20_000) })
  const line = await new Promise<string>((resolve, reject) => {
    let stdout = ''
    const timer = setTimeout(() => reject(new Error(`${command.join(' ')} printed no announcement within ${timeoutMs / 1000} s:\n${stderr}`)), timeoutMs)
    child.stdout!.on('data', (b: Buffer) => {
      stdout += b.toString()
      const nl = stdout.indexOf('\n')
      if (nl >= 0) {
        clearTimeout(timer)
        resolve(stdout.slice(0, nl))
      }
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      reject(new Error(`${command.join(' ')} ended (exit ${code}) before its announcement:\n${stderr}`))
    })
  })
  const announcement = JSON.parse(line) as ServiceAnnouncement
  const dispatcher = new Agent({ connect: { ca: await readFile(root.host(announcement.ca), 'utf8') } })
  const origin = new URL(announcement.baseUrl).origin
  return {
    announcement,
    log: () => stderr,
    async control<T>(method: 'GET' | 'POST' | 'DELETE', route: string, body?: unknown): Promise<T> {
      const res = await request(`${origin}/_emulator${route}`, {
        method,
        dispatcher,
        headers: { 'x-api-key': announcement.apiKey, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      })
      const text = await res.body.text()
      if (res.statusCode !== 200) throw new Error(`test control ${method} ${route} answered ${res.statusCode}: ${text}\n--- the service's log (end) ---\n${stderr.slice(-4000)}`)
      return JSON.parse(text) as T
    },
    // The process itself ends with the root (close() of the root kills everything in it).
    close: () => dispatcher.close(),
  }
}
