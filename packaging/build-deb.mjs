#!/usr/bin/env node
// `npm run package`: builds transferfs_<version>_<arch>.deb, a package a desktop user installs
// with apt and nothing else: it carries the Node runtime this build ran on (the distributions'
// own Node is too old: Debian 12 has 18), the compiled code with the production dependencies
// only, and the prebuilt FUSE addons for every library soname a distribution may have, so
// that installing it needs no compiler, npm or git. Works from a clean clone: it installs the
// build's own dependencies first when they are missing.
//
//   node packaging/build-deb.mjs [--arch A] [--out DIR] [--version V] [--repo-url URL --keyring FILE]
//
// --arch: amd64 or arm64 (default: this machine's). For another architecture than this
// machine's, the runtime is the Node.js project's build of the same Node version for it
// (node-runtime.mjs) and the addons are cross-built (scripts/cross-addons.mjs).
// --out: where the .deb goes (default: the repository's root, as `npm pack` does).
// --version: the package's version instead of package.json's (a test builds an older one to
// upgrade from). The path of the .deb is the last line on stdout.
// --repo-url, --keyring: the apt repository the package is published in and its public key
// (binary OpenPGP): the package then ships the key and an apt source naming the repository
// (apt-source.mjs), so that `apt upgrade` brings the next version. `npm run release` gives
// them; a build without them ships neither.
import { execFileSync } from 'node:child_process'
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { changelog, control, DOC_DIR, LIB_DIR, PACKAGE, runtimeDependencies } from './metadata.mjs'
import { copyrightFile } from './copyright.mjs'
import { nodeRuntime } from './node-runtime.mjs'
import { architecture, hostArchitecture } from '../scripts/architectures.mjs'
import { KEYRING_PATH, LINTIAN_OVERRIDE, SOURCES_PATH, sourcesFile } from './apt-source.mjs'
import { pruneRuntimeTree } from './prune.mjs'
import { installDesktopFiles } from './desktop-files.mjs'

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
const { values: args } = parseArgs({ options: { arch: { type: 'string' }, out: { type: 'string' }, version: { type: 'string' }, 'repo-url': { type: 'string' }, keyring: { type: 'string' } } })
const version = args.version ?? pkg.version
const host = hostArchitecture()
const arch = argArchitecture(args.arch)
const cross = arch.debian !== host.debian
const outDir = path.resolve(args.out ?? ROOT)
const aptSource = repositorySource(args['repo-url'], args.keyring)
// Reproducible: file times, the changelog's and the man page's date come from the last commit,
// not from the clock of the machine that builds.
const epoch = process.env.SOURCE_DATE_EPOCH ?? sourceDateEpoch()

function run(cmd, argv, opts = {}) {
  return execFileSync(cmd, argv, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20, ...opts })
}

