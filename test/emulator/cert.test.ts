// The self-signed certificate: parses every time (openssl too), names 127.0.0.1 and localhost, and its key signs for it.
import { execFile } from 'node:child_process'
import { createPrivateKey, X509Certificate } from 'node:crypto'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'
import { createSelfSignedCertificate } from '../../src/emulator/cert.js'

const run = promisify(execFile)

it('makes certificates that parse, every time, with the service names', async () => {
  for (let i = 0; i < 50; i++) {
    const { certPem, keyPem } = await createSelfSignedCertificate(new Date(), 24 * 60 * 60 * 1000)
    const cert = new X509Certificate(certPem)
    expect(cert.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1')
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1')
    expect(cert.checkHost('localhost')).toBe('localhost')
    expect(cert.verify(cert.publicKey)).toBe(true)
    expect(cert.checkPrivateKey(createPrivateKey(keyPem))).toBe(true)
    expect(cert.ca).toBe(true)
    expect(BigInt(`0x${cert.serialNumber}`) > 0n).toBe(true)
    if (i === 0) {
      const child = run('openssl', ['x509', '-noout', '-text'])
      child.child.stdin!.end(certPem)
      expect((await child).stdout).toContain('ecdsa-with-SHA256')
    }
  }
})
