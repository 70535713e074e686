#!/usr/bin/env node
// Applies our changes to fuse-native 2.2.6 (patches/fuse-native+2.2.6.patch: the real mtime in
// utimens, a /dev/fuse handle children do not inherit, a working userId, xattrs outside user.*
// answered in C, the INIT reply's max_background, fusermount3, and a libfuse 3 build of the
// same addon) and builds the addon for each FUSE library it can: libfuse 2 always (its headers
// come with fuse-shared-library), libfuse 3 where its headers are installed.
//
// Where this package ships a prebuilt addon for every FUSE library the loader finds, nothing
// is compiled: an install from the tarball needs no compiler. Idempotent: a marker records what
// was built from which source.
//
// The prebuilt addons sit in prebuilds/<platform>-<arch>/, named by the library's soname:
// libfuse.so.2, libfuse3.so.3 (libfuse 3 before 3.17) and libfuse3.so.4 (3.17 on, Debian 13).
// A machine has the headers of one libfuse 3 at most, so the .so.4 one is built against libfuse
// 3.17 built from Debian's source into a prefix of its own (scripts/build-libfuse3.sh), in a
// folder of its own, so that build/Release stays the build for this machine's libraries.
//   --libfuse3.so.4  also builds that one, when its source or its libfuse changed (`npm test`
//                    mounts with it: the vitest project libfuse3.17)
//   --prebuilds      builds all three into prebuilds/ (`npm pack`)
//   --prebuilds --arch arm64
//                    cross-builds the three for that architecture (Debian's name) into
//                    prebuilds/linux-arm64/, for its .deb (cross-addons.mjs)
import { createHash } from 'node:crypto'
import { accessSync, constants, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { execFileSync, spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { librariesIn } from './setup-plan.mjs'
import { hostArchitecture } from './architectures.mjs'

// The layout src/fuse/addon.ts reads: the marker beside the built addons, and the prebuilt
// addons of this package, one per library soname.
const MARKER = path.join('build', 'Release', '.transferfs-addons.json')
const PREBUILDS = path.join('prebuilds', `${process.platform}-${process.arch}`)
const LIBFUSE2 = 'libfuse.so.2'
/** What node-gyp names each build (binding.gyp's targets). */
const TARGET_FILE = { v2: 'fuse.node', v3: 'fuse3.node' }
const LIBFUSE3_NEXT = 'libfuse3.so.4'
/** Where the libfuse3.so.4 addon is built (in fuse-native's folder), with a stamp of what it was built from. */
const NEXT_BUILD = path.join('build', LIBFUSE3_NEXT)
const NEXT_STAMP = '.transferfs-addon.json'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const require = createRequire(import.meta.url)
const dir = path.dirname(require.resolve('fuse-native/package.json'))
const version = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).version
if (version !== '2.2.6') fail(`expected fuse-native 2.2.6, found ${version}; the patch targets 2.2.6 only`)
const forPack = process.argv.includes('--prebuilds')
const forNext = forPack || process.argv.includes(`--${LIBFUSE3_NEXT}`)
const archIndex = process.argv.indexOf('--arch')
const crossArch = archIndex >= 0 ? process.argv[archIndex + 1] : undefined
if (archIndex >= 0 && (!crossArch || !forPack)) fail('--arch ARCH goes with --prebuilds: it cross-builds the prebuilt addons of another architecture\'s package')

applyPatch()

const libfuse3 = libfuse3Soname()
const addons = { [LIBFUSE2]: TARGET_FILE.v2, ...(libfuse3 ? { [libfuse3]: TARGET_FILE.v3 } : {}) }
const wanted = Object.keys(addons)
const marker = path.join(dir, MARKER)
// The source hash is over what the patch changes; src/fuse/addon.ts checks it the same way.
const source = createHash('sha256')
for (const file of ['fuse-native.c', 'binding.gyp', 'index.js']) source.update(readFileSync(path.join(dir, file)))
const sourceHash = source.digest('hex')
if (crossArch !== undefined && crossArch !== hostArchitecture().debian) {
  // Loaded only here: an install from the tarball never cross-builds.
  const { crossBuildAddons } = await import('./cross-addons.mjs')
  crossBuildAddons({ root, fuseDir: dir, sourceHash, archName: crossArch, gypRebuild, fail })
  process.exit(0)
}
const stamp = JSON.stringify({ source: sourceHash, addons })
const upToDate = existsSync(marker) && readFileSync(marker, 'utf8') === stamp
const uncovered = loaderLibraries().filter((lib) => !existsSync(path.join(root, PREBUILDS, `${lib}.node`)))
if (!upToDate && (forPack || uncovered.length > 0)) {
  gypRebuild(dir, process.env)
  writeFileSync(marker, stamp)
  console.error(`build-fuse-addon: built the FUSE addon for ${wanted.join(' and ')}`)
}
if (forPack) copyPrebuilds()
if (forNext) buildNext()
if (forPack) {
  const absent = [LIBFUSE2, 'libfuse3.so.3', LIBFUSE3_NEXT].filter((lib) => !existsSync(path.join(root, PREBUILDS, `${lib}.node`)))
  if (absent.length > 0) fail(`packing ships an addon for each of libfuse.so.2, libfuse3.so.3 and libfuse3.so.4; ${absent.join(', ')} could not be built here (the libfuse3.so.3 one needs the headers of a libfuse 3 before 3.17)`)
}
const unbuilt = uncovered.filter((lib) => !wanted.includes(lib))
if (unbuilt.length > 0) {
  fail(`${unbuilt.join(', ')} has no addon here: install its headers (Debian/Ubuntu: libfuse3-dev, Fedora: fuse3-devel) ` +
    'and run this again; until then transferfs mounts with the other FUSE library, where one is installed')
}

/** The FUSE libraries the dynamic loader finds (ldconfig lives in sbin, which a user's PATH may lack). */
function loaderLibraries() {
  const dirs = ['/sbin', '/usr/sbin', ...(process.env.PATH ?? '').split(':').filter(Boolean)]
  const ldconfig = dirs.map((d) => path.join(d, 'ldconfig')).find((p) => {
    try {
      accessSync(p, constants.X_OK)
      return true
    } catch {
      return false
    }
  })
  return ldconfig ? librariesIn(spawnSync(ldconfig, ['-p'], { encoding: 'utf8' }).stdout ?? '') : []
}

/** patch-package is idempotent: it reports an applied patch as applied and changes nothing. */
function applyPatch() {
  const bin = require.resolve('patch-package/index.js')
  const r = spawnSync(process.execPath, [bin, '--error-on-fail'], { cwd: root, encoding: 'utf8' })
  if (r.status !== 0) {
    fail(`applying patches/fuse-native+2.2.6.patch failed (a changed node_modules/fuse-native?): ` +
      `reinstall it with \`rm -rf node_modules/fuse-native && npm ci\`\n${r.stdout}${r.stderr}`)
  }
}

/** The soname of the libfuse 3 the headers belong to (libfuse3.so.3, or .so.4 from 3.17), or null without headers. */
function libfuse3Soname(env = process.env) {
  const pc = spawnSync('pkg-config', ['--variable=libdir', 'fuse3'], { encoding: 'utf8', env })
  if (pc.status !== 0) return null
  const version = spawnSync('pkg-config', ['--modversion', 'fuse3'], { encoding: 'utf8', env }).stdout.trim()
  const [major, minor] = version.split('.').map(Number)
  return major === 3 && minor >= 17 ? 'libfuse3.so.4' : 'libfuse3.so.3'
}

/**
 * node-gyp rebuild in `cwd` (fuse-native's folder or a copy of it), with pkg-config finding
 * libfuse 3 through `env`; for `crossArch` (Node's name of another architecture), with the
 * compilers `env` names and this machine's Node headers, which it then must have.
 */
function gypRebuild(cwd, env, crossArch) {
  const npmDir = path.dirname(path.dirname(process.execPath))
  const gyp = [
    path.join(npmDir, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    path.join(npmDir, 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ].find((c) => existsSync(c))
  if (!gyp) fail('node-gyp not found next to npm; install it with `npm i -g node-gyp`')
  const missing = ['make', 'g++', 'python3'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
  if (missing.length > 0) {
    fail(`building the FUSE addon needs ${missing.join(', ')}: install them (Debian/Ubuntu: \`sudo apt install build-essential python3\`; ` +
      'Fedora: `sudo dnf install make gcc-c++ python3`)')
  }
  const args = [gyp, 'rebuild', '--loglevel=warn']
  // Build against the installed Node headers when they are there: no download needed.
  if (existsSync('/usr/include/node/node_api.h')) args.push('--nodedir=/usr')
  else if (crossArch) fail('cross-building needs this machine\'s Node headers in /usr/include/node (Debian: the nodejs package of nodesource, or libnode-dev), and never downloads them')
  if (crossArch) args.push(`--arch=${crossArch}`)
  if (libfuse3Soname(env)) args.push('--', '-Dfuse3=1')
  execFileSync(process.execPath, args, { cwd, env, stdio: ['ignore', 'ignore', 'inherit'] })
}

/**
 * prebuilds/<platform>-<arch>/libfuse3.so.4.node: the addon built against the libfuse 3.17 of
 * scripts/build-libfuse3.sh, in a copy of fuse-native's sources inside fuse-native's build
 * folder: binding.gyp's requires resolve from there, nothing ships that folder, and a rebuild of
 * the addons for this machine clears it (this then builds again). Built again when the patch or
 * that libfuse changed, else only copied.
 */
function buildNext() {
  const script = path.join(root, 'scripts', 'build-libfuse3.sh')
  const r = spawnSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
  if (r.status !== 0) fail(`building libfuse 3.17, for the ${LIBFUSE3_NEXT} addon, failed (see above)`)
  const prefix = r.stdout.trim().split('\n').at(-1) ?? ''
  const pkgconfig = path.join(prefix, 'lib', 'pkgconfig')
  const env = { ...process.env, PKG_CONFIG_PATH: [pkgconfig, process.env.PKG_CONFIG_PATH].filter(Boolean).join(':') }
  if (libfuse3Soname(env) !== LIBFUSE3_NEXT) fail(`${pkgconfig} has no libfuse 3.17 or later (pkg-config fuse3)`)
  const nextDir = path.join(dir, NEXT_BUILD)
  const built = path.join(nextDir, 'build', 'Release', TARGET_FILE.v3)
  const nextStamp = JSON.stringify({ source: sourceHash, libfuse: readFileSync(path.join(prefix, '.complete'), 'utf8').trim(), prefix })
  const stampFile = path.join(nextDir, NEXT_STAMP)
  if (!(existsSync(built) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === nextStamp)) {
    rmSync(nextDir, { recursive: true, force: true })
    mkdirSync(nextDir, { recursive: true })
    for (const file of ['package.json', 'binding.gyp', 'fuse-native.c', 'index.js']) copyFileSync(path.join(dir, file), path.join(nextDir, file))
    gypRebuild(nextDir, env)
    writeFileSync(stampFile, nextStamp)
    console.error(`build-fuse-addon: built the FUSE addon for ${LIBFUSE3_NEXT}, against ${prefix}`)
  }
  const out = path.join(root, PREBUILDS, `${LIBFUSE3_NEXT}.node`)
  if (!existsSync(out) || !readFileSync(out).equals(readFileSync(built))) {
    // A new file renamed into place: a process that has the old one loaded keeps its copy intact.
    mkdirSync(path.dirname(out), { recursive: true })
    copyFileSync(built, `${out}.tmp`)
    renameSync(`${out}.tmp`, out)
  }
}

function copyPrebuilds() {
  if (!libfuse3) fail('packing needs the libfuse 3 headers, to ship the libfuse 3 addon: install libfuse3-dev (Fedora: fuse3-devel)')
  mkdirSync(path.join(root, PREBUILDS), { recursive: true })
  for (const [lib, file] of Object.entries(addons)) copyFileSync(path.join(dir, 'build', 'Release', file), path.join(root, PREBUILDS, `${lib}.node`))
}

function fail(message) {
  console.error(`build-fuse-addon: ${message}`)
  process.exit(1)
}
