// Listing a transfer of look-alike names through the mount, held against a transfer of as
// many plain, distinct names in the same run. Not a test: it prints figures.
//
//   node --import ./test/fuse/fixtures/register-ts.mjs scripts/bench/names.ts   (from TypeScript)
//   npm run build && node dist/scripts/bench/names.js                             (after a build)
//
// What it measures: `ls -1A` of a transfer folder of 10,000 files whose names agree in their
// first 300 bytes (cut to 255 bytes, each needs the mark that tells it apart), the first time
// (its folders and files laid out) and warm (median of several), against the same for a transfer
// of 10,000 short distinct names and for one of 10,000 distinct names of about the same length
// (248 bytes, not cut: a listing of long names moves more bytes whatever they are). Each is
// listed as by-id/<id>/, so that nothing lays it out before (a listing of inbox/ lays out the
// newest transfers for their thumbnails): the first time includes fetching its details.
// BENCH_NAMES_FILES=<n> changes how many files each transfer holds.
import path from 'node:path'
import { median, sh, withBenchWorld } from './world.js'

const FILES = Number(process.env.BENCH_NAMES_FILES ?? 10_000)
/** Names are `<stem>-1-<n>.txt`: these agree in their first 300 bytes, and are cut. */
const LOOK_ALIKE_STEM = 'x'.repeat(300)
/** Long, but not cut: `<236 bytes>-1-10000.txt` is 248 bytes. */
const LONG_STEM = 'y'.repeat(236)

await withBenchWorld('names', {}, async (w) => {
  const { rows, service, mountDir } = w
  process.stderr.write(`seeding three transfers of ${FILES} files...\n`)
  const seed = async (shape: Record<string, unknown>) =>
    (await service.control<{ transferids: string[] }>('POST', '/inbox/seed', { to: service.user.email, count: 1, files: FILES, ...shape })).transferids[0]!
  const short = await seed({ subjectPrefix: 'Distinct' })
  const long = await seed({ subjectPrefix: 'Long', fileStem: LONG_STEM })
  const lookAlike = await seed({ subjectPrefix: 'Look-alike', fileStem: LOOK_ALIKE_STEM })
  await w.mount()
  const list = async (id: string) => {
    const dir = path.join(mountDir, 'by-id', id)
    const cold = await sh('ls', ['-1A', dir])
    const names = cold.stdout.split('\n').filter(Boolean)
    if (new Set(names).size !== FILES + 1) throw new Error(`${dir}: ${new Set(names).size} distinct names, not ${FILES + 1}`)
    const warm: number[] = []
    for (let i = 0; i < 5; i++) warm.push((await sh('ls', ['-1A', dir])).ms)
    return { cold: cold.ms, warm: median(warm) }
  }
  const plain = await list(short)
  const longer = await list(long)
  const alike = await list(lookAlike)
  const how = (what: string) => `ls -1A by-id/<id>/ of ${FILES} files, ${what}`
  const first = 'the first time (its details fetched)'
  const warm = 'warm, median of 5'
  rows.push(
    { figure: 'short distinct names, first ls', value: plain.cold, unit: 'ms', how: how(first) },
    { figure: 'distinct names of 248 bytes, first ls', value: longer.cold, unit: 'ms', how: how(first) },
    { figure: 'names agreeing in their first 300 bytes, first ls', value: alike.cold, unit: 'ms', baseline: 'short distinct names, first ls', ratio: alike.cold / plain.cold, how: how(first) },
    { figure: 'the same / distinct names of 248 bytes', value: alike.cold, unit: 'ms', baseline: 'distinct names of 248 bytes, first ls', ratio: alike.cold / longer.cold, how: how(first) },
    { figure: 'short distinct names, warm ls', value: plain.warm, unit: 'ms', how: how(warm) },
    { figure: 'distinct names of 248 bytes, warm ls', value: longer.warm, unit: 'ms', how: how(warm) },
    { figure: 'look-alike names, warm ls', value: alike.warm, unit: 'ms', baseline: 'short distinct names, warm ls', ratio: alike.warm / plain.warm, how: how(warm) },
    { figure: 'the same / distinct names of 248 bytes, warm', value: alike.warm, unit: 'ms', baseline: 'distinct names of 248 bytes, warm ls', ratio: alike.warm / longer.warm, how: how(warm) },
  )
})
