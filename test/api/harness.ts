// What the client's service tests share: a real local service (test/support/service.ts),
// its documented test controls spoken over plain HTTPS (docs/local-service.md), and
// clients configured for it.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Pool } from 'undici'
import { startTestService } from '../support/service.js'
import { TransferClient } from '../../src/api/client.js'
import type { ClientOptionsInput } from '../../src/api/options.js'

export type Service = Awaited<ReturnType<typeof startTestService>>

export interface Harness {
  service: Service
  baseUrl: string
  apiKey: string
  ca: string
  user: { email: string; password: string }
  dir: string
  /** A client of this service; closed by close(). */
  client(options?: Partial<ClientOptionsInput>): TransferClient
  control<T = unknown>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T>
  counters(): Promise<{ routes: Record<string, number>; bytesServed: number; refreshCalls: number; fileConnections: number; openFileConnections: number; inFlight: number }>
  close(): Promise<void>
}

export async function startHarness(): Promise<Harness> {
  const service = await startTestService()
  const ca = service.caPem
  const dir = await mkdtemp(join(tmpdir(), 'tfs-api-'))
  const origin = new URL(service.baseUrl).origin
  const controls = new Pool(origin, { connect: { ca } })
  const clients: TransferClient[] = []
  let n = 0
  const control = async <T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> => {
    const res = await controls.request({
      path: `/_emulator${path}`,
      method,
      headers: { 'x-api-key': service.apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.body.text()
    if (res.statusCode >= 300) throw new Error(`control ${method} ${path}: HTTP ${res.statusCode} ${text}`)
    if (!text) return undefined as T
    const parsed = JSON.parse(text) as unknown
    // The controls may answer bare JSON or an envelope; take the payload either way.
    if (parsed && typeof parsed === 'object' && 'responsestatus' in parsed && 'data' in parsed) return (parsed as { data: T }).data
    return parsed as T
  }
  return {
    service,
    baseUrl: service.baseUrl,
    apiKey: service.apiKey,
    ca,
    user: service.user,
    dir,
    client(options = {}) {
      const c = new TransferClient({
        apiUrl: service.baseUrl,
        apiKey: service.apiKey,
        ca,
        tokenFile: join(dir, `session-${++n}.json`),
        ...options,
      })
      clients.push(c)
      return c
    },
    control,
    counters: () => control('GET', '/counters'),
    async close() {
      await Promise.allSettled(clients.map((c) => c.close()))
      await controls.close()
      await service.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/** A new account on the service, for tests that must not share state. */
export async function newUser(h: Harness, extra: Record<string, unknown> = {}): Promise<{ email: string; password: string }> {
  const email = `u${Date.now()}${Math.floor(Math.random() * 1e6)}@example.com`
  const password = 'pw-' + Math.random().toString(36).slice(2)
  await h.control('POST', '/users', { email, password, ...extra })
  return { email, password }
}
