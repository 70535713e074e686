// The commands on a company network: through a real proxy (Debian's tinyproxy, Basic
// authentication) with nothing but HTTPS_PROXY set, the `proxy` setting over it, NO_PROXY;
// each way the proxy fails with its message and exit code, the password in none of them;
// and the authorities trusted: the service's CA through the system's store alone
// (SSL_CERT_FILE), `--ca` adding an unrelated one beside it, and an untrusted certificate
// named with the way out. NODE_EXTRA_CA_CERTS is unset: users do not have it.
import { createHash } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { EXIT } from '../../src/cli/output/exit-codes.js'
import { createSelfSignedCertificate } from '../../src/emulator/cert.js'
import { freePort, startProxy, type RunningProxy } from '../../scripts/tinyproxy.js'
import { tempDir, unmountAll } from '../support/mount.js'
import { bytes, cli, jsonOf, login, putTransfer, serviceClient, useAccount } from './harness.js'
import { startTestService, type TestService } from '../support/service.js'
import type { TransferClient } from '../../src/api/client.js'

const USER = 'ann'
const PASSWORD = 'pw-of-ann.42'
const MiB = 1024 * 1024
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex')

let service: TestService
let client: TransferClient
let proxy: RunningProxy
let apiHost: string
/** The variables a test sets; each test starts without them. */
const NETWORK_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'TRANSFERFS_PROXY']
let serviceCa: string

beforeAll(async () => {
  service = await startTestService()
  client = await serviceClient(service)
  proxy = await startProxy({ user: USER, password: PASSWORD })
  apiHost = new URL(service.baseUrl).host
  await useAccount(service)
  delete process.env.NODE_EXTRA_CA_CERTS
  // The service's certificate file goes with it; a copy of the test's own stays.
  serviceCa = path.join(await tempDir(), 'service-ca.pem')
  await writeFile(serviceCa, service.caPem)
})
afterEach(() => {
  for (const v of NETWORK_VARIABLES) delete process.env[v]
  process.env.TRANSFERFS_CA = service.ca
})
afterAll(async () => {
  await proxy?.stop()
  await client?.close()
  await service?.close()
  await unmountAll()
})

describe('through a proxy', () => {
  it('with only HTTPS_PROXY set: login, inbox, a verified download and a send go through it, to both origins', async () => {
    await proxy.clearLog()
    process.env.HTTPS_PROXY = proxy.url(`${USER}:${PASSWORD}`)
    await login(service)
    const data = bytes(3 * MiB + 5, 7)
    const t = await putTransfer(client, [{ name: 'big.bin', data }])
    const inbox = await cli(['inbox', '--json'])
    expect(inbox.code, inbox.stderr).toBe(0)
    expect(Array.isArray(jsonOf(inbox))).toBe(true)
    const out = await tempDir()
    const got = await cli(['download', t.id, '-o', out, '--json'])
    expect(got.code, got.stderr).toBe(0)
    expect(jsonOf<{ verified: boolean }>(got).verified).toBe(true)
    expect(md5(await readFile(path.join(out, 'big.bin')))).toBe(md5(data))
    const src = path.join(out, 'to-send.txt')
    await writeFile(src, 'sent through the proxy\n')
    const sent = await cli(['send', src, '--subject', 'via proxy', '--json'])
    expect(sent.code, sent.stderr).toBe(0)
    const sentId = jsonOf<{ transferid: string }>(sent).transferid
    expect((await client.transfers.details(sentId)).files.map((f) => f.filename)).toEqual(['to-send.txt'])
    const connects = await proxy.connects()
    expect(connects).toContain(apiHost)
    expect(connects).toContain(new URL(t.files[0]!.downloadurl).host)
    expect(connects).toContain(new URL(service.uploadUrl).host)
  })

  it('the proxy setting overrides HTTPS_PROXY; `direct` goes around it; NO_PROXY naming the service too', async () => {
    process.env.HTTPS_PROXY = `http://127.0.0.1:${await freePort()}`
    await proxy.clearLog()
    const via = await cli(['inbox', '--json', '--proxy', proxy.url(`${USER}:${PASSWORD}`)])
    expect(via.code, via.stderr).toBe(0)
    expect(await proxy.connects()).toContain(apiHost)
    await proxy.clearLog()
    process.env.HTTPS_PROXY = proxy.url(`${USER}:${PASSWORD}`)
    const direct = await cli(['inbox', '--json', '--proxy', 'direct'])
    expect(direct.code, direct.stderr).toBe(0)
    process.env.NO_PROXY = 'localhost,127.0.0.1'
    const bypassed = await cli(['inbox', '--json'])
    expect(bypassed.code, bypassed.stderr).toBe(0)
    expect(await proxy.log()).toEqual([])
  })

  it('the password is shown nowhere: `config`, `config --json`, `config set`', async () => {
    const url = proxy.url(`${USER}:${PASSWORD}`)
    process.env.TRANSFERFS_PROXY = url
    const shown = `http://${USER}:********@127.0.0.1:${proxy.port}`
    const table = await cli(['config'])
    expect(table.stdout).toContain(shown)
    const json = jsonOf<{ settings: { proxy: { value: string } } }>(await cli(['config', '--json']))
    expect(json.settings.proxy.value).toBe(shown)
    delete process.env.TRANSFERFS_PROXY
    const set = await cli(['config', 'set', 'proxy', url])
    expect(set.code, set.stderr).toBe(0)
    expect(set.stdout).toContain(shown)
    expect(await cli(['config', 'unset', 'proxy'])).toMatchObject({ code: 0 })
    for (const r of [table, set]) expect(r.stdout + r.stderr).not.toContain(PASSWORD)
    expect(JSON.stringify(json)).not.toContain(PASSWORD)
  })
})

