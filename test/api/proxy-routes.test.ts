// Which proxy a connection takes, as curl decides it: the variables and their order, the
// `proxy` setting over them, proxy URLs as curl reads them, and no_proxy's matching (host
// suffixes, leading dots, `*`, ports, addresses and ranges); and a proxy URL as it may be shown.
import { describe, expect, it } from 'vitest'
import { bypassesProxy, DIRECT_ROUTES, parseProxy, proxyFor, proxyForDisplay, proxyRoutes } from '../../src/api/proxy.js'

const basic = (userPass: string) => `Basic ${Buffer.from(userPass).toString('base64')}`
const origin = (routes: ReturnType<typeof proxyRoutes>, url: string) => proxyFor(routes, new URL(url))?.origin ?? 'direct'

describe('the variables', () => {
  it('https:// addresses take https_proxy, else HTTPS_PROXY; http:// ones http_proxy, else HTTP_PROXY', () => {
    const env = { https_proxy: 'http://low:1', HTTPS_PROXY: 'http://up:2', HTTP_PROXY: 'http://plain:3' }
    const routes = proxyRoutes(null, env)
    expect(origin(routes, 'https://service.example/api')).toBe('http://low:1')
    expect(origin(routes, 'http://service.example/api')).toBe('http://plain:3')
    expect(origin(proxyRoutes(null, { HTTPS_PROXY: 'http://up:2' }), 'https://x.example')).toBe('http://up:2')
    expect(routes.https?.label).toBe('http://low:1 (https_proxy)')
  })

  it('an https:// address does not fall back to HTTP_PROXY, as in curl; an empty variable is not set', () => {
    expect(origin(proxyRoutes(null, { HTTP_PROXY: 'http://plain:3', http_proxy: 'http://plain:3' }), 'https://x.example')).toBe('direct')
    expect(origin(proxyRoutes(null, { https_proxy: ' ', HTTPS_PROXY: 'http://up:2' }), 'https://x.example')).toBe('http://up:2')
    expect(proxyRoutes(null, {})).toEqual(DIRECT_ROUTES)
  })

  it('the proxy setting overrides the variables, for both schemes; `direct` means none; no_proxy applies to it too', () => {
    const env = { HTTPS_PROXY: 'http://env:1', NO_PROXY: 'internal.example' }
    const routes = proxyRoutes('http://setting:8080', env)
    expect(origin(routes, 'https://x.example')).toBe('http://setting:8080')
    expect(origin(routes, 'http://x.example')).toBe('http://setting:8080')
    expect(routes.https?.label).toBe('http://setting:8080 (the proxy setting)')
    expect(origin(routes, 'https://api.internal.example')).toBe('direct')
    expect(proxyRoutes('direct', env)).toEqual(DIRECT_ROUTES)
    expect(proxyRoutes('  ', env).https?.origin).toBe('http://env:1')
  })

  it('no_proxy is read before NO_PROXY', () => {
    expect(proxyRoutes(null, { no_proxy: 'a.example', NO_PROXY: 'b.example' }).noProxy).toBe('a.example')
    expect(proxyRoutes(null, { NO_PROXY: 'b.example' }).noProxy).toBe('b.example')
  })
})

describe('a proxy URL', () => {
  it('host:port alone is http://; a URL without a port takes curl\'s: 1080 for http://, 443 for https://', () => {
    expect(parseProxy('proxy.corp:3128', 'HTTPS_PROXY').origin).toBe('http://proxy.corp:3128')
    expect(parseProxy('http://proxy.corp', 'HTTPS_PROXY').origin).toBe('http://proxy.corp:1080')
    expect(parseProxy('http://proxy.corp:80', 'HTTPS_PROXY').origin).toBe('http://proxy.corp:80')
    expect(parseProxy('https://proxy.corp', 'HTTPS_PROXY').origin).toBe('https://proxy.corp:443')
    expect(parseProxy('http://[::1]:3128/', 'HTTPS_PROXY').origin).toBe('http://[::1]:3128')
  })

  it('its user name and password become Basic credentials, percent-decoded, and stay out of its label', () => {
    const p = parseProxy('http://ann%40corp:p%3Ass@proxy.corp:3128', 'HTTPS_PROXY')
    expect(p.authorization).toBe(basic('ann@corp:p:ss'))
    expect(p.label).toBe('http://proxy.corp:3128 (HTTPS_PROXY)')
    expect(parseProxy('http://ann@proxy.corp:3128', 'x').authorization).toBe(basic('ann:'))
    expect(parseProxy('http://proxy.corp:3128', 'x').authorization).toBeNull()
  })

  it('a SOCKS proxy or no URL at all is refused, naming the variable and never repeating the value', () => {
    expect(() => parseProxy('socks5://u:secret@proxy.corp:1080', 'ALL')).toThrow(/ALL names a socks5 proxy: only HTTP proxies/)
    let said = ''
    try {
      parseProxy('http://u:secret@[bad', 'HTTPS_PROXY')
    } catch (err) {
      said = (err as Error).message
    }
    expect(said).toMatch(/^HTTPS_PROXY is not a proxy URL/)
    expect(said).not.toContain('secret')
  })

  it('is shown with its password masked', () => {
    expect(proxyForDisplay('http://ann:secret@proxy.corp:3128')).toBe('http://ann:********@proxy.corp:3128')
    expect(proxyForDisplay('proxy.corp:3128')).toBe('http://proxy.corp:3128')
    expect(proxyForDisplay('direct')).toBe('direct')
    expect(proxyForDisplay('http://u:secret@[bad')).toBe('********')
  })
})

