// Which proxy a connection goes through, decided the way curl decides it, since curl, git,
// rclone and npm all read the same variables and a company desktop has them set for every
// program: the `proxy` setting when given, else https_proxy / HTTPS_PROXY for https://
// addresses and http_proxy / HTTP_PROXY for http:// ones (the lower-case name first), and
// no_proxy / NO_PROXY naming the hosts reached directly whichever proxy was chosen.
// Nothing here opens a connection (tunnel.ts does) or reads the environment itself.
import { BlockList, isIP } from 'node:net'

/** The environment variables read, each list in the order curl tries them. */
export const PROXY_VARIABLES = {
  https: ['https_proxy', 'HTTPS_PROXY'],
  http: ['http_proxy', 'HTTP_PROXY'],
  noProxy: ['no_proxy', 'NO_PROXY'],
} as const

/** The `proxy` setting's word for no proxy at all, whatever the environment says. */
export const DIRECT = 'direct'

/** curl's ports for a proxy URL that names none: 1080 for http://, 443 for https://. */
const DEFAULT_PROXY_PORT: Record<string, number> = { 'http:': 1080, 'https:': 443 }

export interface ProxyServer {
  /** scheme://host:port of the proxy: an https: one is spoken to over TLS. */
  origin: string
  /** What messages call it: its origin (never the credentials) and where it was set. */
  label: string
  /** The Proxy-Authorization of the URL's user name and password (Basic), or null. */
  authorization: string | null
}

export interface ProxyRoutes {
  /** The proxy of https:// addresses; null: direct. */
  https: ProxyServer | null
  /** The proxy of http:// addresses; null: direct. */
  http: ProxyServer | null
  /** Hosts reached directly, as no_proxy lists them. */
  noProxy: string
}

/** Every connection direct. */
export const DIRECT_ROUTES: ProxyRoutes = { https: null, http: null, noProxy: '' }

type Environment = Readonly<Record<string, string | undefined>>

/** The first of `names` set (and not empty) in `env`. */
function firstSet(env: Environment, names: readonly string[]): { name: string; value: string } | null {
  for (const name of names) {
    const value = env[name]?.trim()
    if (value) return { name, value }
  }
  return null
}

/**
 * A proxy URL as curl takes it: `host:port` alone is http://; only http:// and https://
 * proxies are spoken to. A TypeError says what is wrong without repeating the value,
 * which may hold a password.
 */
export function parseProxy(text: string, source: string): ProxyServer {
  const raw = text.trim()
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`
  let url: URL
  try {
    url = new URL(withScheme)
  } catch {
    throw new TypeError(`${source} is not a proxy URL: expected http://[user:password@]host:port`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`${source} names a ${url.protocol.slice(0, -1)} proxy: only HTTP proxies (http:// or https://) are supported`)
  }
  if (!url.hostname) throw new TypeError(`${source} is not a proxy URL: it names no host`)
  // URL drops a port equal to the scheme's own, so "named none" is read from the text.
  const named = /^[^/]*\/\/(?:[^@/?#]*@)?(?:\[[^\]]*\]|[^:/?#]*):\d/.test(withScheme)
  const port = named ? Number(url.port || (url.protocol === 'https:' ? 443 : 80)) : DEFAULT_PROXY_PORT[url.protocol]!
  const origin = `${url.protocol}//${url.hostname}:${port}`
  const user = decodeURIComponent(url.username)
  const password = decodeURIComponent(url.password)
  return {
    origin,
    label: `${origin} (${source})`,
    authorization: user || password ? `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` : null,
  }
}

/**
 * The routes of the `proxy` setting (null: not set) and the environment. The setting
 * overrides the proxy variables; no_proxy applies to either, as it does in curl.
 */
export function proxyRoutes(setting: string | null, env: Environment): ProxyRoutes {
  const noProxy = firstSet(env, PROXY_VARIABLES.noProxy)?.value ?? ''
  const chosen = setting?.trim()
  if (chosen) {
    if (chosen.toLowerCase() === DIRECT) return DIRECT_ROUTES
    const proxy = parseProxy(chosen, 'the proxy setting')
    return { https: proxy, http: proxy, noProxy }
  }
  const https = firstSet(env, PROXY_VARIABLES.https)
  const http = firstSet(env, PROXY_VARIABLES.http)
  return {
    https: https && parseProxy(https.value, https.name),
    http: http && parseProxy(http.value, http.name),
    noProxy,
  }
}

/** The proxy a connection to `url`'s origin goes through, or null: direct. */
export function proxyFor(routes: ProxyRoutes, url: URL): ProxyServer | null {
  const proxy = url.protocol === 'https:' ? routes.https : url.protocol === 'http:' ? routes.http : null
  if (!proxy) return null
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80))
  return bypassesProxy(url.hostname, port, routes.noProxy) ? null : proxy
}

