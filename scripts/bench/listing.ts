// Listings through the mount against the local service, held against the null filesystem
// (null-fs.ts) showing the very same tree, in the same run. Not a test: it prints figures.
//
//   node --import ./test/fuse/fixtures/register-ts.mjs scripts/bench/listing.ts   (from TypeScript)
//   npm run build && node dist/scripts/bench/listing.js                             (after a build)
//
// What it measures: the requests `find` over an inbox of 5,000 transfers makes against the
// inbox pages (each page carries its transfers' files, so the pages are all it needs);
// that find's time once the pages have arrived (`ls inbox/` first), against the same find
// over the null filesystem; a warm `ls -l` of a 200-file transfer folder against the same
// on the null filesystem (medians of several runs); and `ls search/<words>` over the same
// inbox, before anyone lists inbox/ (so the mount's arrival checks stay at their idle
// interval and the counters hold only the search): its requests against the inbox pages
// the matches fill, its time cold (the search) and warm (cached within the listing TTL).
import path from 'node:path'
import { median, sh, transferFolder, treeOf, withBenchWorld, withNullFs, type BenchService, type Rows } from './world.js'

const TRANSFERS = 5000
/** Inbox page size the local service uses. */
const PAGE = 1000
const FOLDER_FILES = 200
/** Searches over the seeded inbox (subjects "Seeded transfer <n>", senders sender0..2@example.com): words, what they match. */
const SEARCHES: Array<[words: string, matches: string]> = [
  ['Seeded transfer 4242', 'one subject'],
  ['sender1@example.com', 'one sender, a third of the inbox'],
  ['Seeded transfer', 'every seeded transfer'],
]

/**
 * Counters from zero, once no request has been under way for 2 s: between two pages of a
 * listing the mount spends a while on the page it got, with nothing in flight.
 */
async function quiet(service: BenchService): Promise<void> {
  for (let idle = 0; idle < 10;) {
    await new Promise((r) => setTimeout(r, 200))
    idle = (await service.counters()).inFlight > 0 ? 0 : idle + 1
  }
  await service.control('POST', '/counters/reset')
}

async function measureSearches(service: BenchService, mountDir: string, rows: Rows): Promise<void> {
  for (const [words, matches] of SEARCHES) {
    await quiet(service)
    const dir = path.join(mountDir, 'search', words)
    const cold = await sh('ls', [dir])
    const found = cold.stdout.split('\n').filter(Boolean).length
    const calls = (await service.counters()).routes
    const requests = Object.values(calls).reduce((a, b) => a + b, 0)
    const warm: number[] = []
    for (let i = 0; i < 9; i++) warm.push((await sh('ls', [dir])).ms)
    const again = Object.values((await service.counters()).routes).reduce((a, b) => a + b, 0) - requests
    const pages = Math.floor(found / PAGE) + 1
    const how = `ls search/<words> over ${TRANSFERS} transfers, before inbox/ is listed`
    const group = `search/${words} (${matches})`
    rows.push(
      { group, figure: 'search: transfers found', value: found, unit: '', how },
      { group, figure: 'search: cold ls', value: cold.ms, unit: 'ms', how },
      { group, figure: 'search: requests', value: requests, unit: '', baseline: 'the inbox pages its matches fill', ratio: requests / pages, target: '<= 1', how: 'the service\'s counters (inbox calls)' },
      { group, figure: 'search: warm ls, median of 9', value: median(warm), unit: 'ms', how: 'again within the listing TTL' },
      { group, figure: 'search: requests of 9 warm ls', value: again, unit: '', target: '0', how: 'the service\'s counters' },
    )
  }
}

await withBenchWorld('listing', {}, async (w) => {
  const { rows, service, mountDir } = w
  process.stderr.write(`seeding ${TRANSFERS} transfers and one of ${FOLDER_FILES} files...\n`)
  const [wide] = await service.seed(1, { files: FOLDER_FILES, fileSize: 1000, subjectPrefix: 'Wide' })
  await service.control('POST', '/inbox/seed', { to: service.user.email, count: TRANSFERS - 1 })
  await w.mount()
  const searchRows: Rows = []
  await measureSearches(service, mountDir, searchRows)
  // The mount's own start-up calls (the account's contact groups) are not find's.
  await quiet(service)
  const inbox = path.join(mountDir, 'inbox')
  const find = (dir: string) => sh('bash', ['-c', 'find "$1" -type f | wc -l', 'bash', dir])
  await sh('ls', [inbox])
  const pagesMs = (await sh('ls', [inbox])).ms
  const found = await find(inbox)
  const calls = (await service.counters()).routes
  const requests = Object.values(calls).reduce((a, b) => a + b, 0)
  const wideDir = await transferFolder(mountDir, wide!)
  const lsl = async (dir: string) => {
    await sh('ls', ['-l', dir])
    const times: number[] = []
    for (let i = 0; i < 9; i++) times.push((await sh('ls', ['-l', dir])).ms)
    return median(times)
  }
  const lsMs = await lsl(wideDir)
  const tree = await treeOf(mountDir)
  await w.unmount()
  process.stderr.write('the same tree on the null filesystem...\n')
  const [nullFind, nullLs] = await withNullFs(w.home, tree, async (dir) => {
    await sh('ls', [path.join(dir, 'inbox')])
    const f = await find(path.join(dir, 'inbox'))
    return [f.ms, await lsl(path.join(dir, path.relative(mountDir, wideDir)))] as const
  })
  const findHow = `find inbox/ -type f | wc -l over ${TRANSFERS} transfers, after ls inbox/`
  const lsHow = `warm ls -l of a ${FOLDER_FILES}-file transfer folder, median of 9`
  rows.push(
    { figure: 'find inbox/, null filesystem', value: nullFind, unit: 'ms', how: 'the same tree on null-fs.ts' },
    { figure: 'find inbox/', value: found.ms, unit: 'ms', baseline: 'find inbox/, null filesystem', ratio: found.ms / nullFind, target: '<= 2', how: `${findHow}; ${found.stdout.trim()} files` },
    { figure: 'find inbox/: requests', value: requests, unit: 'requests', baseline: 'inbox pages', ratio: requests / Math.ceil(TRANSFERS / PAGE), target: '<= 1', how: `the service's counters: ${JSON.stringify(calls)}` },
    { figure: 'ls inbox/ again', value: pagesMs, unit: 'ms', how: 'the second ls of the inbox' },
    { figure: 'ls -l, null filesystem', value: nullLs, unit: 'ms', how: 'the same folder on null-fs.ts' },
    { figure: 'ls -l of a transfer folder', value: lsMs, unit: 'ms', baseline: 'ls -l, null filesystem', ratio: lsMs / nullLs, target: '<= 1.2', how: lsHow },
    ...searchRows,
  )
})
