#!/usr/bin/env node
// `npm run release -- --out DIR --repo-url URL [--key ID] [--version V] [--arch A,B]`: builds
// the .deb of each architecture (build-deb.mjs, shipping the repository's key and apt source;
// amd64 and arm64 unless --arch names fewer) and adds them to a signed apt repository tree in
// DIR, made with Debian's own apt-ftparchive, for static hosting at URL:
//
//   DIR/dists/stable/{InRelease,Release,Release.gpg}
//   DIR/dists/stable/main/binary-<arch>/Packages{,.gz}   one per architecture in pool/
//   DIR/pool/main/t/transferfs/transferfs_<version>_<arch>.deb
//   DIR/transferfs-archive-keyring.gpg, DIR/transferfs.sources   for the first-time steps
//
// Run again with a newer version into the same DIR, it adds that version and signs the
// indices afresh; the older versions stay in pool/ (apt installs the highest).
//
// The signing key is the one secret key in $GNUPGHOME, or the one --key names; it never
// lives in the repository. It must be Ed25519 or RSA of 3072 bits or more, and every
// signature on it SHA-256 or stronger: Debian 13's apt verifies with sqv, which refuses
// SHA-1 self-signatures since 2026-02-01, and a repository signed with such a key stops
// updating for every user at once. The indices are signed with SHA-512.
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { COMPONENT, KEYRING_NAME, repositoryUrl, SOURCES_NAME, sourcesFile, SUITE } from './apt-source.mjs'
import { PACKAGE } from './metadata.mjs'
import { architecture, ARCHITECTURES } from '../scripts/architectures.mjs'

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
/** OpenPGP hash algorithms (RFC 4880 9.4) a signature on the key or the indices may use: SHA-256, SHA-384, SHA-512. */
const STRONG_DIGESTS = new Map([[8, 'SHA-256'], [9, 'SHA-384'], [10, 'SHA-512']])
const WEAK_DIGESTS = new Map([[1, 'MD5'], [2, 'SHA-1'], [3, 'RIPEMD-160'], [11, 'SHA-224']])
/** OpenPGP public key algorithms: RSA, and EdDSA (22, with the curve ed25519) or Ed25519 (27). */
const RSA = 1
const EDDSA = 22
const ED25519 = 27
const MIN_RSA_BITS = 3072
/** Where a package of PACKAGE goes in the pool, as Debian lays one out. */
const POOL = path.join('pool', COMPONENT, PACKAGE[0], PACKAGE)

class ReleaseError extends Error {}

function fail(message) {
  throw new ReleaseError(message)
}

function run(cmd, argv, opts = {}) {
  return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20, ...opts })
}

function step(what) {
  process.stderr.write(`release: ${what}\n`)
}

/** Each tool, named by the Debian package that brings it. */
const TOOLS = { gpg: 'gnupg', gpgv: 'gpgv', 'apt-ftparchive': 'apt-utils', gzip: 'gzip', 'dpkg-deb': 'dpkg' }

function checkTools() {
  const missing = Object.entries(TOOLS).filter(([tool]) => run('sh', ['-c', `command -v ${tool} || true`]).trim() === '')
  if (missing.length > 0) fail(`missing ${missing.map(([t]) => t).join(', ')}: install ${[...new Set(missing.map(([, p]) => p))].join(' ')} (Debian: sudo apt install ...)`)
}

/** The colon listing (gpg's DETAILS) of the secret keys matching id, or of all of them. */
function secretKeys(id) {
  let text
  try {
    text = run('gpg', ['--batch', '--with-colons', '--fixed-list-mode', '--list-secret-keys', ...(id ? [id] : [])])
  } catch (err) {
    if (id) fail(`--key ${id}: no secret key of that name in ${gnupgHome()}`)
    fail(`no secret key in ${gnupgHome()}: ${String(err.stderr).trim().split('\n').at(-1)}`)
  }
  const keys = []
  for (const line of text.split('\n')) {
    const f = line.split(':')
    if (f[0] === 'sec') keys.push({ validity: f[1], bits: Number(f[2]), algo: Number(f[3]), curve: f[16], caps: f[11], fpr: '', uid: '', subkeys: [] })
    else if (f[0] === 'ssb' && keys.length > 0) keys.at(-1).subkeys.push({ validity: f[1], bits: Number(f[2]), algo: Number(f[3]), curve: f[16], caps: f[11], fpr: '' })
    else if (f[0] === 'fpr' && keys.length > 0) {
      const key = keys.at(-1)
      const sub = key.subkeys.at(-1)
      if (sub && !sub.fpr) sub.fpr = f[9]
      else if (!key.fpr) key.fpr = f[9]
    } else if (f[0] === 'uid' && keys.length > 0 && !keys.at(-1).uid) keys.at(-1).uid = f[9]
  }
  return keys
}

function gnupgHome() {
  return process.env.GNUPGHOME || path.join(os.homedir(), '.gnupg')
}

