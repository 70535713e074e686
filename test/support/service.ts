// Starts the local Transfer Service in-process for a test, with a typed client of its test controls.
// Every test that needs the service uses this; close() it in afterAll/afterEach.
import { readFileSync } from 'node:fs'
import { Agent, request } from 'undici'
import type { ServiceAnnouncement, TransferState } from '../../src/api/types.js'
import type { Counters as ServiceCounters, FaultSpec, RouteName, Throttle } from '../../src/emulator/faults.js'
import { startService, type ServiceOptions } from '../../src/emulator/index.js'
import { withoutProxyVariables } from '../../scripts/tinyproxy.js'
import type { NewUser as EmulatorNewUser } from '../../src/emulator/store.js'

export type { FaultSpec, RouteName } from '../../src/emulator/faults.js'

// The commands and mounts the tests start inherit this environment; the proxy a developer's
// desktop is set up for cannot reach the service on this machine. Tests of proxies set their own.
const kept = withoutProxyVariables(process.env)
for (const name of Object.keys(process.env)) if (!(name in kept)) delete process.env[name]

export interface MailEntry {
  kind: 'recipient' | 'confirmation' | 'forward' | 'download-first' | 'download-summary'
  to: string
  subject: string
  link: string | null
  transferid: string
  at: number
}

/** The body of POST /_emulator/users (docs/local-service.md). */
export type NewUser = EmulatorNewUser

/** The service's counters, with the routes it names. */
export type Counters = Omit<ServiceCounters, 'routes'> & { routes: Partial<Record<RouteName, number>> }

export interface ServiceControls {
  mail(): Promise<MailEntry[]>
  advanceClock(ms: number): Promise<void>
  setStatus(transferId: string, status: TransferState): Promise<void>
  setCaptcha(transferId: string, captcha: string): Promise<void>
  /** Lets anyone signed in forward the transfer (the interface's `allowforwarding`). */
  setAllowForwarding(transferId: string, allow: boolean): Promise<void>
  createUser(user: NewUser): Promise<{ id: string; email: string }>
  /**
   * `count` complete transfers received by `to` (sent by `from`, when given), `files` small files
   * each (1), named `<fileStem>-<n>[-<m>].txt` (`fileStem` "file"); ids oldest first.
   */
  seedInbox(to: string, count: number, options?: { subjectPrefix?: string; portalId?: string; files?: number; fileStem?: string; from?: string }): Promise<string[]>
  /** Creates or updates a portal (seedInbox with a portalId creates it too). */
  setPortal(portalId: string, portal: { friendlyName?: string; deleted?: boolean }): Promise<void>
  counters(): Promise<Counters>
  resetCounters(): Promise<void>
  fault(spec: FaultSpec): Promise<void>
  clearFaults(): Promise<void>
  throttle(t: Throttle): Promise<void>
}

export interface TestService extends Omit<ServiceAnnouncement, 'controls'> {
  /** The announcement as `transferfs serve` prints it (for client configuration). */
  announcement: ServiceAnnouncement
  controls: ServiceControls
  /** An undici dispatcher that trusts the service's certificate. */
  dispatcher: Agent
  /** The certificate PEM (the content of `ca`). */
  caPem: string
  close(): Promise<void>
  /** An outage: the service stops listening (connections refused) and keeps its state until resume(). */
  pause(): Promise<void>
  resume(): Promise<void>
}

/** ms: the service's close (its connections cut, its file-hash workers ended). */
const CLOSE_DEADLINE_MS = 20_000

export async function startTestService(options: Omit<ServiceOptions, 'controls'> = {}): Promise<TestService> {
  const service = await startService({ ...options, controls: true })
  const caPem = readFileSync(service.ca, 'utf8')
  const dispatcher = new Agent({ connect: { ca: caPem } })
  const origin = new URL(service.baseUrl).origin

  async function call<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
    const res = await request(`${origin}/_emulator${path}`, {
      method,
      dispatcher,
      headers: { 'x-api-key': service.apiKey, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    })
    const text = await res.body.text()
    if (res.statusCode !== 200) throw new Error(`test control ${method} ${path} answered ${res.statusCode}: ${text}`)
    return JSON.parse(text) as T
  }

  const controls: ServiceControls = {
    mail: () => call('GET', '/mail'),
    advanceClock: async (ms) => { await call('POST', '/clock', { advanceMs: ms }) },
    setStatus: async (id, status) => { await call('POST', `/transfers/${encodeURIComponent(id)}/status`, { status }) },
    setCaptcha: async (id, captcha) => { await call('POST', `/transfers/${encodeURIComponent(id)}/captcha`, { captcha }) },
    setAllowForwarding: async (id, allow) => { await call('POST', `/transfers/${encodeURIComponent(id)}/allowforwarding`, { allow }) },
    createUser: (user) => call('POST', '/users', user),
    seedInbox: async (to, count, opts = {}) =>
      (await call<{ transferids: string[] }>('POST', '/inbox/seed', { to, count, ...opts })).transferids,
    setPortal: async (portalId, portal) => { await call('POST', `/portals/${encodeURIComponent(portalId)}`, portal) },
    counters: () => call('GET', '/counters'),
    resetCounters: async () => { await call('POST', '/counters/reset') },
    fault: async (spec) => { await call('POST', '/faults', spec) },
    clearFaults: async () => { await call('DELETE', '/faults') },
    throttle: async (t) => { await call('POST', '/throttle', t) },
  }

  const { close: closeService, controls: _flag, pause, resume, ...announcement } = service
  return {
    ...announcement,
    announcement: { ...announcement, controls: true },
    controls,
    dispatcher,
    caPem,
    pause,
    resume,
    async close() {
      // Bounded, like every wait of the suite: a service that does not stop fails the test that closes it.
      let timer: NodeJS.Timeout | undefined
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the local service did not stop within ${CLOSE_DEADLINE_MS / 1000} s`)), CLOSE_DEADLINE_MS)
      })
      try {
        await Promise.race([(async () => {
          await dispatcher.destroy().catch(() => {})
          await closeService()
        })(), deadline])
      } finally {
        clearTimeout(timer)
      }
    },
  }
}
