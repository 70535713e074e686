// The tables of docs/performance.md as scripts/bench/tables.ts makes them from the bench's
// results: how a step's rows are rendered, and how a document's marked regions are replaced.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { formatNumber, readResults, resultsDir, writeResults, type BenchResults } from '../../scripts/bench/results.js'
import { regionSteps, renderTable, replaceRegions } from '../../scripts/bench/table-render.js'

const machine = { cores: 2, memoryGiB: 24 }

function results(rows: BenchResults['rows'], extra: Partial<BenchResults> = {}): BenchResults {
  return { step: 'reread', commit: 'abc1234', date: '2026-11-28T18:44:29.123Z', machine, rows, ...extra }
}

describe('renderTable', () => {
  it('gives each row a line: the figure, its value and unit, its ratio to the baseline, the target and how', () => {
    const table = renderTable(results([
      { figure: 'curl | md5sum', value: 2.8, unit: 'CPU-s/GiB', how: 'the floor' },
      { figure: 'mount CPU', value: 0.85, unit: 'CPU-s/GiB', baseline: 'curl | md5sum', ratio: 0.3036, target: '<= 0.4', how: 'dd iflag=direct | after a remount' },
      { figure: 'bytes fetched again', value: 0, unit: 'MiB', target: '0', how: 'counters' },
    ]))
    expect(table.split('\n')).toEqual([
      '| figure | value | ratio | target | how |',
      '|---|---|---|---|---|',
      '| mount CPU | 0.85 CPU-s/GiB | 0.30× curl \\| md5sum: 2.80 CPU-s/GiB | <= 0.4 | dd iflag=direct \\| after a remount |',
      '| bytes fetched again | 0 MiB |  | 0 | counters |',
      '',
      '*`reread` at abc1234, 2026-11-28 18:44 UTC, 2 cores, 24 GiB.*',
    ])
  })

  it('keeps a baseline as a line of its own when it has a ratio or target itself, or no row of the table uses it', () => {
    const table = renderTable(results([
      { figure: 'null filesystem', value: 1523.456, unit: 'MB/s', target: '>= 1000 MB/s', how: 'null-fs' },
      { figure: 're-read', value: 812.3, unit: 'MB/s', baseline: 'null filesystem', ratio: 0.5332, how: 'dd' },
      { figure: 'peak RSS', value: 169, unit: 'MiB', baseline: 'memoryCacheBytes + 150 MiB', ratio: 0.26, how: 'VmHWM' },
    ]))
    expect(table.split('\n').slice(2, 5)).toEqual([
      '| null filesystem | 1523 MB/s |  | >= 1000 MB/s | null-fs |',
      '| re-read | 812 MB/s | 0.53× null filesystem |  | dd |',
      '| peak RSS | 169 MiB | 0.26× memoryCacheBytes + 150 MiB |  | VmHWM |',
    ])
  })

  it('gives a grouped baseline\'s value beside each ratio that uses it, and no line of its own', () => {
    const table = renderTable(results([
      { group: 'libfuse 3', figure: 'floor', value: 3.9, unit: 'CPU-s/GiB', how: 'curl | md5sum' },
      { group: 'libfuse 3', figure: 'cat: CPU', value: 5.2, unit: 'CPU-s/GiB', baseline: 'floor', ratio: 1.333, target: '<= 1.5', how: 'mount + cat' },
      { group: 'libfuse 2', figure: 'floor', value: 4.1, unit: 'CPU-s/GiB', how: 'curl | md5sum' },
      { group: 'libfuse 2', figure: 'cat: CPU', value: 5.9, unit: 'CPU-s/GiB', baseline: 'floor', ratio: 1.439, target: '<= 1.5', how: 'mount + cat' },
    ]))
    expect(table.split('\n').slice(0, 3)).toEqual([
      '| figure | libfuse 3 | libfuse 2 | target | how |',
      '|---|---|---|---|---|',
      '| cat: CPU | 5.20 CPU-s/GiB (1.33× 3.90 CPU-s/GiB) | 5.90 CPU-s/GiB (1.44× 4.10 CPU-s/GiB) | <= 1.5 | mount + cat; ratio: / floor |',
    ])
  })

  it('puts grouped rows in a column per group, after the rows without one, with "–" where a group lacks a figure', () => {
    const table = renderTable(results([
      { figure: 'the floor', value: 3.9, unit: 'CPU-s/GiB', how: 'curl | md5sum' },
      { group: 'libfuse 3', figure: 'cat: time', value: 4.21, unit: 's', baseline: 'dd: time', ratio: 0.99, target: '<= 1.2', how: 'cold read' },
      { group: 'libfuse 3', figure: 'cat: TLS connections', value: 7, unit: '', how: 'counters' },
      { group: 'null filesystem', figure: 'cat: time', value: 1.5, unit: 's', how: 'cold read' },
    ]))
    expect(table.split('\n')).toEqual([
      '| figure | value | ratio | target | how |',
      '|---|---|---|---|---|',
      '| the floor | 3.90 CPU-s/GiB |  |  | curl \\| md5sum |',
      '',
      '| figure | libfuse 3 | null filesystem | target | how |',
      '|---|---|---|---|---|',
      '| cat: time | 4.21 s (0.99×) | 1.50 s | <= 1.2 | cold read; ratio: / dd: time |',
      '| cat: TLS connections | 7 | – |  | counters |',
      '',
      '*`reread` at abc1234, 2026-11-28 18:44 UTC, 2 cores, 24 GiB.*',
    ])
  })

  it('gives the load average the step ended at, where the results have it', () => {
    const table = renderTable(results([{ figure: 'x', value: 1, unit: 's', how: 'h' }], { machine: { ...machine, load: 11.5 } }))
    expect(table.split('\n').at(-1)).toBe('*`reread` at abc1234, 2026-11-28 18:44 UTC, 2 cores, 24 GiB, load average 11.5.*')
  })

  it('says when figures were carried over from an earlier commit', () => {
    const table = renderTable(results([{ figure: 'x', value: 1, unit: 's', how: 'h' }], { from: '016080f (old docs/performance.md)' }))
    expect(table.split('\n').at(-1)).toBe('*`reread`: carried over, from 016080f (old docs/performance.md) (2026-11-28 18:44 UTC, 2 cores, 24 GiB); not measured again since.*')
  })

  it('shows ratios and multiples with two decimals, 1.00 included', () => {
    const table = renderTable(results([
      { figure: 'served', value: 1, unit: '× the file', how: 'counters' },
      { group: 'g', figure: 'requests', value: 6, unit: '', baseline: 'pages', ratio: 1, how: 'counters' },
    ]))
    expect(table).toContain('| served | 1.00 × the file |')
    expect(table).toContain('| requests | 6 (1.00×) |')
  })

  it('shows counts whole, values at three figures, and no number as n/a', () => {
    expect([formatNumber(209), formatNumber(1234.5), formatNumber(45.26), formatNumber(0.987), formatNumber(NaN)]).toEqual(['209', '1235', '45.3', '0.99', 'n/a'])
    // JSON has no NaN: a file that held one reads it back as null.
    expect(formatNumber(null as unknown as number)).toBe('n/a')
  })
})