/**
 * Whether no_proxy names the host, as curl reads it: `*` alone names every host; an entry
 * names its host and every host below it (`example.com` and `.example.com` both name
 * `www.example.com`; `*.example.com` is taken as `.example.com`); an address or a CIDR
 * range names the addresses in it, and an address is never matched by name. Entries are
 * separated by commas or spaces. Where an entry carries a port (`host:8443`,
 * `[::1]:8443`) it names that port only: curl reads no port there (such an entry matches
 * nothing in curl), which is never what its author meant.
 */
export function bypassesProxy(hostname: string, port: number, noProxy: string): boolean {
  const list = noProxy.trim()
  if (list === '') return false
  if (list === '*') return true
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1')
  const family = isIP(host)
  const name = family ? host : host.replace(/\.$/, '')
  for (const raw of list.split(/[\s,]+/)) {
    if (!raw) continue
    const entry = splitPort(raw.toLowerCase())
    if (entry.port !== null && entry.port !== port) continue
    if (family ? addressMatches(name, family, entry.host) : nameMatches(name, entry.host)) return true
  }
  return false
}

/** An entry's host and port: `h:1`, `[v6]:1` and `[v6]` carry one; a bare IPv6 address (several colons) does not. */
function splitPort(entry: string): { host: string; port: number | null } {
  const bracketed = /^\[([^\]]*)\](?::(\d+))?$/.exec(entry)
  if (bracketed) return { host: bracketed[1]!, port: bracketed[2] === undefined ? null : Number(bracketed[2]) }
  const single = /^([^:]*):(\d+)$/.exec(entry)
  return single ? { host: single[1]!, port: Number(single[2]) } : { host: entry, port: null }
}

function nameMatches(host: string, entry: string): boolean {
  const domain = entry.replace(/^\*?\./, '').replace(/\.$/, '')
  return domain !== '' && (host === domain || host.endsWith(`.${domain}`))
}

function addressMatches(address: string, family: number, entry: string): boolean {
  const [network = '', bits] = entry.split('/')
  if (isIP(network) !== family) return false
  const type = family === 4 ? 'ipv4' : 'ipv6'
  const range = new BlockList()
  if (bits === undefined) range.addAddress(network, type)
  else {
    const prefix = Number(bits)
    if (!/^\d+$/.test(bits) || prefix > (family === 4 ? 32 : 128)) return false
    range.addSubnet(network, prefix, type)
  }
  return range.check(address, type)
}

/**
 * Whether a proxy URL carries a password, the part proxyForDisplay hides (a user name alone
 * is no secret). A value that is no URL is taken to when it has an "@", which may end one.
 */
export function proxyHasPassword(text: string): boolean {
  const raw = text.trim()
  try {
    return new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`).password !== ''
  } catch {
    return raw.includes('@')
  }
}

/** A proxy URL as it may be shown: its password replaced (the whole value when it is no URL). */
export function proxyForDisplay(text: string): string {
  const raw = text.trim()
  if (raw.toLowerCase() === DIRECT) return raw
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`)
    if (url.password) url.password = '********'
    return url.href.replace(/\/$/, '')
  } catch {
    return '********'
  }
}
