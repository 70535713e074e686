// The FUSE addons of another architecture's package (arm64, built on amd64), cross-built here
// from the same patched fuse-native source: Debian's cross compiler (crossbuild-essential-arm64),
// that architecture's libraries installed through multiarch (libfuse3-dev:arm64, libfuse2:arm64),
// libfuse 3.17 cross-built from Debian's source (build-libfuse3.sh --arch), and this machine's
// own Node headers (N-API is the same on every architecture): nothing is downloaded.
//
// Two node-gyp builds, each in a copy of fuse-native's sources in its build folder (as the
// libfuse3.so.4 build for this machine is made): one against the architecture's own libfuse 3
// (before 3.17) gives the libfuse.so.2 and libfuse3.so.3 addons, the other against libfuse 3.17
// the libfuse3.so.4 one. binding.gyp links the libfuse 2 addon with the libfuse.so that
// fuse-shared-library carries, which is this machine's: each copy gets a fuse-shared-library of
// its own that names the architecture's libfuse.so.2 instead (and the same headers). Each addon
// is checked to be an ELF file for that machine that needs its library's soname before it goes
// to prebuilds/linux-<arch>/.
//
// The built addons are kept in the build cache (build-cache.mjs) under a digest of everything
// they are made of: the patched sources, the libfuse each is built against, the cross
// compiler's version, the Node headers, napi-macros and fuse-shared-library. A clean copy of
// the checkout (every package test starts from one) then copies them instead of compiling
// them again; any change to what they are made of builds them afresh.
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { architecture, elfMachine } from './architectures.mjs'
import { buildCache } from './build-cache.mjs'

/** What each addon is named in prebuilds/ → the file node-gyp builds (binding.gyp's targets). */
const ADDONS = { system: { 'libfuse.so.2': 'fuse.node', 'libfuse3.so.3': 'fuse3.node' }, next: { 'libfuse3.so.4': 'fuse3.node' } }
const SOURCES = ['package.json', 'binding.gyp', 'fuse-native.c', 'index.js']
const STAMP = '.transferfs-addon.json'

/**
 * Builds the three addons for `archName` (Debian's name) into root/prebuilds/linux-<node arch>/,
 * each again only when the patch or its libfuse changed. gypRebuild(cwd, env, nodeArch) is
 * build-fuse-addon.mjs's node-gyp run.
 */
