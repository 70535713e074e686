// The npm packages the package ships: the production dependencies only, as `npm prune`
// leaves them, with our patch to fuse-native already applied (the build applied it), and
// without what only a build, another platform or a reader of the sources uses.
import { execFileSync } from 'node:child_process'
import { cpSync, readdirSync, rmdirSync, rmSync } from 'node:fs'
import path from 'node:path'

/** Never loaded here: fuse-native's sources and builds (the addons are prebuilt), libfuse binaries for other systems or bundled beside ours. */
const UNUSED = [
  'fuse-native/build', 'fuse-native/prebuilds', 'fuse-native/fuse-native.c', 'fuse-native/binding.gyp', 'fuse-native/test', 'fuse-native/example.js',
  'fuse-shared-library-linux/libfuse', 'fuse-shared-library-linux/example', 'fuse-shared-library-darwin', 'fuse-shared-library-linux-arm', '.bin', '.package-lock.json',
]
const DEV_FILES = /(\.d\.[cm]?ts|\.map|\.tsbuildinfo|^\.npmignore|^\.travis\.yml|^\.editorconfig|^\.eslintrc.*|^\.prettierrc.*|^CHANGELOG.*|^HISTORY.*)$/i
const DOCS = /\.(md|markdown|html)$/i
const LICENCE = /^(licen[cs]e|copying)/i

export function pruneRuntimeTree(root, lib) {
  cpSync(path.join(root, 'node_modules'), path.join(lib, 'node_modules'), { recursive: true, verbatimSymlinks: true })
  cpSync(path.join(root, 'package-lock.json'), path.join(lib, 'package-lock.json'))
  // lib/package.json names the runtime dependencies only, so this takes out the dev tools and
  // patch-package (the build's) with everything only they pulled in. Offline: nothing is added.
  execFileSync('npm', ['prune', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--offline'], { cwd: lib, stdio: ['ignore', 'ignore', 'inherit'] })
  rmSync(path.join(lib, 'package-lock.json'))
  for (const p of UNUSED) rmSync(path.join(lib, 'node_modules', p), { recursive: true, force: true })
  for (const entry of readdirSync(path.join(lib, 'node_modules'), { withFileTypes: true, recursive: true })) {
    const file = path.join(entry.parentPath, entry.name)
    if (entry.isDirectory() && (entry.name === '.github' || entry.name === 'test' || entry.name === 'tests')) rmSync(file, { recursive: true, force: true })
    else if (entry.isFile() && (DEV_FILES.test(entry.name) || (DOCS.test(entry.name) && !LICENCE.test(entry.name)))) rmSync(file, { force: true })
  }
  removeEmptyFolders(path.join(lib, 'node_modules'))
}

/** Folders that held only what was pruned (type declarations, docs, other platforms' packages). */
function removeEmptyFolders(dir) {
  let empty = true
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && removeEmptyFolders(path.join(dir, entry.name))) continue
    empty = false
  }
  if (empty) rmdirSync(dir)
  return empty
}
