// transferfs's own version, from package.json: found by walking up from this module, so it is the
// same whether the code runs from src/ (tests) or dist/src/ (the built command).
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

function findVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const candidate = path.join(dir, 'package.json')
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string }
      if (pkg.name === 'transferfs' && pkg.version) return pkg.version
    }
    const parent = path.dirname(dir)
    if (parent === dir) return '0.0.0'
    dir = parent
  }
}

export const VERSION = findVersion()
