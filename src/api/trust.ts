// The certificate authorities the client trusts: Node's own list, the system's store and
// the `ca` setting's, all three. Node trusts only the list it was built with, so the root
// a company's IT installs into the system's store (for a TLS-inspecting proxy, for an
// internal service) is trusted by curl and not by Node; and a TLS context given `ca`
// trusts that alone, so a `ca` meant as one more authority would lose every public one.
// The system's store is found as OpenSSL finds it: SSL_CERT_FILE and SSL_CERT_DIR when
// set, else the bundle the distribution keeps.
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls'

/** The variables OpenSSL reads for its store: a PEM bundle, and folders of certificates (colon-separated). */
export const CERT_VARIABLES = { file: 'SSL_CERT_FILE', dir: 'SSL_CERT_DIR' } as const

/** Where distributions keep their store as one PEM bundle; the first found is the system's. */
export const DISTRIBUTION_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt', // Debian, Ubuntu, Arch
  '/etc/pki/tls/certs/ca-bundle.crt', // Fedora, RHEL
  '/etc/ssl/ca-bundle.pem', // openSUSE
  '/etc/ssl/cert.pem', // Alpine
] as const

/** Node's own variable for authorities added to its list, which a context given `ca` would leave out. */
const NODE_EXTRA = 'NODE_EXTRA_CA_CERTS'

/** A certificate file of a store folder, as OpenSSL looks one up: by its subject's hash. */
const HASHED_NAME = /^[0-9a-f]{8}\.\d+$/

type Environment = Readonly<Record<string, string | undefined>>

export interface StoreLocation {
  files: string[]
  dirs: string[]
}

/** Where the system's store is; `exists` says whether a bundle is there. */
export function systemStoreLocation(env: Environment, exists: (file: string) => boolean): StoreLocation {
  const file = env[CERT_VARIABLES.file]
  const dir = env[CERT_VARIABLES.dir]
  if (file || dir) return { files: file ? [file] : [], dirs: dir ? dir.split(':').filter(Boolean) : [] }
  const bundle = DISTRIBUTION_BUNDLES.find((f) => exists(f))
  return { files: bundle ? [bundle] : [], dirs: [] }
}

/** Why a file or folder a trust setting or variable names cannot be used, in plain words. */
export function unreadableReason(err: unknown): string {
  switch ((err as NodeJS.ErrnoException).code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return 'which is not there'
    case 'EACCES':
    case 'EPERM':
      return 'which this user may not read'
    case 'EISDIR':
      return 'which is a folder, not a file'
    default:
      return `which cannot be read (${(err as Error).message})`
  }
}

/**
 * The certificates (PEM) trusted besides Node's list: the system's store and what
 * NODE_EXTRA_CA_CERTS adds; no bundle anywhere is an empty store, as it is to OpenSSL.
 * A file or folder the variables name that cannot be read is left out with one warning
 * naming the variable and the file, and the other roots go on working: the variables are
 * inherited, not chosen (a clean root's environment may name a bundle that package
 * ca-certificates would have installed), as Node does for NODE_EXTRA_CA_CERTS.
 */
export async function readSystemStore(env: Environment, warn: (message: string) => void): Promise<string[]> {
  const where = systemStoreLocation(env, existsSync)
  const leftOut = (what: string, err: unknown): void =>
    warn(`${what}, ${unreadableReason(err)}: its certificates are left out; Node's own authorities and the ca setting's are still trusted`)
  const certificates: string[] = []
  for (const file of where.files) {
    const text = await readFile(file, 'utf8').catch((err: unknown) => {
      leftOut(env[CERT_VARIABLES.file] ? `${CERT_VARIABLES.file} names ${file}` : `the system's certificate store is ${file}`, err)
      return ''
    })
    certificates.push(...pemCertificates(text))
  }
  for (const dir of where.dirs) {
    const names = await readdir(dir).catch((err: unknown) => {
      leftOut(`${CERT_VARIABLES.dir} names ${dir}`, err)
      return []
    })
    for (const name of names.filter((n) => HASHED_NAME.test(n)).sort()) {
      certificates.push(...pemCertificates(await readFile(path.join(dir, name), 'utf8').catch(() => '')))
    }
  }
  const extra = env[NODE_EXTRA]
  // Node warns about an unreadable one itself, and goes on without it.
  if (extra) certificates.push(...pemCertificates(await readFile(extra, 'utf8').catch(() => '')))
  return certificates
}

/** Each certificate of a PEM text (a bundle, the `ca` file). */
export function pemCertificates(text: string | Buffer): string[] {
  return String(text).match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []
}

/**
 * One TLS context trusting Node's list, `system` and `extra` (PEM). Each certificate once:
 * the system's store mostly repeats Node's list, and parsing is the context's whole cost.
 */
export function trustingContext(system: readonly string[], extra: string | Buffer | undefined): SecureContext {
  const byBody = new Map<string, string>()
  for (const pem of [...rootCertificates, ...system, ...(extra === undefined ? [] : pemCertificates(extra))]) {
    byBody.set(pem.replace(/-----[^-]+-----|\s/g, ''), pem)
  }
  return createSecureContext({ ca: [...byBody.values()] })
}
