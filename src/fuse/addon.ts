// Which FUSE addon this process mounts with: fuse-native's C part built against libfuse 3 or
// libfuse 2 (scripts/build-fuse-addon.mjs builds them from our patch; `npm pack` ships them
// prebuilt, one per soname: libfuse.so.2, libfuse3.so.3 and libfuse3.so.4). libfuse 3 is
// preferred where the loader finds it: libfuse 2 is leaving the distributions, and libfuse 3
// reads up to 1 MiB per request. Loading is deferred to the first mount, so commands that do
// not mount work on a machine without any FUSE library.
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type FuseType from 'fuse-native'
import type { FuseLibrary } from '../config/settings.js'

export type FuseBackend = Exclude<FuseLibrary, 'auto'>

/** The layout scripts/build-fuse-addon.mjs writes: a marker beside the addons it built, prebuilt addons named by soname. */
const MARKER = path.join('build', 'Release', '.transferfs-addons.json')
const PREBUILDS = path.join('prebuilds', `${process.platform}-${process.arch}`)
/** The sonames each backend may link, newest first (libfuse 3.17 moved to .so.4). */
const SONAMES: Record<FuseBackend, readonly string[]> = { libfuse3: ['libfuse3.so.4', 'libfuse3.so.3'], libfuse2: ['libfuse.so.2'] }
/** What to install for each backend, on the distributions we know. */
const PACKAGES: Record<FuseBackend, string> = {
  libfuse3: 'libfuse3-3 (Debian 12, Ubuntu), libfuse3-4 (Debian 13) or fuse3-libs (Fedora), with fuse3 for its mount helper',
  libfuse2: 'libfuse2 (Debian 12, Ubuntu 22.04), libfuse2t64 (Debian 13, Ubuntu 24.04) or fuse-libs (Fedora)',
}

export interface LoadedAddon {
  backend: FuseBackend
  /** The addon file that was loaded. */
  file: string
  Fuse: typeof FuseType
}

export class AddonError extends Error {
  override readonly name = 'AddonError'
}

let loaded: LoadedAddon | undefined

/**
 * Loads fuse-native with the addon for `choice` (once per process: a native addon cannot be
 * unloaded). 'auto' takes libfuse 3 when it loads, else libfuse 2. Throws an AddonError that
 * names what to run or install.
 */
export function loadFuse(choice: FuseLibrary): LoadedAddon {
  if (loaded) {
    if (choice !== 'auto' && choice !== loaded.backend) throw new AddonError(`this process already mounts with ${loaded.backend}; ${choice} needs a new process`)
    return loaded
  }
  const require = createRequire(import.meta.url)
  let fuseDir: string
  try {
    fuseDir = path.dirname(require.resolve('fuse-native/package.json'))
  } catch {
    // An optional dependency (macOS mounts without it): npm leaves it out when its build fails.
    throw new AddonError('the FUSE addon (the optional package fuse-native) is not installed: its build failed when transferfs was installed, ' +
      'where no prebuilt addon fits (it needs make, g++ and python3: Debian/Ubuntu `sudo apt install build-essential python3`); install those, then install transferfs again')
  }
  if (!readFileSync(path.join(fuseDir, 'index.js'), 'utf8').includes('FUSE_NATIVE_ADDON')) {
    throw new AddonError(`the FUSE addon (fuse-native) was installed without transferfs' patch (install scripts skipped?): run \`node ${buildScript()}\` once`)
  }
  const backends: FuseBackend[] = choice === 'auto' ? ['libfuse3', 'libfuse2'] : [choice]
  const failures: string[] = []
  for (const backend of backends) {
    for (const file of candidates(fuseDir, backend)) {
      try {
        require(file)
      } catch (err) {
        failures.push(`${path.basename(file)}: ${(err as Error).message.split('\n')[0]}`)
        continue
      }
      // fuse-native's index.js loads the addon named here (the patch adds that), at its first require.
      process.env.FUSE_NATIVE_ADDON = file
      loaded = { backend, file, Fuse: require('fuse-native') as typeof FuseType }
      return loaded
    }
  }
  throw new AddonError(missingMessage(choice, backends, failures))
}

/**
 * The addons that can serve `backend`, best first: newest soname first, and for each soname one
 * built here from the current patch, then this package's prebuilt one. The soname goes first
 * because what the loader finds decides which addon fits: where it finds libfuse3.so.4 (3.17+)
 * the .so.4 addon is taken, even where a .so.3 one was built here against older headers that
 * are still installed; where it does not, that addon fails with "cannot open shared object file"
 * and the .so.3 one loads.
 */
function candidates(fuseDir: string, backend: FuseBackend): string[] {
  const out: string[] = []
  const built = builtAddons(fuseDir)
  const root = packageRoot()
  for (const soname of SONAMES[backend]) {
    const file = built[soname]
    if (file) out.push(path.join(fuseDir, 'build', 'Release', file))
    const prebuilt = path.join(root, PREBUILDS, `${soname}.node`)
    if (existsSync(prebuilt)) out.push(prebuilt)
  }
  return out
}

/** soname → addon file of the addons built from the patch as it is now (none when the source changed since). */
function builtAddons(fuseDir: string): Record<string, string> {
  const marker = path.join(fuseDir, MARKER)
  if (!existsSync(marker)) return {}
  const { source, addons } = JSON.parse(readFileSync(marker, 'utf8')) as { source: string; addons: Record<string, string> }
  const hash = createHash('sha256')
  for (const file of ['fuse-native.c', 'binding.gyp', 'index.js']) hash.update(readFileSync(path.join(fuseDir, file)))
  return hash.digest('hex') === source ? addons : {}
}

function missingMessage(choice: FuseLibrary, backends: FuseBackend[], failures: string[]): string {
  if (failures.length === 0) return `no FUSE addon for ${backends.join(' or ')} is built or shipped here: run \`node ${buildScript()}\``
  if (failures.every((f) => /cannot open shared object file/.test(f))) {
    return `mounting needs the FUSE library${choice === 'auto' ? '' : ` ${choice}`}, which is not installed: install ${backends.map((b) => PACKAGES[b]).join('; or ')}`
  }
  return `the FUSE addon would not load (${failures.join('; ')}): run \`node ${buildScript()}\` to build it for this machine`
}

/** This installation's root (from src/fuse or dist/src/fuse): where package.json is. */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir
    const parent = path.dirname(dir)
    if (parent === dir) return process.cwd()
    dir = parent
  }
}

function buildScript(): string {
  return path.join(packageRoot(), 'scripts', 'build-fuse-addon.mjs')
}
