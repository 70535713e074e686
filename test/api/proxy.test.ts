// The client through a real HTTP proxy (Debian's tinyproxy, Basic authentication), against
// the real local service: API calls, uploads, range streams (still decrypted straight into
// the sink's memory inside the tunnel) and connections opened ahead all go through it, and
// through an https:// proxy too (TLS to the proxy, the service's inside); each way a proxy
// fails is an error that names it and says what happened, at once; no_proxy sends
// connections straight to the service.
import { randomBytes } from 'node:crypto'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { createServer as createTlsServer } from 'node:tls'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TransferClient } from '../../src/api/client.js'
import { NetworkError, ProxyError } from '../../src/api/errors.js'
import { isUnreachable } from '../../src/api/failure.js'
import { proxyRoutes } from '../../src/api/proxy.js'
import type { FileDto } from '../../src/api/types.js'
import { createSelfSignedCertificate } from '../../src/emulator/cert.js'
import { freePort, startProxy, type RunningProxy } from '../../scripts/tinyproxy.js'
import { waitFor } from '../support/mount.js'
import { startHarness, type Harness } from './harness.js'

const MiB = 1024 * 1024
const USER = 'ann'
const PASSWORD = 'secret-pw.9'
/** The credentials as a URL holds them. */
const CREDENTIALS = `${USER}:${encodeURIComponent(PASSWORD)}`

let h: Harness
let proxy: RunningProxy
let file: FileDto
let data: Buffer
let apiHost: string
let fileHost: string

/** A client whose connections go where HTTPS_PROXY (and NO_PROXY) say. */
function clientVia(env: Record<string, string>, timeouts?: { connectMs: number }): TransferClient {
  return h.client({ proxy: proxyRoutes(null, env), ...(timeouts ? { timeouts } : {}), retry: { maxTries: 2, baseDelayMs: 10 } })
}

beforeAll(async () => {
  h = await startHarness()
  proxy = await startProxy({ user: USER, password: PASSWORD })
  data = randomBytes(3 * MiB)
  const sender = h.client()
  const init = await sender.transfers.initialize({ subject: 'through the proxy' })
  await sender.upload.uploadFile({ transferUrl: init.transferurl, transferId: init.transferid, transferKey: init.transferkey, fileName: 'a.bin', source: { size: data.length, read: async (s, e) => data.subarray(s, e) } })
  const t = await sender.transfers.complete(init.transferid, init.transferkey)
  file = (t.files.length ? t : await sender.transfers.details(init.transferid)).files[0]!
  apiHost = new URL(h.baseUrl).host
  fileHost = new URL(file.downloadurl).host
})
afterAll(async () => {
  await proxy?.stop()
  await h?.close()
})