describe('no_proxy', () => {
  const bypass = (host: string, list: string, port = 443) => bypassesProxy(host, port, list)

  it('an entry names its host and every host below it, with or without a leading dot, never a mere suffix', () => {
    expect(bypass('example.com', 'example.com')).toBe(true)
    expect(bypass('www.example.com', 'example.com')).toBe(true)
    expect(bypass('www.example.com', '.example.com')).toBe(true)
    expect(bypass('example.com', '.example.com')).toBe(true)
    expect(bypass('nonexample.com', 'example.com')).toBe(false)
    expect(bypass('example.com', 'www.example.com')).toBe(false)
    expect(bypass('WWW.Example.COM.', 'example.com.')).toBe(true)
    expect(bypass('a.b.example.com', '*.example.com')).toBe(true)
  })

  it('entries are separated by commas and spaces; `*` alone names every host, `*` among others nothing', () => {
    expect(bypass('b.example', 'a.example, b.example')).toBe(true)
    expect(bypass('c.example', 'a.example b.example,,c.example')).toBe(true)
    expect(bypass('anything.example', '*')).toBe(true)
    expect(bypass('anything.example', ' * ')).toBe(true)
    expect(bypass('anything.example', 'a.example,*')).toBe(false)
    expect(bypass('anything.example', '')).toBe(false)
  })

  it('the address\'s port does not matter; an entry with a port names that port only', () => {
    expect(bypass('example.com', 'example.com', 8443)).toBe(true)
    expect(bypass('example.com', 'example.com:8443', 8443)).toBe(true)
    expect(bypass('example.com', 'example.com:8443', 443)).toBe(false)
    expect(bypass('127.0.0.1', '127.0.0.1:8443', 8443)).toBe(true)
    expect(bypass('127.0.0.1', '127.0.0.1:8443', 9443)).toBe(false)
    expect(bypass('[::1]', '[::1]:8443', 8443)).toBe(true)
    expect(bypass('[::1]', '[::1]:8443', 443)).toBe(false)
  })

  it('an address matches the same address or a range holding it, never a name, and a name never an address', () => {
    expect(bypass('127.0.0.1', '127.0.0.1')).toBe(true)
    expect(bypass('127.0.0.1', '127.0.0.0/8')).toBe(true)
    expect(bypass('10.1.2.3', '10.0.0.0/16')).toBe(false)
    expect(bypass('10.0.2.3', '10.0.0.0/16')).toBe(true)
    expect(bypass('127.0.0.1', '.0.0.1')).toBe(false)
    expect(bypass('127.0.0.1', 'localhost')).toBe(false)
    expect(bypass('localhost', '127.0.0.1')).toBe(false)
    expect(bypass('[::1]', '::1')).toBe(true)
    expect(bypass('[::1]', '[0:0::1]')).toBe(true)
    expect(bypass('[fd00::5]', 'fd00::/8')).toBe(true)
    expect(bypass('[fe80::5]', 'fd00::/8')).toBe(false)
    expect(bypass('[::1]', '127.0.0.1')).toBe(false)
    expect(bypass('10.0.0.1', '10.0.0.0/33')).toBe(false)
  })

  it('proxyFor applies it with the address\'s port, 443 when it names none', () => {
    const routes = proxyRoutes(null, { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'files.example:443,api.example:8443' })
    expect(origin(routes, 'https://files.example/x')).toBe('direct')
    expect(origin(routes, 'https://api.example:8443/api')).toBe('direct')
    expect(origin(routes, 'https://api.example/api')).toBe('http://p:1')
  })
})