describe('replaceRegions', () => {
  const doc = [
    '# Performance',
    'Prose.',
    '<!-- bench:reread -->',
    'old table',
    'old caption',
    '<!-- /bench:reread -->',
    'More prose.',
    '<!-- bench:send -->',
    'send table',
    '<!-- /bench:send -->',
    'End.',
    '',
  ].join('\n')

  it('replaces the lines between a step\'s markers and nothing else', () => {
    const r = replaceRegions(doc, new Map([['reread', '| new |\n|---|\n']]))
    expect(r.text).toBe(doc.replace('old table\nold caption\n', '| new |\n|---|\n'))
    expect(r.changed).toEqual(['reread'])
    expect(r.missing).toEqual(['send'])
  })

  it('leaves a region whose step has no results as it is, and reports nothing changed when the tables match', () => {
    const once = replaceRegions(doc, new Map([['reread', 'T1'], ['send', 'T2']]))
    expect(once.changed).toEqual(['reread', 'send'])
    const again = replaceRegions(once.text, new Map([['reread', 'T1'], ['send', 'T2']]))
    expect(again.text).toBe(once.text)
    expect(again.changed).toEqual([])
    expect(replaceRegions(doc, new Map()).text).toBe(doc)
  })

  it('keeps `$` in a table as it is (no replacement patterns)', () => {
    const r = replaceRegions(doc, new Map([['reread', 'costs $& and $1']]))
    expect(r.text).toContain('<!-- bench:reread -->\ncosts $& and $1\n<!-- /bench:reread -->')
  })

  it('lists the steps a document has regions for', () => {
    expect(regionSteps(doc)).toEqual(['reread', 'send'])
  })
})

describe('results files', () => {
  let dir = ''
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('are written in the shared shape and read back by step, other JSON files ignored', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'bench-results-'))
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
    const out = await writeResults(root, 'names', [{ figure: 'ls', value: 12.5, unit: 'ms', how: 'ls -1A' }], dir)
    expect(out).toBe(path.join(dir, 'names.json'))
    const written = JSON.parse(await readFile(out, 'utf8')) as BenchResults
    expect(written.step).toBe('names')
    expect(written.commit).toMatch(/^[0-9a-f]{7,}$/)
    expect(written.machine.cores).toBeGreaterThan(0)
    expect(written.rows).toEqual([{ figure: 'ls', value: 12.5, unit: 'ms', how: 'ls -1A' }])
    await writeResults(root, 'old-format', [], dir)
    await writeFile(path.join(dir, 'listing-2026-11-27T10-00-00.json'), '{"a row": "a value"}')
    expect([...(await readResults(dir)).keys()]).toEqual(['names', 'old-format'])
  })

  it('go to --results DIR, else BENCH_RESULTS, else bench-results/ of the checkout', () => {
    expect(resultsDir('/repo', ['node', 'x.js', '--results', 'out'], {})).toBe(path.resolve('out'))
    expect(resultsDir('/repo', ['node', 'x.js'], { BENCH_RESULTS: '/tmp/r' })).toBe('/tmp/r')
    expect(resultsDir('/repo', ['node', 'x.js'], {})).toBe('/repo/bench-results')
  })
})