export function crossBuildAddons({ root, fuseDir, sourceHash, archName, gypRebuild, fail }) {
  const arch = architecture(archName)
  const libdir = `/usr/lib/${arch.triplet}`
  checkToolchain(arch, libdir, fail)

  const compilers = { CC: `${arch.triplet}-gcc`, CXX: `${arch.triplet}-g++`, LINK: `${arch.triplet}-g++`, AR: `${arch.triplet}-ar` }
  // pkg-config answers for that architecture's libraries only, never this machine's.
  const pkgConfig = (dir) => ({ PKG_CONFIG_LIBDIR: dir, PKG_CONFIG_PATH: '', PKG_CONFIG_SYSROOT_DIR: '' })
  const systemEnv = { ...process.env, ...compilers, ...pkgConfig(`${libdir}/pkgconfig:/usr/share/pkgconfig`) }
  const systemVersion = modversion(systemEnv)
  const [major, minor] = systemVersion.split('.').map(Number)
  if (major !== 3 || !(minor < 17)) {
    fail(`the ${arch.debian} libfuse3.so.3 addon needs the headers of a libfuse 3 before 3.17 (libfuse3-dev:${arch.debian} of Debian 12); pkg-config found ${systemVersion || 'none'} in ${libdir}`)
  }
  const prefix = libfuse317(arch, fail)
  const nextEnv = { ...process.env, ...compilers, ...pkgConfig(path.join(prefix, 'lib', 'pkgconfig')) }
  const libfuse317Stamp = readFileSync(path.join(prefix, '.complete'), 'utf8').trim()

  const out = path.join(root, 'prebuilds', `linux-${arch.node}`)
  mkdirSync(out, { recursive: true })
  const toolchain = toolchainDigest(arch, fuseDir)
  for (const [name, env, libfuse] of [['system', systemEnv, `libfuse ${systemVersion} in ${libdir}`], ['next', nextEnv, `${libfuse317Stamp} in ${prefix}`]]) {
    const dir = path.join(fuseDir, 'build', `linux-${arch.node}-${name}`)
    const stamp = JSON.stringify({ source: sourceHash, arch: arch.debian, libfuse })
    const built = (file) => path.join(dir, 'build', 'Release', file)
    const current = existsSync(path.join(dir, STAMP)) && readFileSync(path.join(dir, STAMP), 'utf8') === stamp &&
      Object.values(ADDONS[name]).every((file) => existsSync(built(file)))
    const cached = path.join(buildCache(), 'fuse-addons', `linux-${arch.node}-${name}-${createHash('sha256').update(stamp).update(toolchain).digest('hex').slice(0, 16)}`)
    const files = Object.values(ADDONS[name])
    let fresh = false
    if (!current && files.every((file) => existsSync(path.join(cached, file)))) {
      rmSync(dir, { recursive: true, force: true })
      mkdirSync(path.join(dir, 'build', 'Release'), { recursive: true })
      for (const file of files) copyFileSync(path.join(cached, file), built(file))
      writeFileSync(path.join(dir, STAMP), stamp)
      console.error(`build-fuse-addon: the ${arch.debian} FUSE addons for ${Object.keys(ADDONS[name]).join(' and ')}, against ${libfuse}, from the build cache (${cached})`)
    } else if (!current) {
      rmSync(dir, { recursive: true, force: true })
      mkdirSync(dir, { recursive: true })
      for (const file of SOURCES) copyFileSync(path.join(fuseDir, file), path.join(dir, file))
      ownFuseSharedLibrary(dir, fuseDir, `${libdir}/libfuse.so.2`)
      gypRebuild(dir, env, arch.node)
      writeFileSync(path.join(dir, STAMP), stamp)
      console.error(`build-fuse-addon: cross-built the ${arch.debian} FUSE addons for ${Object.keys(ADDONS[name]).join(' and ')}, against ${libfuse}`)
      fresh = true
    }
    for (const [soname, file] of Object.entries(ADDONS[name])) {
      checkAddon(built(file), arch, soname, fail)
      const target = path.join(out, `${soname}.node`)
      if (!existsSync(target) || !readFileSync(target).equals(readFileSync(built(file)))) {
        copyFileSync(built(file), `${target}.tmp`)
        renameSync(`${target}.tmp`, target)
      }
    }
    // Kept once checked: a cache hit is never a file that failed the checks.
    if (fresh) keep(cached, files.map(built))
  }
}

/**
 * What the addons are made of besides their sources and libfuse: the cross compiler, the Node
 * headers node-gyp builds against, and the headers binding.gyp takes from napi-macros and
 * fuse-shared-library (by their versions).
 */
function toolchainDigest(arch, fuseDir) {
  const require = createRequire(path.join(fuseDir, 'package.json'))
  const version = (name) => JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')).version
  const hash = createHash('sha256')
  for (const compiler of [`${arch.triplet}-gcc`, `${arch.triplet}-g++`]) hash.update(execFileSync(compiler, ['--version'], { encoding: 'utf8' }))
  for (const header of ['node_version.h', 'node_api.h', 'js_native_api.h']) {
    const file = path.join('/usr/include/node', header)
    hash.update(existsSync(file) ? readFileSync(file) : `no ${header}`)
  }
  hash.update(`napi-macros ${version('napi-macros')}, fuse-shared-library ${version('fuse-shared-library')}`)
  return hash.digest('hex')
}

/** Copies the built files into the cache folder, whole or not at all (a folder renamed into place). */
function keep(cached, builtFiles) {
  const partial = `${cached}.partial-${process.pid}`
  try {
    rmSync(partial, { recursive: true, force: true })
    mkdirSync(partial, { recursive: true })
    for (const file of builtFiles) copyFileSync(file, path.join(partial, path.basename(file)))
    // Another build of the same inputs may have put its own there meanwhile: the same bytes' worth.
    if (!existsSync(cached)) renameSync(partial, cached)
  } catch (err) {
    console.error(`build-fuse-addon: could not keep the addons in ${cached} (${err.message}); they are built again next time`)
  } finally {
    rmSync(partial, { recursive: true, force: true })
  }
}

