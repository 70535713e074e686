// Renders a bench step's results (results.ts) as a Markdown table, and puts each table into
// its region of a document: the lines between `<!-- bench:<step> -->` and `<!-- /bench:<step> -->`.
// Pure: tables.ts reads the files and writes the document.
import { type BenchResults, type BenchRow, formatNumber } from './results.js'

/** A Markdown table cell: no line breaks, and a `|` escaped. */
const cell = (s: string) => s.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|')

/** A ratio, or a value given as a multiple ("× the file"): always two decimals, 1.00 as much as 0.98. */
const multiple = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a')
const valueOf = (r: BenchRow) => `${r.unit.startsWith('×') ? multiple(r.value) : formatNumber(r.value)} ${r.unit}`.trim()
const ratioOf = (r: BenchRow) => (r.ratio === undefined ? '' : `${multiple(r.ratio)}× ${r.baseline ?? 'baseline'}`)

/** The line under a table: where its figures come from. */
export function provenance(results: BenchResults): string {
  const when = results.date.slice(0, 16).replace('T', ' ')
  const load = results.machine.load === undefined ? '' : `, load average ${results.machine.load}`
  const where = `${results.machine.cores} cores, ${results.machine.memoryGiB} GiB${load}`
  return results.from
    ? `*\`${results.step}\`: carried over, from ${results.from} (${when} UTC, ${where}); not measured again since.*`
    : `*\`${results.step}\` at ${results.commit}, ${when} UTC, ${where}.*`
}

/**
 * The rows that are only another row's baseline: held against nothing themselves, and named as
 * the baseline of a row of the same group. Their values go beside the ratios that use them.
 */
function baselinesOnly(rows: BenchRow[]): Map<BenchRow, BenchRow> {
  const key = (group: string | undefined, figure: string) => `${group ?? ''}\u0000${figure}`
  const byKey = new Map(rows.map((r) => [key(r.group, r.figure), r]))
  const baseOf = new Map<BenchRow, BenchRow>()
  for (const r of rows) {
    const base = r.baseline === undefined ? undefined : byKey.get(key(r.group, r.baseline))
    if (base && base !== r && base.ratio === undefined && base.target === undefined) baseOf.set(r, base)
  }
  return baseOf
}

/** One line per row: figure, value, ratio to its baseline (with the baseline's value when it has no line of its own), target, how. */
function flatTable(rows: BenchRow[]): string[] {
  const baseOf = baselinesOnly(rows)
  const folded = new Set(baseOf.values())
  const ratio = (r: BenchRow) => {
    const base = baseOf.get(r)
    return base ? `${ratioOf(r)}: ${valueOf(base)}` : ratioOf(r)
  }
  const lines = ['| figure | value | ratio | target | how |', '|---|---|---|---|---|']
  for (const r of rows.filter((x) => !folded.has(x))) lines.push(`| ${[r.figure, valueOf(r), ratio(r), r.target ?? '', r.how].map(cell).join(' | ')} |`)
  return lines
}

/**
 * One line per figure and a column per group (in the order they first appear), each cell the
 * value and its ratio (and the baseline's value, when the baseline's figure has no line of its own).
 */
function groupedTable(rows: BenchRow[]): string[] {
  const baseOf = baselinesOnly(rows)
  const folded = new Set(baseOf.values())
  const groups = [...new Set(rows.map((r) => r.group!))]
  const lines = [`| figure | ${groups.map(cell).join(' | ')} | target | how |`, `|---|${groups.map(() => '---|').join('')}---|---|`]
  for (const figure of new Set(rows.map((r) => r.figure))) {
    const of = rows.filter((r) => r.figure === figure)
    if (of.every((r) => folded.has(r))) continue
    const cells = groups.map((g) => {
      const r = of.find((x) => x.group === g)
      if (!r) return '–'
      if (r.ratio === undefined) return valueOf(r)
      const base = baseOf.get(r)
      return `${valueOf(r)} (${multiple(r.ratio)}×${base ? ` ${valueOf(base)}` : ''})`
    })
    const first = of[0]!
    const target = of.find((r) => r.target)?.target ?? ''
    const how = first.baseline ? `${first.how}; ratio: / ${first.baseline}` : first.how
    lines.push(`| ${[figure, ...cells, target, how].map(cell).join(' | ')} |`)
  }
  return lines
}

/**
 * The tables of one step and the line saying where they come from: the rows without a group
 * as one line each, then those with groups as one line per figure and a column per group.
 */
export function renderTable(results: BenchResults): string {
  const flat = results.rows.filter((r) => r.group === undefined)
  const grouped = results.rows.filter((r) => r.group !== undefined)
  const parts: string[][] = []
  if (flat.length) parts.push(flatTable(flat))
  if (grouped.length) parts.push(groupedTable(grouped))
  parts.push([provenance(results)])
  return parts.map((p) => p.join('\n')).join('\n\n')
}

export interface Replaced {
  text: string
  /** Regions whose step had no results: left as they were. */
  missing: string[]
  /** Regions whose table changed. */
  changed: string[]
}

const REGION = /(<!-- bench:([\w-]+) -->\n)([\s\S]*?)(<!-- \/bench:\2 -->)/g

/** Puts each step's table into its region of `doc`; a region without results keeps its text. */
export function replaceRegions(doc: string, tables: ReadonlyMap<string, string>): Replaced {
  const missing: string[] = []
  const changed: string[] = []
  const text = doc.replace(REGION, (whole, open: string, step: string, inner: string, close: string) => {
    const table = tables.get(step)
    if (table === undefined) {
      missing.push(step)
      return whole
    }
    const body = `${table.trimEnd()}\n`
    if (body !== inner) changed.push(step)
    return `${open}${body}${close}`
  })
  return { text, missing, changed }
}

/** The steps a document has regions for, in order. */
export function regionSteps(doc: string): string[] {
  return [...doc.matchAll(REGION)].map((m) => m[2]!)
}