/** The release key: the one secret key there is, or the one --key names. */
function signingKey(id) {
  const keys = secretKeys(id)
  const listed = (ks) => ks.map((k) => `${k.fpr} ${k.uid}`).join('; ')
  if (keys.length === 0) fail(`no secret key in ${gnupgHome()}: import the release key there, or set GNUPGHOME to the folder that holds it`)
  if (keys.length > 1) fail(`${id ? `--key ${id} names` : `${gnupgHome()} holds`} ${keys.length} secret keys (${listed(keys)}): name the release key with --key FINGERPRINT`)
  return keys[0]
}

/** Why a key (or subkey) cannot sign the repository, or null. */
function weakness(k) {
  if (k.validity === 'r') return 'it is revoked'
  if (k.validity === 'e') return 'it has expired'
  if (k.algo === ED25519 || (k.algo === EDDSA && k.curve === 'ed25519')) return null
  if (k.algo === RSA) return k.bits >= MIN_RSA_BITS ? null : `it is RSA of ${k.bits} bits (${MIN_RSA_BITS} or more are wanted)`
  return `its algorithm is ${k.curve || `OpenPGP algorithm ${k.algo}`} (Ed25519 or RSA of ${MIN_RSA_BITS} bits or more are wanted)`
}

/** Refuses a key apt would refuse, or should: weak, expired, or certified with a weak hash. */
function checkKey(key, exported) {
  // The primary key makes the self-signatures; a signing subkey, if any, signs the indices.
  for (const k of [key, ...key.subkeys.filter((s) => s.caps.includes('s'))]) {
    const why = weakness(k)
    if (why) fail(`the release key ${k.fpr} cannot sign the repository: ${why}`)
  }
  const digests = [...run('gpg', ['--batch', '--list-packets'], { input: exported, stdio: ['pipe', 'pipe', 'pipe'] }).matchAll(/digest algo (\d+)/g)].map((m) => Number(m[1]))
  const weak = [...new Set(digests.filter((d) => !STRONG_DIGESTS.has(d)))]
  if (weak.length > 0) {
    fail(`the release key ${key.fpr} carries signatures made with ${weak.map((d) => WEAK_DIGESTS.get(d) ?? `hash algorithm ${d}`).join(', ')}: ` +
      'Debian 13\'s apt (sqv) refuses SHA-1 self-signatures, so every user would stop getting updates. Make them again with SHA-512: ' +
      `\`gpg --cert-digest-algo SHA512 --quick-set-expire ${key.fpr} <expiry>\` and, for its subkeys, \`gpg --cert-digest-algo SHA512 --quick-set-expire ${key.fpr} <expiry> '*'\``)
  }
  if (digests.length === 0) fail(`the release key ${key.fpr} exported with no self-signature`)
}

/** The version and architecture of a .deb, from its control file. */
function debFields(file) {
  const [version, arch] = run('dpkg-deb', ['--showformat=${Version}\\n${Architecture}\\n', '--show', file]).split('\n')
  return { version, arch }
}

/** Whether a is a lower Debian version than b. */
function versionLower(a, b) {
  try {
    run('dpkg', ['--compare-versions', a, 'lt', b])
    return true
  } catch {
    return false
  }
}

/** Puts deb into the pool: never over another file of the same name, never below a version already published. */
function addToPool(out, deb) {
  const pool = path.join(out, POOL)
  mkdirSync(pool, { recursive: true })
  const target = path.join(pool, path.basename(deb))
  const { version, arch } = debFields(deb)
  if (existsSync(target)) {
    if (readFileSync(target).equals(readFileSync(deb))) return target
    fail(`${target} is published already, with other bytes: apt would refuse one of them for its hash; release a newer version (--version)`)
  }
  for (const name of readdirSync(pool).filter((n) => n.endsWith('.deb'))) {
    const other = debFields(path.join(pool, name))
    if (other.arch === arch && !versionLower(other.version, version)) fail(`${POOL}/${name} is version ${other.version}, not lower than ${version}: apt would never install ${version}; release a higher version`)
  }
  copyFileSync(deb, `${target}.partial`)
  renameSync(`${target}.partial`, target)
  return target
}

/** Writes text to file through a temporary name, so that no reader sees half of it. */
function writeAtomically(file, data) {
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(`${file}.partial`, data)
  renameSync(`${file}.partial`, file)
}

/**
 * The indices of every architecture the pool has, the Release file over them and its two
 * signatures, made in a folder of their own and then put in place of the old ones: the
 * Release file must not list the old Release, and a host serving the tree meanwhile never
 * serves an index without its signature.
 */
