// The tables of docs/performance.md from the bench's results (results.ts): each region
// `<!-- bench:<step> -->` ... `<!-- /bench:<step> -->` gets the table of bench-results/<step>.json.
//
//   node dist/scripts/bench/tables.js [--results DIR] [--doc FILE]            prints the document as it would be
//   node dist/scripts/bench/tables.js [--results DIR] [--doc FILE] --write    rewrites it
//   node dist/scripts/bench/tables.js [--results DIR] [--doc FILE] --check    exit 1 when a table differs
//
// A region whose step has no results keeps what it has (and is named on stderr).
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { readResults, resultsDir } from './results.js'
import { regionSteps, renderTable, replaceRegions } from './table-render.js'

const fromTs = import.meta.url.endsWith('.ts')
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), fromTs ? '../..' : '../../..')
const argv = process.argv.slice(2)
const docAt = argv.indexOf('--doc')
const docFile = path.resolve(docAt >= 0 && argv[docAt + 1] ? argv[docAt + 1]! : path.join(root, 'docs/performance.md'))
const dir = resultsDir(root, argv)

const doc = await readFile(docFile, 'utf8')
const results = await readResults(dir)
const tables = new Map([...results].map(([step, r]) => [step, renderTable(r)]))
const { text, missing, changed } = replaceRegions(doc, tables)
const unused = [...results.keys()].filter((s) => !regionSteps(doc).includes(s))
if (missing.length) process.stderr.write(`no results in ${dir} for: ${missing.join(', ')} (their tables are left as they are)\n`)
if (unused.length) process.stderr.write(`results without a region in ${path.relative(root, docFile)}: ${unused.join(', ')}\n`)

if (argv.includes('--check')) {
  if (changed.length) {
    process.stderr.write(`${path.relative(root, docFile)} differs from ${dir} in: ${changed.join(', ')}\n`)
    process.exit(1)
  }
  process.stderr.write(`${path.relative(root, docFile)} matches ${dir}\n`)
} else if (argv.includes('--write')) {
  if (text !== doc) await writeFile(docFile, text)
  process.stderr.write(`${path.relative(root, docFile)}: ${changed.length ? `rewrote ${changed.join(', ')}` : 'unchanged'}\n`)
} else {
  process.stdout.write(text)
}
