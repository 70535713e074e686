// `transferfs download` against the local service: every file verified by MD5, the ZIP,
// a damaged chunk caught by its range hash, an existing file left alone, a download
// killed mid-way that resumes without fetching the chunks it had finished, and one whose
// transfer holds "X" and "X.part" side by side.
import { createHash } from 'node:crypto'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { partialOf, PARTIAL_DIR, type SidecarState } from '../../src/cli/download-resume.js'
import { EXIT } from '../../src/cli/output/exit-codes.js'
import { run, tempDir, unmountAll, waitFor, waitForExit } from '../support/mount.js'
import { bytes, cli, jsonOf, putTransfer, startCli, startWorld, stopWorld, type CliWorld } from './harness.js'

const MiB = 1024 * 1024
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex')

let w: CliWorld
beforeAll(async () => {
  w = await startWorld()
})
afterEach(async () => {
  await w.service.controls.clearFaults()
})
afterAll(async () => {
  await stopWorld(w)
  await unmountAll()
})

interface DownloadJson {
  transferid: string
  directory: string
  zip: boolean
  verified: boolean
  files: Array<{ name: string; path: string; size: number; md5: string | null; outcome: string; fetchedChunks: number }>
}

describe('download', () => {
  it('fetches every file into -o DIR with its folders, each matching its MD5; a second run finds them there', async () => {
    const files = [
      { name: 'report.txt', data: Buffer.from('quarterly\n') },
      { name: 'data/raw.bin', data: bytes(3 * MiB + 17, 2) },
      { name: 'data/deeper/empty.txt', data: Buffer.alloc(0) },
    ]
    const t = await putTransfer(w.client, files)
    const out = await tempDir()
    const r = await cli(['download', t.id, '-o', out, '--chunk-size', '1M', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const report = jsonOf<DownloadJson>(r)
    expect(report.verified).toBe(true)
    expect(report.files.map((f) => [f.name, f.outcome])).toEqual(files.map((f) => [f.name, 'downloaded']))
    for (const f of files) expect(md5(await readFile(path.join(out, f.name)))).toBe(md5(f.data))
    expect(report.files[1]!.fetchedChunks).toBe(4)

    await w.service.controls.resetCounters()
    const again = jsonOf<DownloadJson>(await cli(['download', t.id, '-o', out, '--json']))
    expect(again.files.every((f) => f.outcome === 'present')).toBe(true)
    expect((await w.service.controls.counters()).routes.download ?? 0).toBe(0)
  })

  it('a damaged chunk is caught by its range hash and fetched again', async () => {
    const data = bytes(2 * MiB, 5)
    const t = await putTransfer(w.client, [{ name: 'big.bin', data }])
    const out = await tempDir()
    await w.service.controls.resetCounters()
    await w.service.controls.fault({ route: 'download', kind: 'corrupt', count: 1 })
    const r = await cli(['download', t.id, '-o', out, '--chunk-size', '512K'])
    expect(r.code, r.stderr).toBe(0)
    expect(md5(await readFile(path.join(out, 'big.bin')))).toBe(md5(data))
    // 4 chunks, one of them twice.
    expect((await w.service.controls.counters()).routes.download).toBe(5)
    expect(r.stderr).toContain('every chunk verified by its range hash')
  })

  it('--zip fetches the archive in chunks and says it cannot be verified', async () => {
    const t = await putTransfer(w.client, [{ name: 'a.txt', data: Buffer.from('a\n') }, { name: 'b/c.bin', data: bytes(300_000, 7) }])
    const out = await tempDir()
    const r = await cli(['download', t.id, '--zip', '-o', out, '--chunk-size', '100K'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain('the ZIP cannot be verified')
    const zip = path.join(out, `${t.id}.zip`)
    expect(r.stdout.trim()).toBe(zip)
    const test = await run('unzip', ['-t', zip])
    expect(test.code, test.stdout).toBe(0)
    expect(test.stdout).toContain('b/c.bin')
    const json = jsonOf<DownloadJson>(await cli(['download', t.id, '--zip', '-o', await tempDir(), '--json']))
    expect(json).toMatchObject({ zip: true, verified: false })
  })

  it('leaves a different file of the same name alone unless --force', async () => {
    const t = await putTransfer(w.client, [{ name: 'mine.txt', data: Buffer.from('from the service\n') }])
    const out = await tempDir()
    await writeFile(path.join(out, 'mine.txt'), 'my own work\n')
    const r = await cli(['download', t.id, '-o', out])
    expect(r.code).toBe(EXIT.error)
    expect(r.stderr).toContain('exists already')
    expect(r.stderr).toContain('--force')
    expect(await readFile(path.join(out, 'mine.txt'), 'utf8')).toBe('my own work\n')
    expect((await cli(['download', t.id, '-o', out, '--force'])).code).toBe(0)
    expect(await readFile(path.join(out, 'mine.txt'), 'utf8')).toBe('from the service\n')
  })

  it('an unknown transfer exits 4', async () => {
    const r = await cli(['download', 'nosuchtransfer', '-o', await tempDir()])
    expect(r.code).toBe(EXIT.notFound)
    expect(r.stderr).toContain('no transfer with the id or trackid nosuchtransfer')
  })

  it('killed mid-way, it resumes: only the chunks not yet verified are fetched again, and the file matches its MD5', async () => {
    const chunks = 8
    const data = bytes(chunks * MiB, 9)
    const t = await putTransfer(w.client, [{ name: 'movie.bin', data }])
    const out = await tempDir()
    const target = path.join(out, 'movie.bin')
    // Slow enough that the kill lands while chunks are still missing.
    await w.service.controls.throttle({ bytesPerSecond: 1.5 * MiB })
    const child = startCli(['download', t.id, '-o', out, '--chunk-size', '1M'])
    const partial = partialOf(out, target)
    const readState = () => sidecarOf(partial.state)
    await killOnceVerified(child, readState, 2)
    const verifiedAtKill = (await readState())!.verified
    expect(verifiedAtKill.length).toBeGreaterThanOrEqual(2)
    expect(verifiedAtKill.length).toBeLessThan(chunks)
    // The partial file holds exactly the verified chunks' bytes at their places.
    const part = await readFile(partial.bytes)
    for (const i of verifiedAtKill) expect(md5(part.subarray(i * MiB, (i + 1) * MiB))).toBe(md5(data.subarray(i * MiB, (i + 1) * MiB)))

    // A kill can land while the state is being replaced: its temporary file stays beside it.
    // Made here for certain (its name as the replace makes it), where the kill above may or may not have left one.
    await writeFile(`${partial.state}.tmp-0badc0de`, '{"torn')
    await w.service.controls.throttle({})
    await countFromZero()
    const r = await cli(['download', t.id, '-o', out, '--chunk-size', '1M', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const report = jsonOf<DownloadJson>(r)
    const missing = chunks - verifiedAtKill.length
    expect(report.files[0]).toMatchObject({ outcome: 'resumed', fetchedChunks: missing })
    const counters = await w.service.controls.counters()
    expect(counters.routes.download).toBe(missing)
    expect(counters.bytesServed).toBe(missing * MiB)
    expect(md5(await readFile(target))).toBe(md5(data))
    // Nothing of the staging is left once every file is whole.
    expect(await readdir(out)).toEqual(['movie.bin'])
  })

  it('"X" and "X.part" of one transfer: killed mid-way and resumed, both arrive whole and neither is taken for the other\'s partial bytes', async () => {
    const big = bytes(16 * MiB, 11)
    const other = bytes(3 * MiB + 5, 12)
    const files = [{ name: 'big.bin', data: big }, { name: 'big.bin.part', data: other }, { name: 'big.bin.part.state', data: Buffer.from('{}') }]
    const t = await putTransfer(w.client, files)
    const out = await tempDir()
    await w.service.controls.throttle({ bytesPerSecond: 1.5 * MiB })
    const child = startCli(['download', t.id, '-o', out, '--chunk-size', '1M'])
    const readState = () => sidecarOf(partialOf(out, path.join(out, 'big.bin')).state)
    // Killed with "big.bin" part-way (whether "big.bin.part" is whole yet depends on which file's
    // chunks the shared queue took first). Where the partial bytes of "big.bin" were
    // "big.bin.part", the next run took one for the other: it refused the file as in the way,
    // or, had "big.bin.part" been whole, resumed "big.bin" from its bytes and removed it.
    await killOnceVerified(child, readState, 2)
    const atKill = (await readState())!.verified.length
    expect(atKill).toBeLessThan(16)
    // The partial bytes wait in the hidden folder; what is beside the files is only ever whole.
    expect((await readFile(partialOf(out, path.join(out, 'big.bin')).bytes)).length).toBe(big.length)
    for (const f of files) {
      const there = await readFile(path.join(out, f.name)).catch(() => null)
      if (there) expect(md5(there), f.name).toBe(md5(f.data))
    }

    await w.service.controls.throttle({})
    await countFromZero()
    const r = await cli(['download', t.id, '-o', out, '--chunk-size', '1M', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const report = jsonOf<DownloadJson>(r)
    expect(report.files.find((f) => f.name === 'big.bin')).toMatchObject({ outcome: 'resumed', fetchedChunks: 16 - atKill })
    for (const f of files) expect(md5(await readFile(path.join(out, f.name))), f.name).toBe(md5(f.data))
    expect((await readdir(out)).sort()).toEqual(files.map((f) => f.name).sort())
  })

  it('a transfer\'s own ".transferfs-partial" folder is downloaded beside the staging folder, under another name', async () => {
    const files = [{ name: `${PARTIAL_DIR}/files/a.txt`, data: Buffer.from('mine\n') }, { name: 'a.txt', data: Buffer.from('top\n') }]
    const t = await putTransfer(w.client, files)
    const out = await tempDir()
    const r = await cli(['download', t.id, '-o', out, '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(await readFile(path.join(out, `${PARTIAL_DIR} (2)`, 'files', 'a.txt'), 'utf8')).toBe('mine\n')
    expect(await readFile(path.join(out, 'a.txt'), 'utf8')).toBe('top\n')
  })
})

/** A download's sidecar as it stands, or null while there is none. */
async function sidecarOf(file: string): Promise<SidecarState | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as SidecarState
  } catch {
    return null
  }
}

/** SIGKILLs the download once its sidecar lists `chunks` verified chunks (and `also` holds). */
async function killOnceVerified(child: ReturnType<typeof startCli>, state: () => Promise<SidecarState | null>, chunks: number,
  also: () => Promise<boolean> = async () => true): Promise<void> {
  try {
    let seen = ''
    const ok = await waitFor(async () => {
      const v = (await state())?.verified.length ?? 0
      const a = await also()
      seen = `${v} chunks verified, the other condition ${a ? 'met' : 'not met'}, the download's exit code ${child.exitCode}`
      return v >= chunks && a
    }, 60_000, 50)
    expect(ok, seen).toBe(true)
    child.kill('SIGKILL')
    expect(await waitForExit(child.pid!, 10_000)).toBe(true)
  } finally {
    child.kill('SIGKILL')
  }
}

/**
 * Zeroes the service's counters once a killed download's connections are no longer served:
 * they may still be sent a piece until the service sees them closed.
 */
async function countFromZero(): Promise<void> {
  let last = -1
  expect(await waitFor(async () => {
    const now = (await w.service.controls.counters()).bytesServed
    const still = now === last
    last = now
    return still
  }, 10_000, 300)).toBe(true)
  await w.service.controls.resetCounters()
}