/** The last commit's time; outside a git checkout (an unpacked tarball), package.json's. */
function sourceDateEpoch() {
  try {
    return run('git', ['log', '-1', '--format=%ct'], { stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return String(Math.floor(statSync(path.join(ROOT, 'package.json')).mtimeMs / 1000))
  }
}

function step(what) {
  process.stderr.write(`package: ${what}\n`)
}

// 0. The tools, named by the package that brings each, before anything is built.
const STRIP = cross ? `${arch.triplet}-strip` : 'strip'
const TOOLS = { 'dpkg-deb': 'dpkg', 'dpkg-shlibdeps': 'dpkg-dev', [STRIP]: cross ? `binutils-${arch.triplet}` : 'binutils', gzip: 'gzip', md5sum: 'coreutils' }
const missing = Object.entries(TOOLS).filter(([tool]) => execFileSync('sh', ['-c', `command -v ${tool} || true`], { encoding: 'utf8' }).trim() === '')
if (missing.length > 0) {
  process.stderr.write(`package: missing ${missing.map(([t]) => t).join(', ')}: install ${[...new Set(missing.map(([, p]) => p))].join(' ')} (Debian: sudo apt install ...)\n`)
  process.exit(1)
}

// 1. Build: dependencies (a clean clone has none), the three FUSE addons, the TypeScript.
if (!existsSync(path.join(ROOT, 'node_modules', '.bin', 'tsc'))) {
  step('npm ci')
  run('npm', ['ci', '--no-audit', '--no-fund'], { stdio: ['ignore', 'inherit', 'inherit'] })
}
step(`FUSE addons${cross ? ` (cross-built for ${arch.debian})` : ''}`)
run(process.execPath, ['scripts/build-fuse-addon.mjs', '--prebuilds', ...(cross ? ['--arch', arch.debian] : [])], { stdio: ['ignore', 'inherit', 'inherit'] })
const runtime = nodeRuntime(arch, host)
step('TypeScript')
run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { stdio: ['ignore', 'inherit', 'inherit'] })

// 2. The tree the package installs.
const stage = mkdtempSync(path.join(os.tmpdir(), 'transferfs-deb-'))
const tree = path.join(stage, 'root')
const lib = path.join(tree, LIB_DIR)
const doc = path.join(tree, DOC_DIR)
try {
  step(`staging in ${stage}`)
  mkdirSync(lib, { recursive: true })
  // The code: package.json for "type": "module" and the version, the compiled modules without
  // their source maps (the TypeScript they point at is not shipped), the demo's fixtures.
  writeFileSync(path.join(lib, 'package.json'), `${JSON.stringify({ name: pkg.name, version, description: pkg.description, type: pkg.type, license: pkg.license, private: true, dependencies: runtimeDeps(pkg) }, null, 2)}\n`)
  cpSync(path.join(ROOT, 'dist', 'src'), path.join(lib, 'dist', 'src'), { recursive: true, filter: (src) => !src.endsWith('.map') })
  cpSync(path.join(ROOT, 'src', 'emulator', 'fixtures'), path.join(lib, 'src', 'emulator', 'fixtures'), { recursive: true })
  const prebuilds = path.join(lib, 'prebuilds', `linux-${arch.node}`)
  cpSync(path.join(ROOT, 'prebuilds', `linux-${arch.node}`), prebuilds, { recursive: true })
  for (const soname of ['libfuse.so.2', 'libfuse3.so.3', 'libfuse3.so.4']) {
    if (!existsSync(path.join(prebuilds, `${soname}.node`))) throw new Error(`the ${soname} addon was not built`)
  }
  step('production dependencies')
  pruneRuntimeTree(ROOT, lib)
  plainModules(lib)
  // The lintian tags this package is known to carry, each with its reason (docs/packaging.md).
  // With the repository's source, the tag it raises too (apt-source.mjs).
  write(path.join(tree, 'usr', 'share', 'lintian', 'overrides', PACKAGE), readFileSync(path.join(ROOT, 'packaging', 'lintian-overrides'), 'utf8') + (aptSource ? LINTIAN_OVERRIDE : ''))

  // The runtime: this very Node (or its version's official build for arch), stripped of its
  // debug symbols, with its licence.
  const nodeDir = path.join(lib, 'node')
  mkdirSync(path.join(nodeDir, 'bin'), { recursive: true })
  cpSync(runtime.node, path.join(nodeDir, 'bin', 'node'))
  cpSync(runtime.license, path.join(nodeDir, 'LICENSE'))
  for (const file of [path.join(nodeDir, 'bin', 'node'), ...readdirSync(prebuilds).map((f) => path.join(prebuilds, f))]) {
    run(STRIP, ['--strip-unneeded', '--remove-section=.comment', '--remove-section=.note', file])
  }

  // The commands, the units, the shells' completion, the manual.
  const bin = path.join(tree, 'usr', 'bin', 'transferfs')
  mkdirSync(path.dirname(bin), { recursive: true })
  writeFileSync(bin, `#!/bin/sh\n# transferfs runs on the Node runtime this package carries, whatever Node the system has.\nexec /${LIB_DIR}/node/bin/node /${LIB_DIR}/dist/src/cli/main.js "$@"\n`)
  install(path.join(ROOT, 'contrib', 'mount.transferfs'), path.join(tree, 'sbin', 'mount.transferfs'))
  install(path.join(ROOT, 'contrib', 'systemd', 'transferfs@.service'), path.join(tree, 'usr', 'lib', 'systemd', 'user', 'transferfs@.service'))
  // The packaged runtime writes them, where this machine runs it; for another architecture this
  // Node does (the same version, and the same code: what they print does not depend on the machine).
  const builder = cross ? process.execPath : path.join(nodeDir, 'bin', 'node')
  const cli = (argv) => run(builder, [path.join(lib, 'dist', 'src', 'cli', 'main.js'), ...argv])
  write(path.join(tree, 'usr', 'share', 'bash-completion', 'completions', 'transferfs'), cli(['completion', 'bash']))
  write(path.join(tree, 'usr', 'share', 'zsh', 'vendor-completions', '_transferfs'), cli(['completion', 'zsh']))
  const man = path.join(tree, 'usr', 'share', 'man')
  gzipTo(run(builder, [path.join(lib, 'dist', 'src', 'cli', 'manual.js')], { env: { ...process.env, SOURCE_DATE_EPOCH: epoch } }), path.join(man, 'man1', 'transferfs.1.gz'))
  // mount(8) finds the helper by its name; its options are a section of transferfs(1).
  gzipTo('.so man1/transferfs.1\n', path.join(man, 'man8', 'mount.transferfs.8.gz'))
  // The file managers' extensions, the send dialog, Dolphin's service menus (desktop-files.mjs).
  const desktopPrograms = installDesktopFiles(ROOT, tree)

  // The repository's key and source, when it has one. The source is a conffile: dpkg leaves a
  // user's changes to it (a mirror, the source commented out) in place across upgrades.
  const conffiles = []
  if (aptSource) {
    write(path.join(tree, KEYRING_PATH), aptSource.keyring)
    write(path.join(tree, SOURCES_PATH), aptSource.sources)
    conffiles.push(`/${SOURCES_PATH}`)
  }

  // Debian's documents: the copyright of everything shipped, the changelog.
  write(path.join(doc, 'copyright'), copyrightFile(lib, runtime.version))
  gzipTo(changelog(version, epoch), path.join(doc, 'changelog.gz'))

  normalise(tree, desktopPrograms)
  // dpkg keeps conffiles' sums itself, as dh_md5sums leaves them out.
  const sums = md5sums(tree, conffiles)
  const debian = path.join(tree, 'DEBIAN')
  mkdirSync(debian)
  if (conffiles.length > 0) {
    write(path.join(debian, 'conffiles'), conffiles.map((f) => `${f}\n`).join(''))
    chmodSync(path.join(debian, 'conffiles'), 0o644)
  }
  step('dependencies of the binaries')
  const depends = runtimeDependencies(stage, [path.join(nodeDir, 'bin', 'node'), path.join(prebuilds, 'libfuse3.so.3.node')], arch)
  write(path.join(debian, 'control'), control({ version, arch: arch.debian, depends, installedKiB: installedKiB(tree) }))
  write(path.join(debian, 'md5sums'), sums)
  chmodSync(path.join(debian, 'control'), 0o644)
  chmodSync(path.join(debian, 'md5sums'), 0o644)

  mkdirSync(outDir, { recursive: true })
  const deb = path.join(outDir, `${PACKAGE}_${version}_${arch.debian}.deb`)
  step(`dpkg-deb → ${deb}`)
  run('dpkg-deb', ['--root-owner-group', '-Zxz', '--build', tree, deb], { env: { ...process.env, SOURCE_DATE_EPOCH: epoch }, stdio: ['ignore', 'ignore', 'inherit'] })
  process.stdout.write(`${deb}\n`)
} finally {
  rmSync(stage, { recursive: true, force: true })
}

/** The key and source to ship for --repo-url and --keyring (both or neither), checked first. */
function repositorySource(url, keyringFile) {
  if (url === undefined && keyringFile === undefined) return null
  if (url === undefined || keyringFile === undefined) {
    process.stderr.write('package: --repo-url and --keyring go together: the repository\'s URL and its public key (`npm run release` gives both)\n')
    process.exit(2)
  }
  let keyring
  try {
    keyring = readFileSync(keyringFile)
  } catch (err) {
    process.stderr.write(`package: --keyring ${keyringFile}: ${err.message}\n`)
    process.exit(2)
  }
  // apt reads a keyring named *.gpg as binary OpenPGP: the first byte of a packet has its top bit set (armour is text).
  if (keyring.length === 0 || (keyring[0] & 0x80) === 0) {
    process.stderr.write(`package: --keyring ${keyringFile}: not a binary OpenPGP key (export it with \`gpg --export KEY\`, without --armor)\n`)
    process.exit(2)
  }
  try {
    return { keyring, sources: sourcesFile(url) }
  } catch (err) {
    process.stderr.write(`package: ${err.message}\n`)
    process.exit(2)
  }
}

/** The architecture --arch names (Debian's name), else this machine's. */
function argArchitecture(name) {
  if (name === undefined) return hostArchitecture()
  try {
    return architecture(name)
  } catch (err) {
    process.stderr.write(`package: --arch: ${err.message}\n`)
    process.exit(2)
  }
}

/**
 * package.json's dependencies less the build's own (patch-package applies our patch at build
 * time), with the FUSE addon: optional for npm (macOS mounts without it), the Linux package's own.
 */
function runtimeDeps(p) {
  const { 'patch-package': _build, ...rest } = p.dependencies
  return { ...rest, ...p.optionalDependencies }
}

function write(file, text) {
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, text)
}

