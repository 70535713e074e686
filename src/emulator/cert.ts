// A self-signed certificate for 127.0.0.1 and localhost, made with node:crypto alone.
// Only the handful of DER structures an X.509 v3 certificate needs are encoded here.
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'

export interface Certificate {
  /** The certificate, PEM: the file clients trust as their `ca`. */
  certPem: string
  /** The private key, PEM (kept in memory, never written). */
  keyPem: string
}

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n])
  const bytes: number[] = []
  for (let v = n; v > 0; v >>>= 8) bytes.unshift(v & 0xff)
  return Buffer.from([0x80 | bytes.length, ...bytes])
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content)
  return Buffer.concat([Buffer.from([tag]), length(body.length), body])
}

const seq = (...c: Buffer[]) => tlv(0x30, ...c)
const set = (...c: Buffer[]) => tlv(0x31, ...c)

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number)
  const out = [40 * parts[0]! + parts[1]!]
  for (const p of parts.slice(2)) {
    const stack = [p & 0x7f]
    for (let v = p >>> 7; v > 0; v >>>= 7) stack.unshift(0x80 | (v & 0x7f))
    out.push(...stack)
  }
  return tlv(0x06, Buffer.from(out))
}

function utcTime(date: Date): Buffer {
  const iso = date.toISOString() // 2025-01-02T03:04:05.678Z
  const s = iso.slice(2, 4) + iso.slice(5, 7) + iso.slice(8, 10) + iso.slice(11, 13) + iso.slice(14, 16) + iso.slice(17, 19) + 'Z'
  return tlv(0x17, Buffer.from(s, 'ascii'))
}

const ECDSA_SHA256 = '1.2.840.10045.4.3.2'

export function createSelfSignedCertificate(now: Date, ttlMs: number): Certificate {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const serial = randomBytes(16)
  // A positive INTEGER in minimal DER: top bit clear, and a non-zero first byte (no padding).
  serial[0] = (serial[0]! & 0x7f) | 0x40
  const name = seq(set(seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from('transferfs local service')))))
  const algorithm = seq(oid(ECDSA_SHA256))
  const altNames = seq(tlv(0x82, Buffer.from('localhost')), tlv(0x87, Buffer.from([127, 0, 0, 1])))
  const extensions = tlv(0xa3, seq(
    seq(oid('2.5.29.19'), tlv(0x01, Buffer.from([0xff])), tlv(0x04, seq(tlv(0x01, Buffer.from([0xff]))))),
    seq(oid('2.5.29.17'), tlv(0x04, altNames)),
    seq(oid('2.5.29.37'), tlv(0x04, seq(oid('1.3.6.1.5.5.7.3.1')))),
  ))
  const tbs = seq(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))),
    tlv(0x02, serial),
    algorithm,
    name,
    seq(utcTime(new Date(now.getTime() - 60_000)), utcTime(new Date(now.getTime() + ttlMs))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    extensions,
  )
  const signature = sign('sha256', tbs, privateKey as KeyObject)
  const der = seq(tbs, algorithm, tlv(0x03, Buffer.from([0]), signature))
  const lines = der.toString('base64').match(/.{1,64}/g) ?? []
  return {
    certPem: `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`,
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  }
}
