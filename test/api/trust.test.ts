// The roots the client trusts: Node's own list, the system's store (found as OpenSSL finds
// it: SSL_CERT_FILE, SSL_CERT_DIR, else the distribution's bundle) and `ca`, together.
// Against the real local service: its CA trusted through the store alone, `ca` adding an
// authority without taking the store's away, and a certificate error that names the host.
import { execFileSync } from 'node:child_process'
import { copyFile, mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { rootCertificates } from 'node:tls'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NetworkError } from '../../src/api/errors.js'
import { isUntrustedCertificate } from '../../src/api/failure.js'
import { DISTRIBUTION_BUNDLES, pemCertificates, readSystemStore, systemStoreLocation } from '../../src/api/trust.js'
import { createSelfSignedCertificate } from '../../src/emulator/cert.js'
import { startHarness, type Harness } from './harness.js'

let h: Harness
/** For the reads that must not warn: a warning fails the test. */
const noWarning = (message: string): never => {
  throw new Error(`unexpected warning: ${message}`)
}
/** A CA that has nothing to do with the service. */
let unrelatedCa: string

beforeAll(async () => {
  h = await startHarness()
  unrelatedCa = (await createSelfSignedCertificate(new Date(), 86_400_000, 'CN=an unrelated authority')).certPem
})
afterAll(async () => {
  await h?.close()
})

describe('where the system\'s store is', () => {
  const none = () => false
  it('SSL_CERT_FILE and SSL_CERT_DIR when set (folders separated by colons), and nothing else then', () => {
    expect(systemStoreLocation({ SSL_CERT_FILE: '/x/bundle.pem' }, () => true)).toEqual({ files: ['/x/bundle.pem'], dirs: [] })
    expect(systemStoreLocation({ SSL_CERT_DIR: '/a:/b' }, () => true)).toEqual({ files: [], dirs: ['/a', '/b'] })
    expect(systemStoreLocation({ SSL_CERT_FILE: '/f', SSL_CERT_DIR: '/d' }, none)).toEqual({ files: ['/f'], dirs: ['/d'] })
  })

  it('else the first bundle a distribution keeps: Debian and Ubuntu\'s, then Fedora\'s...', () => {
    expect(systemStoreLocation({}, () => true)).toEqual({ files: ['/etc/ssl/certs/ca-certificates.crt'], dirs: [] })
    expect(systemStoreLocation({}, (f) => f === '/etc/pki/tls/certs/ca-bundle.crt')).toEqual({ files: ['/etc/pki/tls/certs/ca-bundle.crt'], dirs: [] })
    expect(systemStoreLocation({}, none)).toEqual({ files: [], dirs: [] })
    expect(DISTRIBUTION_BUNDLES.slice(0, 2)).toEqual(['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt'])
  })

  it('reads the bundle SSL_CERT_FILE names, and a folder\'s certificates by their hashed names as OpenSSL does', async () => {
    expect(await readSystemStore({ SSL_CERT_FILE: h.service.ca }, noWarning)).toEqual(pemCertificates(h.ca))
    const dir = join(h.dir, 'certs')
    await mkdir(dir)
    await writeFile(join(dir, 'unrelated.pem'), unrelatedCa)
    await copyFile(h.service.ca, join(dir, 'service.pem'))
    // The name OpenSSL looks a certificate up by: its subject's hash.
    execFileSync('openssl', ['rehash', dir])
    const found = await readSystemStore({ SSL_CERT_DIR: dir }, noWarning)
    expect(found.sort()).toEqual([...pemCertificates(unrelatedCa), ...pemCertificates(h.ca)].sort())
  })

  it('a file or folder the variables name that is not there: one warning naming the variable and the file, and the rest is still read', async () => {
    const missingFile = join(h.dir, 'missing.pem')
    const missingDir = join(h.dir, 'missing')
    const present = join(h.dir, 'present-certs')
    await mkdir(present)
    await copyFile(h.service.ca, join(present, 'service.pem'))
    execFileSync('openssl', ['rehash', present])
    const heard: string[] = []
    const found = await readSystemStore({ SSL_CERT_FILE: missingFile, SSL_CERT_DIR: `${missingDir}:${present}` }, (m) => heard.push(m))
    expect(heard).toEqual([
      `SSL_CERT_FILE names ${missingFile}, which is not there: its certificates are left out; Node's own authorities and the ca setting's are still trusted`,
      `SSL_CERT_DIR names ${missingDir}, which is not there: its certificates are left out; Node's own authorities and the ca setting's are still trusted`,
    ])
    // The folder beside the missing one is still read.
    expect(found).toEqual(pemCertificates(h.ca))
  })

  it('without the variables, this machine\'s bundle: it holds public roots, as Node\'s list does', async () => {
    const system = await readSystemStore({}, noWarning)
    expect(system.length).toBeGreaterThan(50)
    const bodies = new Set(rootCertificates.map((c) => c.replace(/-----[^-]+-----|\s/g, '')))
    expect(system.some((c) => bodies.has(c.replace(/-----[^-]+-----|\s/g, '')))).toBe(true)
  })
})

describe('the roots in effect', () => {
  it('the service\'s CA through the system\'s store alone: signed in', async () => {
    const client = h.client({ ca: undefined, systemCa: await readSystemStore({ SSL_CERT_FILE: h.service.ca }, noWarning) })
    await client.auth.login(h.user.email, h.user.password)
  })

  it('`ca` adds to the roots: an unrelated CA beside the store that holds the service\'s still signs in', async () => {
    const client = h.client({ ca: unrelatedCa, systemCa: await readSystemStore({ SSL_CERT_FILE: h.service.ca }, noWarning) })
    await client.auth.login(h.user.email, h.user.password)
  })

  it('neither: a certificate error naming the host and the way to trust its authority, never retried', async () => {
    const client = h.client({ ca: unrelatedCa, systemCa: await readSystemStore({}, noWarning) })
    const err = await client.auth.login(h.user.email, h.user.password).then(() => null, (e: unknown) => e as Error)
    expect(err).toBeInstanceOf(NetworkError)
    expect(isUntrustedCertificate(err)).toBe(true)
    expect(err!.message).toBe(`the certificate of ${new URL(h.baseUrl).host} is not accepted (self-signed certificate, DEPTH_ZERO_SELF_SIGNED_CERT): trust the authority that signed it through the system's certificate store or the ca setting`)
  })
})