describe('when the proxy fails: exit 5, a message naming it, at once', () => {
  it('a wrong password: the proxy wants credentials, and says so without the password', async () => {
    process.env.HTTPS_PROXY = proxy.url(`${USER}:not-${PASSWORD}`)
    const r = await cli(['inbox', '--json'])
    expect(r.code).toBe(EXIT.unreachable)
    expect(r.stderr).toContain(`transferfs: the proxy http://127.0.0.1:${proxy.port} (HTTPS_PROXY) wants credentials: it refused the user name and password of its URL (HTTP 40`)
    expect(r.stderr).toContain('hint: give the proxy\'s user name and password in its URL')
    expect(r.stdout + r.stderr).not.toContain(PASSWORD)
  })

  it('no credentials: HTTP 407 and where they go', async () => {
    process.env.https_proxy = proxy.url()
    const r = await cli(['login', '--email', service.user.email, '--password-stdin'], { input: `${service.user.password}\n` })
    expect(r.code).toBe(EXIT.unreachable)
    expect(r.stderr).toContain(`transferfs: the proxy http://127.0.0.1:${proxy.port} (https_proxy) wants credentials (HTTP 407): give them in its URL, http://user:password@host:port`)
  })

  it('a proxy nothing listens on: cannot reach the proxy, named, and a hint about the proxy', async () => {
    const port = await freePort()
    process.env.HTTPS_PROXY = `http://${USER}:${PASSWORD}@127.0.0.1:${port}`
    const r = await cli(['inbox'])
    expect(r.code).toBe(EXIT.unreachable)
    expect(r.stderr).toMatch(new RegExp(`cannot reach the proxy http://127\\.0\\.0\\.1:${port} \\(HTTPS_PROXY\\): connect ECONNREFUSED`))
    expect(r.stderr).toContain('hint: check the proxy\'s address')
    expect(r.stdout + r.stderr).not.toContain(PASSWORD)
  })

  it('a proxy that does not allow the service\'s port: it refused the tunnel', async () => {
    const strict = await startProxy({ connectPorts: [await freePort()] })
    try {
      process.env.HTTPS_PROXY = strict.url()
      const r = await cli(['inbox'])
      expect(r.code).toBe(EXIT.unreachable)
      expect(r.stderr).toContain(`transferfs: the proxy http://127.0.0.1:${strict.port} (HTTPS_PROXY) refused the tunnel to ${apiHost} (HTTP 403)`)
      expect(r.stderr).toContain('hint: the proxy does not allow this connection')
    } finally {
      await strict.stop()
    }
  })

  it('a SOCKS proxy: a settings error naming the variable', async () => {
    process.env.HTTPS_PROXY = 'socks5://127.0.0.1:1080'
    const r = await cli(['inbox'])
    expect(r.code).toBe(EXIT.usage)
    expect(r.stderr).toContain('HTTPS_PROXY names a socks5 proxy: only HTTP proxies (http:// or https://) are supported')
  })
})

