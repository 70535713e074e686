// /usr/share/doc/transferfs/copyright in Debian's machine-readable format: transferfs, the Node
// runtime it carries, and every npm package shipped beside it, each with its own licence text
// as that package ships it.
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { LIB_DIR } from './metadata.mjs'

const ROOT = path.dirname(path.dirname(new URL(import.meta.url).pathname))
const LICENSE_FILES = /^(licen[cs]e|copying)([-.][\w.-]*)?$/i

/** The licence of the Node binary at `execPath`: beside it as the official builds lay it out, or as the distributions' packages do. */
export function nodeLicenseFile(execPath) {
  const prefix = path.dirname(path.dirname(execPath))
  const found = [path.join(prefix, 'LICENSE'), path.join(prefix, 'share', 'doc', 'node', 'LICENSE'), path.join(prefix, 'share', 'doc', 'nodejs', 'LICENSE'), '/usr/share/doc/nodejs/LICENSE']
    .find((f) => existsSync(f))
  if (!found) throw new Error(`cannot find the licence of the Node runtime at ${execPath}; the package must carry it`)
  return found
}

export function copyrightFile(libDir, nodeVersion) {
  const paragraphs = [
    ['Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/', 'Upstream-Name: transferfs'],
    ['Files: *', 'Copyright: 2026 transferfs developers', 'License: MIT'],
    // Node's licence covers its many bundled parts under their own terms (Apache-2.0 among them):
    // it ships whole beside the runtime and is named here, not copied.
    [`Files: ${LIB_DIR}/node/*`, 'Copyright: Node.js contributors and the authors of its bundled parts', `Comment: Node.js ${nodeVersion}, the runtime transferfs was built and tested with.`,
      'License: Node.js', body(`The licence of Node.js and of each part it bundles, in full, is in\n/${LIB_DIR}/node/LICENSE.`)],
  ]
  for (const dir of packageDirs(path.join(libDir, 'node_modules'))) {
    const meta = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'))
    const licenseName = readdirSync(dir).find((f) => LICENSE_FILES.test(f))
    const spdx = typeof meta.license === 'string' ? meta.license : meta.license?.type
    // A package that names MIT without shipping its text (fuse-native) is under the standard
    // text, the standalone MIT paragraph at the end; any other gap stops the build.
    if (!spdx || (!licenseName && spdx !== 'MIT')) throw new Error(`${meta.name} ships no licence file or names no licence; the package cannot say under what terms it is shipped`)
    const full = licenseName ? readFileSync(path.join(dir, licenseName), 'utf8') : ''
    // A licence Debian keeps in common-licenses is named there, as Debian's policy asks.
    const text = COMMON_LICENSES[spdx] ? `${holdersOf(full).map((h) => `Copyright ${h}`).join('\n')}\n\nOn Debian systems, the full text of the licence is in\n/usr/share/common-licenses/${COMMON_LICENSES[spdx]}.` : full
    const holders = holdersOf(full)
    const author = typeof meta.author === 'string' ? meta.author : meta.author?.name
    paragraphs.push([
      `Files: ${LIB_DIR}/${path.relative(libDir, dir)}/*`,
      `Copyright: ${holders.length ? holders.join('\n ') : author ?? `the authors of ${meta.name}`}`,
      `License: ${spdx}`,
      ...(text ? [body(text)] : []),
    ])
  }
  paragraphs.push(['License: MIT', body(readFileSync(path.join(ROOT, 'LICENSE'), 'utf8').replace(/^MIT License\s*Copyright[^\n]*\n/, ''))])
  return `${paragraphs.map((p) => p.join('\n')).join('\n\n')}\n`
}

/** SPDX id → its file in /usr/share/common-licenses. */
const COMMON_LICENSES = { 'Apache-2.0': 'Apache-2.0', 'MPL-2.0': 'MPL-2.0', 'GPL-2.0': 'GPL-2', 'GPL-3.0': 'GPL-3', 'LGPL-2.1': 'LGPL-2.1', 'LGPL-3.0': 'LGPL-3' }

/** The copyright holders a licence text names on its "Copyright ..." lines. */
function holdersOf(text) {
  return text.split('\n').map((l) => l.trim()).filter((l) => /^copyright\b/i.test(l) && !/notice|holders? and contributors/i.test(l))
    .map((l) => l.replace(/^copyright\s*(\(c\)|©)?\s*/i, ''))
}

/** Every package folder under node_modules, scoped and nested ones included. */
function packageDirs(nodeModules) {
  const out = []
  for (const name of readdirSync(nodeModules)) {
    if (name.startsWith('.')) continue
    const dir = path.join(nodeModules, name)
    if (name.startsWith('@')) {
      for (const sub of readdirSync(dir)) out.push(...withNested(path.join(dir, sub)))
    } else out.push(...withNested(dir))
  }
  return out.sort()
}

function withNested(dir) {
  const nested = path.join(dir, 'node_modules')
  return [dir, ...(existsSync(nested) ? packageDirs(nested) : [])]
}

/** A licence text as a field's continuation lines: each line indented, an empty one as " .". */
function body(text) {
  return text.replace(/\r/g, '').trimEnd().split('\n').map((l) => (l.trim() === '' ? ' .' : ` ${l.replace(/\t/g, '    ')}`)).join('\n')
}
