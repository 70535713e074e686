// The dependency rules of src/, read from the import statements: the ground floor imports
// nothing of ours, the client nothing but the ground floor, the read path nothing above
// it, the local service nothing of the client but its types, the pins (pin/) and the desktop
// side nothing of the FUSE adapter, the NFS front (a second front door beside the FUSE
// adapter) nothing above the filesystem core and nothing but the command line imports it, the
// pins nothing of the send path nor of the command line, the mount's status (the snapshot's
// shape and renderings) nothing but the pins' section and the ground floor, and no folder or
// module loops back. Outside src/: the tools in scripts/ (the bench among them) import nothing of
// test/, so the tests lean on the tools and never the other way (and no test lands in dist/).
import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const SRC = path.join(REPO, 'src')

interface Edge { from: string; to: string }

/** Every relative import in a folder, as paths relative to `base` ("read/content.ts" -> "api/client.ts" for src/). */
function imports(root = SRC, base = SRC): Edge[] {
  const edges: Edge[] = []
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name)
      if (statSync(full).isDirectory()) walk(full)
      else if (name.endsWith('.ts')) {
        const text = readFileSync(full, 'utf8')
        for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g)) {
          const spec = (m[1] ?? m[2]) as string
          const target = path.resolve(path.dirname(full), spec).replace(/\.js$/, '.ts')
          edges.push({ from: path.relative(base, full), to: path.relative(base, target) })
        }
      }
    }
  }
  walk(root)
  return edges
}

/** The folder of a path in src/ ('' for a file at the top, such as version.ts). */
const folder = (p: string): string => (p.includes('/') ? p.slice(0, p.indexOf('/')) : '')

const EDGES = imports()
const across = EDGES.filter((e) => folder(e.from) !== folder(e.to))

/** What `from` imports outside itself that `allowed` does not admit, as "file -> file". */
function breaches(from: string, allowed: (to: string) => boolean): string[] {
  return across.filter((e) => folder(e.from) === from && !allowed(e.to)).map((e) => `${e.from} -> ${e.to}`)
}

/** The nodes of `edges` that reach themselves, each as "x reaches itself". */
function loopsOf(edges: readonly Edge[]): string[] {
  const graph = new Map<string, Set<string>>()
  for (const e of edges) graph.set(e.from, (graph.get(e.from) ?? new Set<string>()).add(e.to))
  const reaches = (start: string): boolean => {
    const seen = new Set<string>()
    const todo = [...(graph.get(start) ?? [])]
    while (todo.length) {
      const n = todo.pop() as string
      if (n === start) return true
      if (seen.has(n)) continue
      seen.add(n)
      todo.push(...(graph.get(n) ?? []))
    }
    return false
  }
  return [...graph.keys()].filter(reaches).map((n) => `${n} reaches itself`)
}

const ground = (to: string): boolean => folder(to) === 'base' || folder(to) === ''

describe('dependency rules of src/', () => {
  it('reads the imports it judges', () => {
    // A parser that found nothing would pass every rule below.
    expect(across.length).toBeGreaterThan(100)
    expect(across).toContainEqual({ from: 'read/service-source.ts', to: 'api/client.ts' })
  })

  it('the ground floor (base/ and the top-level files) imports nothing of ours', () => {
    expect(breaches('base', (to) => folder(to) === 'base')).toEqual([])
    expect(breaches('', (to) => folder(to) === '')).toEqual([])
  })

  it('api imports nothing of ours but the ground floor', () => {
    expect(breaches('api', ground)).toEqual([])
  })

  it('read imports only api and the ground floor (never vfs, send or cli)', () => {
    expect(breaches('read', (to) => ground(to) || folder(to) === 'api')).toEqual([])
  })

  it('pin and desktop import nothing of the FUSE adapter', () => {
    expect(breaches('pin', (to) => folder(to) !== 'fuse')).toEqual([])
    expect(breaches('desktop', (to) => folder(to) !== 'fuse')).toEqual([])
  })

  it('pin imports nothing of the send path (its status is its own, carried by send)', () => {
    expect(breaches('pin', (to) => folder(to) !== 'send')).toEqual([])
  })

  it('pin imports nothing of the command line (the control requests it answers are its own)', () => {
    expect(breaches('pin', (to) => folder(to) !== 'cli')).toEqual([])
  })

  it('status imports only the pins\' section and the ground floor (send fills and writes it, pin is below it)', () => {
    expect(breaches('status', (to) => ground(to) || to === 'pin/status.ts')).toEqual([])
  })

  it('nfs, a front like fuse, imports only vfs and what is below it (never fuse, send, pin, desktop or cli)', () => {
    expect(breaches('nfs', (to) => ground(to) || ['vfs', 'read', 'api'].includes(folder(to)))).toEqual([])
  })

  it('nothing imports the NFS front but the command line', () => {
    expect(across.filter((e) => folder(e.to) === 'nfs' && folder(e.from) !== 'cli').map((e) => `${e.from} -> ${e.to}`)).toEqual([])
  })

  it('emulator imports only the API types and the ground floor', () => {
    expect(breaches('emulator', (to) => ground(to) || to === 'api/types.ts')).toEqual([])
  })

  it('scripts import nothing of test (test support is the tests\' alone)', () => {
    const fromScripts = imports(path.join(REPO, 'scripts'), REPO)
    expect(fromScripts.length).toBeGreaterThan(0)
    expect(fromScripts.filter((e) => e.to.startsWith('test/')).map((e) => `${e.from} -> ${e.to}`)).toEqual([])
  })

  it('no folder imports, through any path, a folder that imports it', () => {
    expect(loopsOf(across.map((e) => ({ from: folder(e.from) || '(top)', to: folder(e.to) || '(top)' })))).toEqual([])
  })

  it('no module imports, through any path, a module that imports it (type imports included)', () => {
    expect(loopsOf(EDGES)).toEqual([])
  })
})