describe('the authorities trusted', () => {
  let unrelatedCa: string
  beforeAll(async () => {
    unrelatedCa = path.join(await tempDir(), 'unrelated-ca.pem')
    await writeFile(unrelatedCa, (await createSelfSignedCertificate(new Date(), 86_400_000, 'CN=an unrelated authority')).certPem)
  })

  it('the service\'s CA in the system\'s store (SSL_CERT_FILE), no --ca: login and a verified download', async () => {
    delete process.env.TRANSFERFS_CA
    process.env.SSL_CERT_FILE = serviceCa
    await login(service)
    const data = bytes(MiB + 3, 9)
    const t = await putTransfer(client, [{ name: 'f.bin', data }])
    const out = await tempDir()
    const r = await cli(['download', t.id, '-o', out, '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(md5(await readFile(path.join(out, 'f.bin')))).toBe(md5(data))
  })

  it('--ca naming an unrelated CA adds it: the service\'s, in the system\'s store, is still trusted', async () => {
    delete process.env.TRANSFERFS_CA
    process.env.SSL_CERT_FILE = serviceCa
    const r = await cli(['inbox', '--json', '--ca', unrelatedCa])
    expect(r.code, r.stderr).toBe(0)
  })

  it('a certificate no authority trusted here signed: exit 5, the host named, and how to add its authority', async () => {
    delete process.env.TRANSFERFS_CA
    const r = await cli(['inbox', '--ca', unrelatedCa])
    expect(r.code).toBe(EXIT.unreachable)
    expect(r.stderr).toContain(`transferfs: the certificate of ${apiHost} is not accepted (self-signed certificate, DEPTH_ZERO_SELF_SIGNED_CERT): trust the authority that signed it through the system's certificate store or the ca setting`)
    expect(r.stderr).toContain('hint: on Debian and Ubuntu, copy the authority\'s certificate (PEM, named *.crt) into /usr/local/share/ca-certificates/ and run `sudo update-ca-certificates`; or give it with --ca FILE')
  })

  it('SSL_CERT_FILE naming a file that is not there: one warning naming the variable and the file; login and a verified download with --ca work', async () => {
    delete process.env.TRANSFERFS_CA
    // As in a clean Debian root whose environment names the bundle package ca-certificates would install.
    const missing = path.join(await tempDir(), 'ca-certificates.crt')
    process.env.SSL_CERT_FILE = missing
    const warning = `transferfs: warning: SSL_CERT_FILE names ${missing}, which is not there: its certificates are left out; Node's own authorities and the ca setting's are still trusted`
    const signIn = await cli(['login', '--email', service.user.email, '--password-stdin', '--ca', serviceCa], { input: `${service.user.password}\n` })
    expect(signIn.code, signIn.stderr).toBe(0)
    expect(signIn.stderr.split('\n').filter((l) => l.includes('SSL_CERT_FILE') || l.includes('warning'))).toEqual([warning])
    const data = bytes(MiB + 11, 13)
    const t = await putTransfer(client, [{ name: 'g.bin', data }])
    const out = await tempDir()
    const got = await cli(['download', t.id, '-o', out, '--json', '--ca', serviceCa])
    expect(got.code, got.stderr).toBe(0)
    expect(got.stderr.split('\n').filter((l) => l.includes('warning'))).toEqual([warning])
    expect(md5(await readFile(path.join(out, 'g.bin')))).toBe(md5(data))
  })

  it('a ca setting naming a file that is not there, or one without a certificate: the command stops with one line naming the setting and the file', async () => {
    const dir = await tempDir()
    const missing = path.join(dir, 'company-ca.pem')
    const notPem = path.join(dir, 'not.pem')
    await writeFile(notPem, 'hello\n')
    const errors = (r: { stderr: string }) => r.stderr.split('\n').filter((l) => l.startsWith('transferfs: ') && !l.startsWith('transferfs: warning: --api-key'))

    const flag = await cli(['inbox', '--ca', missing])
    expect(flag.code).toBe(EXIT.usage)
    expect(errors(flag)).toEqual([`transferfs: the ca setting (--ca) names ${missing}, which is not there: give a PEM file of certificate authorities, or unset it`])
    process.env.TRANSFERFS_CA = missing
    const env = await cli(['inbox'])
    expect(env.code).toBe(EXIT.usage)
    expect(errors(env)).toEqual([`transferfs: the ca setting (TRANSFERFS_CA) names ${missing}, which is not there: give a PEM file of certificate authorities, or unset it`])
    delete process.env.TRANSFERFS_CA
    const set = await cli(['config', 'set', 'ca', missing])
    expect(set.code, set.stderr).toBe(0)
    const fromFile = await cli(['inbox'])
    expect(fromFile.code).toBe(EXIT.usage)
    expect(errors(fromFile)).toEqual([`transferfs: the ca setting ("ca" in ${path.join(process.env.TRANSFERFS_CONFIG_DIR!, 'config.json')}) names ${missing}, which is not there: give a PEM file of certificate authorities, or unset it`])
    expect((await cli(['config', 'unset', 'ca'])).code).toBe(0)

    const empty = await cli(['inbox', '--ca', notPem])
    expect(empty.code).toBe(EXIT.usage)
    expect(errors(empty)).toEqual([`transferfs: the ca setting (--ca) names ${notPem}, which holds no certificate (a PEM file is wanted: -----BEGIN CERTIFICATE-----)`])
  })
})
