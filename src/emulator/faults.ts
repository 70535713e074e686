// Test controls that change how the service behaves: injected faults, throttle, request counters.
import { Link } from './link.js'
import type { ServiceStatus } from '../api/types.js'
import { isServiceStatus } from '../api/types.js'
import { invalid } from './envelope.js'

export const ROUTES = ['login', 'refresh', 'logout', 'initialize', 'complete', 'forward', 'details', 'inbox',
  'savefile', 'download', 'zip', 'rangehash', 'preview'] as const
export type RouteName = (typeof ROUTES)[number]

export const FAULT_KINDS = ['status', 'corrupt', 'reset', 'stall'] as const
export type FaultKind = (typeof FAULT_KINDS)[number]

export interface FaultSpec {
  route: RouteName | '*'
  kind: FaultKind
  count?: number
  probability?: number
  status?: number
  responsestatus?: ServiceStatus
  afterBytes?: number
  /** With `stall`: answer normally after this many ms (default: never). */
  ms?: number
}

export interface Throttle {
  /** Bandwidth of the one link all download and ZIP bodies share, bytes per second. */
  bytesPerSecond?: number
  /** Bytes the link sends at once after it has been idle (a token bucket's burst); 0: none. */
  burstBytes?: number
  /** Added before every request is handled, ms. */
  latencyMs?: number
  /** GetRangeHash hashes no faster than this, bytes per second (a server with a slower hash). */
  hashBytesPerSecond?: number
  /** Every answer closes its connection, as an HTTP/1.0 server does: each request pays a new TLS handshake. */
  closeConnections?: boolean
}

export interface Counters {
  routes: Record<string, number>
  bytesServed: number
  /** Bytes GetRangeHash read and hashed. */
  bytesHashed: number
  /** Thumbnail body bytes handed to the socket (not counted in bytesServed: they are not file bytes). */
  previewBytesServed: number
  refreshCalls: number
  /** Transfers the inbox route gave in pages of the whole inbox (no `from`, no `search`): 5,000 per listing of a 5,000-transfer inbox. */
  inboxListed: number
  /** TLS connections accepted by the file servers (each a handshake a client paid for). */
  fileConnections: number
  /** File-server connections open now (a state, carried over a reset): a test waits for the server to close the idle ones. */
  openFileConnections: number
  /** Requests being answered now (not zeroed by a reset): a test waits for 0 before it counts afresh. */
  inFlight: number
}

/** Routes whose bodies are file bytes, where `corrupt` means changing them. */
const CORRUPTIBLE: ReadonlySet<RouteName> = new Set(['download', 'zip', 'rangehash'])

interface ActiveFault extends FaultSpec {
  remaining: number | null
}

/** Counters from zero; `inFlight` and `openFileConnections` are states, not counts, and carry over. */
function zeroCounters(inFlight: number, openFileConnections: number): Counters {
  return { routes: {}, bytesServed: 0, bytesHashed: 0, previewBytesServed: 0, refreshCalls: 0, inboxListed: 0, fileConnections: 0, openFileConnections, inFlight }
}

export class Faults {
  private faults: ActiveFault[] = []
  throttle: Throttle = {}
  counters: Counters = zeroCounters(0, 0)

  add(spec: unknown): FaultSpec {
    const fault = parseFault(spec)
    this.faults.push({ ...fault, remaining: fault.count ?? null })
    return fault
  }

  /** The shared link while a bandwidth limit is set. */
  link: Link | null = null

  clear(): void {
    this.faults = []
    this.throttle = {}
    this.link = null
  }

