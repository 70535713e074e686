// The Node runtime a package carries. For this machine's architecture, the very Node that runs
// the build. For another one, the Node.js project's own build of the same version for that
// architecture, as npm's node-linux-<arch> package publishes it (the official tarball's
// bin/node and LICENSE): fetched with `npm pack` from the registry npm is set up for, which
// checks it against the registry's integrity hash, and kept in the build cache by version, so
// that a second build fetches nothing.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import path from 'node:path'
import { elfMachine } from '../scripts/architectures.mjs'
import { buildCache } from '../scripts/build-cache.mjs'
import { nodeLicenseFile } from './copyright.mjs'

/** The runtime for arch (architectures.mjs): its node binary and its licence, and its version ("v20.20.2"). */
export function nodeRuntime(arch, hostArch) {
  if (arch.debian === hostArch.debian) return { node: process.execPath, license: nodeLicenseFile(process.execPath), version: process.version }
  const version = process.versions.node
  const name = `node-linux-${arch.node}`
  const cache = path.join(buildCache(), `${name}-${version}`)
  const node = path.join(cache, 'bin', 'node')
  const license = path.join(cache, 'LICENSE')
  if (!existsSync(node) || !existsSync(license)) {
    process.stderr.write(`package: fetching ${name}@${version} from the npm registry (the Node.js project's ${arch.debian} build of this Node)\n`)
    // Beside the cache, so that the unpacked package is renamed into place, whole or not at all.
    mkdirSync(path.dirname(cache), { recursive: true })
    const work = mkdtempSync(path.join(path.dirname(cache), `.${name}-`))
    try {
      execFileSync('npm', ['pack', `${name}@${version}`, '--pack-destination', work, '--silent'], { cwd: work, stdio: ['ignore', 'ignore', 'inherit'] })
      const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'))
      if (!tarball) throw new Error(`npm pack ${name}@${version} left no tarball`)
      const unpacked = path.join(work, 'unpacked')
      mkdirSync(unpacked)
      execFileSync('tar', ['-xzf', path.join(work, tarball), '-C', unpacked, '--no-same-owner'])
      const pkg = path.join(unpacked, 'package')
      const meta = JSON.parse(readFileSync(path.join(pkg, 'package.json'), 'utf8'))
      if (meta.name !== name || meta.version !== version) throw new Error(`npm gave ${meta.name}@${meta.version} for ${name}@${version}`)
      for (const file of ['bin/node', 'LICENSE']) if (!existsSync(path.join(pkg, file))) throw new Error(`${name}@${version} has no ${file}`)
      const machine = elfMachine(readFileSync(path.join(pkg, 'bin', 'node')))
      if (machine !== arch.elfMachine) throw new Error(`${name}@${version}'s bin/node is not an ${arch.elfName} program (ELF machine ${machine})`)
      rmSync(cache, { recursive: true, force: true })
      renameSync(pkg, cache)
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
  }
  return { node, license, version: `v${version}` }
}
