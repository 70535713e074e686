// Whether the fuse-native addon this process will load carries our patch (the real mtime
// in utimens, a /dev/fuse handle children do not inherit, a working userId). An install
// that skipped install scripts (`npm install --ignore-scripts`) or had no compiler runs
// the unpatched addon, which mounts but loses mtimes and can hang children of the mount:
// the mount says what to run instead.
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The marker the patch script leaves next to the addon: the hash of the patched source. */
const MARKER = path.join('build', 'Release', '.transferfs-patched')

/** null when the addon is patched; else the sentence to show, naming the command that fixes it. */
export function unpatchedAddon(): string | null {
  const require = createRequire(import.meta.url)
  const dir = path.dirname(require.resolve('fuse-native/package.json'))
  const source = readFileSync(path.join(dir, 'fuse-native.c'))
  const marker = path.join(dir, MARKER)
  if (existsSync(marker) && readFileSync(marker, 'utf8') === createHash('sha256').update(source).digest('hex')) return null
  const script = patchScript()
  return `the FUSE addon (fuse-native) was installed without transferfs' patch (install scripts skipped, or no compiler): ` +
    `run \`node ${script}\` once (it needs make, g++ and the headers of this Node)`
}

/** scripts/patch-fuse-native.mjs of this installation (from src/fuse or dist/src/fuse). */
function patchScript(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const candidate = path.join(dir, 'scripts', 'patch-fuse-native.mjs')
    if (existsSync(candidate)) return candidate
    const parent = path.dirname(dir)
    if (parent === dir) return 'scripts/patch-fuse-native.mjs'
    dir = parent
  }
}
