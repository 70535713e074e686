// The one place a bench step's figures are written: bench-results/<step>.json (or the folder
// of `--results DIR` / BENCH_RESULTS), in one small shape that tables.ts renders into
// docs/performance.md. A figure held against a baseline of the same run names that baseline
// (another row of the same step and group) and gives the ratio the step computed.
import { execFileSync } from 'node:child_process'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

export interface BenchRow {
  /** What is measured; unique within its step and group. */
  figure: string
  value: number
  unit: string
  /** What it is held against: a figure of the same step (and group), measured in the same run, or a named bound. */
  baseline?: string
  /** This figure against its baseline, as the step defines it (a time's ratio: time / baseline's time). */
  ratio?: number
  /** The limit the ratio (or, without a ratio, the value) is held to, such as "<= 1.5". */
  target?: string
  /** A column of a table that shows one figure under several conditions (FUSE library, mount kind). */
  group?: string
  /** How it is measured, in a few words. */
  how: string
}

export interface BenchResults {
  step: string
  /** `git rev-parse --short HEAD` of the build measured ("unknown" outside a checkout). */
  commit: string
  /** ISO date and time the step finished. */
  date: string
  /** The machine, and its 1-minute load average as the step ended (a shared machine's figures move with it). */
  machine: { cores: number; memoryGiB: number; load?: number }
  /** Set on figures not measured by this run but carried over from the commit named. */
  from?: string
  rows: BenchRow[]
}

/** The folder results go to and are read from: `--results DIR`, else BENCH_RESULTS, else bench-results/ of the checkout. */
export function resultsDir(root: string, argv: string[] = process.argv, env: NodeJS.ProcessEnv = process.env): string {
  const at = argv.indexOf('--results')
  const chosen = at >= 0 ? argv[at + 1] : env.BENCH_RESULTS
  return path.resolve(chosen || path.join(root, 'bench-results'))
}

function gitCommit(root: string): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return 'unknown'
  }
}

/** A value as the results and the tables show it: counts whole, otherwise 3 significant figures or 2 decimals. */
export function formatNumber(x: number): string {
  if (!Number.isFinite(x)) return 'n/a'
  if (Number.isInteger(x)) return String(x)
  const abs = Math.abs(x)
  return x.toFixed(abs >= 100 ? 0 : abs >= 10 ? 1 : 2)
}

/** Prints the rows as a plain table and writes them to <dir>/<step>.json; the file's path. */
export async function writeResults(root: string, step: string, rows: BenchRow[], dir = resultsDir(root)): Promise<string> {
  const results: BenchResults = {
    step,
    commit: gitCommit(root),
    date: new Date().toISOString(),
    machine: { cores: os.cpus().length, memoryGiB: Math.round(os.totalmem() / 2 ** 30), load: Math.round(os.loadavg()[0]! * 10) / 10 },
    rows,
  }
  const line = (r: BenchRow) =>
    `${r.group ? `${r.group}: ` : ''}${r.figure}  ${formatNumber(r.value)} ${r.unit}` +
    `${r.ratio === undefined ? '' : `; ${formatNumber(r.ratio)}× ${r.baseline ?? ''}`}${r.target ? ` (target ${r.target})` : ''}`
  process.stdout.write(rows.map(line).join('\n') + '\n')
  const out = path.join(dir, `${step}.json`)
  await mkdir(dir, { recursive: true })
  await writeFile(out, JSON.stringify(results, null, 2) + '\n')
  process.stdout.write(`(${path.relative(process.cwd(), out)})\n`)
  return out
}

/** Every step's results in `dir`, by step name. */
export async function readResults(dir: string): Promise<Map<string, BenchResults>> {
  const found = new Map<string, BenchResults>()
  const names = await readdir(dir).catch(() => [] as string[])
  for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
    const r = JSON.parse(await readFile(path.join(dir, name), 'utf8')) as BenchResults
    if (r && typeof r.step === 'string' && Array.isArray(r.rows)) found.set(r.step, r)
  }
  return found
}