/** Everything the cross build needs, checked first: one message naming what to install, and how. */
function checkToolchain(arch, libdir, fail) {
  const missing = []
  const has = (command) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0
  if (!has(`${arch.triplet}-gcc`) || !has(`${arch.triplet}-g++`)) missing.push(`crossbuild-essential-${arch.debian}`)
  if (!existsSync(`${libdir}/pkgconfig/fuse3.pc`)) missing.push(`libfuse3-dev:${arch.debian}`)
  if (!existsSync(`${libdir}/libfuse.so.2`)) missing.push(`libfuse2:${arch.debian} (libfuse2t64:${arch.debian} on Debian 13)`)
  for (const tool of ['pkg-config', 'readelf', 'meson', 'ninja']) if (!has(tool)) missing.push(tool === 'readelf' ? 'binutils' : tool === 'ninja' ? 'ninja-build' : tool)
  if (missing.length === 0) return
  const foreign = spawnSync('dpkg', ['--print-foreign-architectures'], { encoding: 'utf8' }).stdout ?? ''
  const multiarch = foreign.split('\n').includes(arch.debian) ? '' : `dpkg --add-architecture ${arch.debian} && apt-get update && `
  fail(`cross-building the ${arch.debian} addons needs ${missing.join(', ')}: as root, run \`${multiarch}apt-get install ${missing.map((m) => m.split(' ')[0]).join(' ')}\``)
}

function modversion(env) {
  const r = spawnSync('pkg-config', ['--modversion', 'fuse3'], { encoding: 'utf8', env })
  return r.status === 0 ? r.stdout.trim() : ''
}

/** The prefix of libfuse 3.17 cross-built for arch (build-libfuse3.sh --arch), built when missing. */
function libfuse317(arch, fail) {
  const script = path.join(path.dirname(new URL(import.meta.url).pathname), 'build-libfuse3.sh')
  const r = spawnSync('bash', [script, '--arch', arch.debian], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
  if (r.status !== 0) fail(`cross-building libfuse 3.17 for ${arch.debian}, for its libfuse3.so.4 addon, failed (see above)`)
  return r.stdout.trim().split('\n').at(-1) ?? ''
}

/**
 * A fuse-shared-library in dir's node_modules, found before the installed one by binding.gyp's
 * require()s: the same headers, and the architecture's libfuse.so.2 to link with.
 */
function ownFuseSharedLibrary(dir, fuseDir, libfuse2) {
  const require = createRequire(path.join(fuseDir, 'package.json'))
  const include = require('fuse-shared-library').include
  const own = path.join(dir, 'node_modules', 'fuse-shared-library')
  mkdirSync(own, { recursive: true })
  writeFileSync(path.join(own, 'package.json'), `${JSON.stringify({ name: 'fuse-shared-library', version: '0.0.0', private: true })}\n`)
  writeFileSync(path.join(own, 'include.js'), `console.log(${JSON.stringify(include)})\n`)
  writeFileSync(path.join(own, 'lib.js'), `console.log(${JSON.stringify(libfuse2)})\n`)
}

/** The addon is an ELF file for arch's machine, and needs soname and no other FUSE library. */
function checkAddon(file, arch, soname, fail) {
  const machine = elfMachine(readFileSync(file))
  if (machine !== arch.elfMachine) fail(`${file} is not an ${arch.elfName} ELF file (its machine is ${machine ?? 'not ELF'})`)
  const needed = [...execFileSync('readelf', ['-d', file], { encoding: 'utf8' }).matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1])
  const fuse = needed.filter((lib) => /^libfuse/.test(lib))
  if (fuse.length !== 1 || fuse[0] !== soname) fail(`${file} needs ${fuse.join(', ') || 'no FUSE library'}, not ${soname}`)
}