describe('through a proxy with Basic authentication', () => {
  it('API calls, an upload and range streams go through it: every connection the file server accepted is a tunnel', async () => {
    await proxy.clearLog()
    await h.control('POST', '/counters/reset')
    const client = clientVia({ HTTPS_PROXY: proxy.url(CREDENTIALS) })
    await client.auth.login(h.user.email, h.user.password)
    const init = await client.transfers.initialize({ subject: 'sent through the proxy' })
    await client.upload.uploadFile({ transferUrl: init.transferurl, transferId: init.transferid, transferKey: init.transferkey, fileName: 'b.bin', source: { size: data.length, read: async (s, e) => data.subarray(s, e) } })
    await client.transfers.complete(init.transferid, init.transferkey)
    const parts: Buffer[] = []
    await client.download.pumpRange(file.downloadurl, 0, data.length, (bytes) => void parts.push(Buffer.from(bytes)))
    expect(Buffer.concat(parts).equals(data)).toBe(true)
    const connects = await proxy.connects()
    expect(connects).toContain(apiHost)
    expect(connects).toContain(fileHost)
    expect(connects.filter((c) => c !== apiHost && c !== fileHost)).toEqual([])
    expect((await h.counters()).fileConnections).toBe(connects.filter((c) => c === fileHost).length)
  })

  it('inside the tunnel, range bodies are still decrypted straight into the sink\'s memory', async () => {
    await proxy.clearLog()
    const client = clientVia({ HTTPS_PROXY: proxy.url(CREDENTIALS) })
    const memory = Buffer.from(new SharedArrayBuffer(data.length))
    let filled = 0
    let inPlace = 0
    const sink = Object.assign((bytes: Buffer) => {
      if (bytes.buffer === memory.buffer && bytes.byteOffset === filled) inPlace += bytes.length
      else bytes.copy(memory, filled)
      filled += bytes.length
    }, { room: () => memory.subarray(filled, Math.min(memory.length, filled + 64 * 1024)) })
    await client.download.pumpRange(file.downloadurl, 0, data.length, sink)
    expect(memory.equals(data)).toBe(true)
    // Only what came with the answer's head is copied.
    expect(data.length - inPlace).toBeLessThan(64 * 1024)
    expect(await proxy.connects()).toEqual([fileHost])
  })

  it('a connection opened ahead of a read goes through it too', async () => {
    await proxy.clearLog()
    const client = clientVia({ HTTPS_PROXY: proxy.url(CREDENTIALS) })
    client.download.preconnect(file.downloadurl)
    // One for the range streams, which reads and range hashes take.
    expect(await waitFor(async () => (await proxy.connects()).length === 1, 5000)).toBe(true)
    expect(await proxy.connects()).toEqual([fileHost])
    const parts: Buffer[] = []
    await client.download.pumpRange(file.downloadurl, 0, 4096, (bytes) => void parts.push(Buffer.from(bytes)))
    expect(Buffer.concat(parts).equals(data.subarray(0, 4096))).toBe(true)
    // The read took the connection opened ahead.
    expect((await proxy.connects()).length).toBe(1)
  })

  it('an https:// proxy: TLS to the proxy, and the service\'s TLS inside that', async () => {
    // The proxy behind a TLS front of its own, its certificate trusted as `ca` like the service's.
    const front = await createSelfSignedCertificate(new Date(), 86_400_000, 'CN=the proxy\'s front')
    const server = createTlsServer({ cert: front.certPem, key: front.keyPem }, (outside) => {
      const inside = connect(proxy.port, '127.0.0.1')
      outside.pipe(inside).pipe(outside)
      const end = () => { outside.destroy(); inside.destroy() }
      outside.on('error', end).on('close', end)
      inside.on('error', end).on('close', end)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = server.address() as { port: number }
      await proxy.clearLog()
      const client = h.client({ ca: `${h.ca}${front.certPem}`, proxy: proxyRoutes(null, { HTTPS_PROXY: `https://${CREDENTIALS}@127.0.0.1:${port}` }) })
      await client.auth.login(h.user.email, h.user.password)
      const parts: Buffer[] = []
      await client.download.pumpRange(file.downloadurl, 0, data.length, (bytes) => void parts.push(Buffer.from(bytes)))
      expect(Buffer.concat(parts).equals(data)).toBe(true)
      expect(await proxy.connects()).toEqual(expect.arrayContaining([apiHost, fileHost]))
      await client.close()
    } finally {
      server.close()
    }
  })

  it('no_proxy naming the service: straight to it, the proxy sees nothing', async () => {
    await proxy.clearLog()
    const client = clientVia({ HTTPS_PROXY: proxy.url(CREDENTIALS), NO_PROXY: 'example.com,127.0.0.0/8' })
    await client.auth.login(h.user.email, h.user.password)
    const parts: Buffer[] = []
    await client.download.pumpRange(file.downloadurl, 0, 4096, (bytes) => void parts.push(Buffer.from(bytes)))
    expect(Buffer.concat(parts).equals(data.subarray(0, 4096))).toBe(true)
    expect(await proxy.log()).toEqual([])
  })
})

/** What the call threw (it must throw). */
async function failure(call: () => Promise<unknown>): Promise<Error> {
  try {
    await call()
  } catch (err) {
    return err as Error
  }
  throw new Error('it did not fail')
}

describe('when the proxy fails, the error names it and says what happened, at once', () => {
  it('no credentials: it wants credentials (407); a wrong password: the same, not retried; never the password', async () => {
    await proxy.clearLog()
    const none = await failure(() => clientVia({ HTTPS_PROXY: proxy.url() }).auth.login(h.user.email, h.user.password))
    expect(none).toBeInstanceOf(ProxyError)
    expect(none.message).toBe(`the proxy http://127.0.0.1:${proxy.port} (HTTPS_PROXY) wants credentials (HTTP 407): give them in its URL, http://user:password@host:port`)
    const wrong = await failure(() => clientVia({ HTTPS_PROXY: proxy.url(`${USER}:nope`) }).auth.login(h.user.email, h.user.password))
    expect(wrong.message).toMatch(new RegExp(`^the proxy http://127\\.0\\.0\\.1:${proxy.port} \\(HTTPS_PROXY\\) wants credentials: it refused the user name and password of its URL \\(HTTP 40[17]\\)$`))
    expect(wrong.message).not.toContain('nope')
    // One CONNECT each: a refusal is not tried again.
    expect(await proxy.connects()).toEqual([apiHost, apiHost])
    // The range streams say the same.
    const ranges = await failure(() => clientVia({ HTTPS_PROXY: proxy.url() }).download.pumpRange(file.downloadurl, 0, 10, () => undefined))
    expect(ranges.message).toContain('wants credentials (HTTP 407)')
  })

  it('a proxy that does not allow the port: it refused the tunnel (403)', async () => {
    const strict = await startProxy({ connectPorts: [await freePort()] })
    try {
      const err = await failure(() => clientVia({ https_proxy: strict.url() }).auth.login(h.user.email, h.user.password))
      expect(err.message).toBe(`the proxy http://127.0.0.1:${strict.port} (https_proxy) refused the tunnel to ${apiHost} (HTTP 403)`)
    } finally {
      await strict.stop()
    }
  })

  it('a proxy nothing listens on: cannot reach the proxy, and the service counts as unreachable', async () => {
    const port = await freePort()
    const err = await failure(() => clientVia({ HTTPS_PROXY: `http://${CREDENTIALS}@127.0.0.1:${port}` }).download.pumpRange(file.downloadurl, 0, 10, () => undefined))
    expect(err).toBeInstanceOf(NetworkError)
    expect(err.message).toMatch(new RegExp(`^cannot reach the proxy http://127\\.0\\.0\\.1:${port} \\(HTTPS_PROXY\\): .*ECONNREFUSED`))
    expect(err.message).not.toContain(encodeURIComponent(PASSWORD))
    expect(isUnreachable(err)).toBe(true)
  })

  it('a proxy that takes the connection and never answers: no answer to CONNECT within the connect deadline', async () => {
    const held: Socket[] = []
    const silent: Server = createServer((s) => void held.push(s))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const { port } = silent.address() as { port: number }
    try {
      const err = await failure(() => clientVia({ HTTPS_PROXY: `http://127.0.0.1:${port}` }, { connectMs: 500 }).download.pumpRange(file.downloadurl, 0, 10, () => undefined))
      expect(err.message).toBe(`cannot reach the proxy http://127.0.0.1:${port} (HTTPS_PROXY): no answer to CONNECT within 500 ms (UND_ERR_HEADERS_TIMEOUT)`)
    } finally {
      for (const s of held) s.destroy()
      silent.close()
    }
  })
})