  setThrottle(body: unknown): Throttle {
    const t = (body ?? {}) as Record<string, unknown>
    const next: Throttle = {}
    for (const key of ['bytesPerSecond', 'burstBytes', 'latencyMs', 'hashBytesPerSecond'] as const) {
      const v = t[key]
      if (v === undefined || v === null) continue
      if (typeof v !== 'number' || !(v >= 0)) throw invalid(key, `${key} must be a number >= 0`)
      if (v > 0) next[key] = v
    }
    const close = t.closeConnections
    if (close !== undefined && close !== null && typeof close !== 'boolean') throw invalid('closeConnections', 'closeConnections must be true or false')
    if (close === true) next.closeConnections = true
    this.throttle = next
    this.link = next.bytesPerSecond ? new Link(next.bytesPerSecond, next.burstBytes) : null
    return next
  }

  /**
   * Counts a request of `route`, in flight until `res` closes. A request whose client left
   * while it waited out the added latency has closed already: it is not in flight, and its
   * close will not come again to say so.
   */
  count(route: RouteName, res: { readonly closed?: boolean; once(event: 'close', fn: () => void): unknown }): void {
    this.counters.routes[route] = (this.counters.routes[route] ?? 0) + 1
    if (res.closed) return
    this.counters.inFlight++
    res.once('close', () => { this.counters.inFlight-- })
  }

  resetCounters(): void {
    this.counters = zeroCounters(this.counters.inFlight, this.counters.openFileConnections)
  }

  /** The fault that applies to this request, if any (consuming one of its `count`). */
  take(route: RouteName): FaultSpec | null {
    for (const fault of this.faults) {
      if (fault.route !== '*' && fault.route !== route) continue
      if (fault.kind === 'corrupt' && !CORRUPTIBLE.has(route)) continue
      if (fault.remaining !== null) {
        if (fault.remaining <= 0) continue
        fault.remaining -= 1
        return fault
      }
      if (Math.random() < (fault.probability ?? 0)) return fault
    }
    return null
  }
}

function parseFault(spec: unknown): FaultSpec {
  if (typeof spec !== 'object' || spec === null) throw invalid('body', 'a FaultSpec object is required')
  const s = spec as Record<string, unknown>
  const route = s.route
  if (route !== '*' && !(ROUTES as readonly unknown[]).includes(route)) throw invalid('route', `route must be one of ${ROUTES.join(', ')} or *`)
  if (!(FAULT_KINDS as readonly unknown[]).includes(s.kind)) throw invalid('kind', `kind must be one of ${FAULT_KINDS.join(', ')}`)
  const fault: FaultSpec = { route: route as FaultSpec['route'], kind: s.kind as FaultKind }
  if (s.count !== undefined) {
    if (!Number.isInteger(s.count) || (s.count as number) < 1) throw invalid('count', 'count must be an integer >= 1')
    fault.count = s.count as number
  }
  if (s.probability !== undefined) {
    if (typeof s.probability !== 'number' || s.probability < 0 || s.probability > 1) throw invalid('probability', 'probability must be in 0..1')
    fault.probability = s.probability
  }
  if ((fault.count === undefined) === (fault.probability === undefined)) throw invalid('count', 'give exactly one of count and probability')
  if (fault.kind === 'status') {
    if (!Number.isInteger(s.status) || (s.status as number) < 400 || (s.status as number) > 599) throw invalid('status', 'status must be an HTTP error status')
    fault.status = s.status as number
    if (s.responsestatus !== undefined) {
      if (!isServiceStatus(s.responsestatus)) throw invalid('responsestatus', 'unknown responsestatus')
      fault.responsestatus = s.responsestatus
    }
  }
  if (s.ms !== undefined) {
    if (fault.kind !== 'stall') throw invalid('ms', 'ms goes with kind stall')
    if (!Number.isInteger(s.ms) || (s.ms as number) < 0) throw invalid('ms', 'ms must be an integer >= 0')
    fault.ms = s.ms as number
  }
  if (s.afterBytes !== undefined) {
    if (!Number.isInteger(s.afterBytes) || (s.afterBytes as number) < 0) throw invalid('afterBytes', 'afterBytes must be an integer >= 0')
    fault.afterBytes = s.afterBytes as number
  }
  return fault
}