function install(from, to) {
  mkdirSync(path.dirname(to), { recursive: true })
  cpSync(from, to)
}

function gzipTo(text, file) {
  mkdirSync(path.dirname(file), { recursive: true })
  // -n: no name or time stamp in the header, so the same text gives the same bytes.
  writeFileSync(file, execFileSync('gzip', ['-9n'], { input: text }))
}

/**
 * Every module as a plain module: no `#!` line (nothing here is run as a script: /usr/bin/transferfs
 * starts main.js with the packaged runtime) and no pointer to a source map that is not shipped.
 */
function plainModules(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !/\.[cm]?js$/.test(entry.name)) continue
    const file = path.join(entry.parentPath, entry.name)
    const text = readFileSync(file, 'utf8')
    const plain = text.replace(/^#![^\n]*\n/, '').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n')
    if (plain !== text) writeFileSync(file, plain)
  }
}

/** Modes as Debian wants them: folders and programs (those named, and `more`) 0755, everything else 0644; times from the source. */
function normalise(dir, more = []) {
  const programs = new Set([path.join(tree, 'usr', 'bin', 'transferfs'), path.join(tree, 'sbin', 'mount.transferfs'), path.join(lib, 'node', 'bin', 'node'), ...more])
  const t = Number(epoch)
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const file = path.join(entry.parentPath, entry.name)
    chmodSync(file, entry.isDirectory() || programs.has(file) ? 0o755 : 0o644)
  }
  chmodSync(dir, 0o755)
  run('find', [dir, '-exec', 'touch', '-h', '-d', `@${t}`, '{}', '+'])
}

function installedKiB(dir) {
  return Number(run('du', ['-sk', '--apparent-size', dir]).split('\t')[0])
}

function md5sums(dir, conffiles) {
  const files = run('find', ['.', '-type', 'f', '-printf', '%P\\0'], { cwd: dir }).split('\0').filter((f) => f && !conffiles.includes(`/${f}`)).sort()
  return run('md5sum', ['--', ...files], { cwd: dir })
}