function writeIndices(out, fpr) {
  const dist = path.join(out, 'dists', SUITE)
  const next = `${dist}.next`
  rmSync(next, { recursive: true, force: true })
  // SHA-256 and SHA-512 only: apt uses the strongest a file lists, and MD5 and SHA-1 protect nothing.
  const hashes = ['-o', 'APT::FTPArchive::MD5=false', '-o', 'APT::FTPArchive::SHA1=false']
  const archs = [...new Set(readdirSync(path.join(out, POOL)).filter((n) => n.endsWith('.deb')).map((n) => debFields(path.join(out, POOL, n)).arch))].sort()
  for (const arch of archs) {
    // Run from the repository's root: each Filename is then relative to it, as apt wants.
    const packages = run('apt-ftparchive', [...hashes, '--arch', arch, 'packages', path.join('pool', COMPONENT)], { cwd: out })
    const dir = path.join(next, COMPONENT, `binary-${arch}`)
    mkdirSync(dir, { recursive: true })
    writeFileSync(path.join(dir, 'Packages'), packages)
    writeFileSync(path.join(dir, 'Packages.gz'), execFileSync('gzip', ['-9n'], { input: packages }))
  }
  const field = (name, value) => ['-o', `APT::FTPArchive::Release::${name}=${value}`]
  const release = run('apt-ftparchive', [...hashes,
    ...field('Origin', PACKAGE), ...field('Label', PACKAGE), ...field('Suite', SUITE), ...field('Codename', SUITE),
    ...field('Architectures', archs.join(' ')), ...field('Components', COMPONENT),
    ...field('Description', `${PACKAGE}: mount a Transfer Service account as a folder`),
    'release', '.',
  ], { cwd: next })
  writeFileSync(path.join(next, 'Release'), release)
  const sign = (mode, file) =>
    run('gpg', ['--batch', '--yes', '--local-user', fpr, '--digest-algo', 'SHA512', '--armor', mode, '--output', path.join(next, file)], { input: release, stdio: ['pipe', 'pipe', 'pipe'] })
  sign('--detach-sign', 'Release.gpg')
  sign('--clearsign', 'InRelease')
  const old = `${dist}.old`
  rmSync(old, { recursive: true, force: true })
  if (existsSync(dist)) renameSync(dist, old)
  renameSync(next, dist)
  rmSync(old, { recursive: true, force: true })
  return archs
}

function main() {
  const { values: args } = parseArgs({ options: { out: { type: 'string' }, 'repo-url': { type: 'string' }, key: { type: 'string' }, version: { type: 'string' }, arch: { type: 'string' } } })
  if (!args.out || !args['repo-url']) fail('usage: npm run release -- --out DIR --repo-url URL [--key ID] [--version V] [--arch amd64,arm64]')
  const archs = (args.arch ?? Object.keys(ARCHITECTURES).join(',')).split(',')
  for (const name of archs) {
    try {
      architecture(name)
    } catch (err) {
      fail(`--arch: ${err.message}`)
    }
  }
  const out = path.resolve(args.out)
  let url
  try {
    url = repositoryUrl(args['repo-url'])
  } catch (err) {
    fail(err.message)
  }
  checkTools()

  const key = signingKey(args.key)
  // Minimal: the key and its self-signatures, without others' certifications, as apt needs it.
  const exported = execFileSync('gpg', ['--batch', '--export', '--export-options', 'export-minimal', key.fpr])
  checkKey(key, exported)
  step(`signing with ${key.fpr} (${key.uid})`)
  const keyringAtRoot = path.join(out, KEYRING_NAME)
  if (existsSync(keyringAtRoot) && !readFileSync(keyringAtRoot).equals(exported)) {
    fail(`${keyringAtRoot} is another key (or another copy of it): the systems that trust the published key would refuse indices signed with this one. ` +
      'A new key is a rotation: publish it beside the old one first; remove the file if this repository is new')
  }

  const work = mkdtempSync(path.join(os.tmpdir(), 'transferfs-release-'))
  try {
    const keyring = path.join(work, KEYRING_NAME)
    writeFileSync(keyring, exported)
    // Every package is built before any goes into the pool: a build that fails publishes nothing.
    const built = archs.map((arch) => {
      step(`building the ${arch} package`)
      return run(process.execPath, [path.join(ROOT, 'packaging', 'build-deb.mjs'), '--arch', arch, '--out', work, '--repo-url', url, '--keyring', keyring, ...(args.version ? ['--version', args.version] : [])],
        { stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').at(-1)
    })
    mkdirSync(out, { recursive: true })
    const debs = built.map((file) => addToPool(out, file))
    step(`indices and signatures in ${path.join(out, 'dists', SUITE)}`)
    const published = writeIndices(out, key.fpr)
    writeAtomically(keyringAtRoot, exported)
    writeAtomically(path.join(out, SOURCES_NAME), sourcesFile(url))
    // What apt will do with it: the published key verifies the signed index.
    run('gpgv', ['--keyring', keyringAtRoot, path.join(out, 'dists', SUITE, 'InRelease')])
    step(`${debs.map((deb) => path.relative(out, deb)).join(', ')} published at ${url}; the repository has ${published.join(', ')}`)
    process.stdout.write(debs.map((deb) => `${deb}\n`).join(''))
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

try {
  main()
} catch (err) {
  if (err instanceof ReleaseError) {
    process.stderr.write(`release: ${err.message}\n`)
    process.exit(2)
  }
  if (err.stderr) process.stderr.write(String(err.stderr))
  throw err
}
