// A self-signed certificate for 127.0.0.1 and localhost, for the local service's HTTPS.
// Built with @peculiar/x509 (X.509 encoding maintained against the standard) over
// node:crypto's WebCrypto; an ECDSA P-256 key takes well under a millisecond to make.
import 'reflect-metadata' // what @peculiar/x509's dependency injection needs, loaded first
import { createPrivateKey, randomBytes, webcrypto } from 'node:crypto'
import * as x509 from '@peculiar/x509'

export interface Certificate {
  /** The certificate, PEM: the file clients trust as their `ca`. */
  certPem: string
  /** The private key, PEM (kept in memory, never written). */
  keyPem: string
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }

/** The library's WebCrypto type (the DOM's); node:crypto's webcrypto is that interface. */
type GeneratorCrypto = NonNullable<Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[1]>

/** `name`: the certificate's subject (and issuer), the local service's unless given. */
export async function createSelfSignedCertificate(now: Date, ttlMs: number, name = 'CN=transferfs local service'): Promise<Certificate> {
  const crypto = webcrypto as unknown as GeneratorCrypto
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as unknown as x509.X509CertificateCreateSelfSignedParams['keys']
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    // Positive and of full length: the top bit clear, the next one set.
    serialNumber: ((randomBytes(1)[0]! & 0x3f) | 0x40).toString(16).padStart(2, '0') + randomBytes(15).toString('hex'),
    name,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + ttlMs),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'localhost' }, { type: 'ip', value: '127.0.0.1' }]),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
    ],
  }, crypto)
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey as unknown as webcrypto.CryptoKey))
  return {
    certPem: cert.toString('pem') + '\n',
    keyPem: createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({ type: 'pkcs8', format: 'pem' }) as string,
  }
}
