// Benchmark of sending through the mount against the local service, in one run. Not a
// test: it prints figures (and a ratio, which travels between machines better than MB/s).
//
//   node --import ./test/fuse/fixtures/register-ts.mjs scripts/bench/send.ts   (from TypeScript)
//   npm run build && node dist/scripts/bench/send.js                             (after a build)
//
// What it measures: `cp` of a 1 GiB file into outbox/ (the time cp takes: local-disk
// speed, since bytes only go to the staging folder), the time from the start of cp until
// the transfer is complete (settle time included, given separately), against the same file
// uploaded directly with the client (initialize, chunks with their MD5, Complete); that
// upload against a raw one (the same chunks posted four at a time, no MD5); `cp -r` of a
// folder of 1,000 small files and one 64 MiB file until it is in sent/, against
// `transferfs send` of the same folder plus the settle time, also through the service's
// throttle (a slow link, where copying and uploading overlap); the mount daemon's peak RSS.
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { request } from 'undici'
import { UPLOAD_QUERY } from '../../src/api/protocol.js'
import { cliEntry, MB, peakRssMiB, sh, withBenchWorld } from './world.js'

const SIZE = 1024 ** 3
const SETTLE_MS = 500
const CHUNK = 50_000_000

async function writeSource(file: string): Promise<void> {
  const block = Buffer.alloc(1024 * 1024)
  const out = createWriteStream(file)
  for (let i = 0; i < SIZE / block.length; i++) {
    block.writeUInt32LE(i, 0)
    block.writeUInt32LE(i * 7919, block.length - 4)
    if (!out.write(Buffer.from(block))) await new Promise<void>((r) => out.once('drain', () => r()))
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())))
}

/** Until sent.jsonl records a transfer of `subject`. */
async function sentAs(sentLog: string, subject: string): Promise<void> {
  for (;;) {
    const text = await readFile(sentLog, 'utf8').catch(() => '')
    if (text.includes(`"subject":${JSON.stringify(subject)}`)) return
    await new Promise((r) => setTimeout(r, 20))
  }
}

await withBenchWorld('send', { env: { TRANSFERFS_SETTLE_MS: String(SETTLE_MS) } }, async (w) => {
  const { home, mountDir, client, rows } = w
  const source = path.join(home, 'source.bin')
  process.stderr.write('writing a 1 GiB source file...\n')
  await writeSource(source)
  const pid = await w.mount()

  process.stderr.write('cp 1 GiB into outbox/ and waiting for the transfer...\n')
  const sentLog = path.join(home, 'data', 'sent.jsonl')
  const t0 = performance.now()
  const cp = await sh('cp', [source, path.join(mountDir, 'outbox', 'big.bin')])
  await sentAs(sentLog, 'big.bin')
  const viaMount = performance.now() - t0

  process.stderr.write('uploading the same file directly with the client...\n')
  const t1 = performance.now()
  const init = await client.transfers.initialize({ subject: 'direct.bin', transfersize: SIZE })
  await client.upload.uploadFile({
    transferUrl: init.transferurl, transferId: init.transferid, transferKey: init.transferkey,
    fileName: 'direct.bin', source: { path: source }, chunkSize: CHUNK,
  })
  await client.transfers.complete(init.transferid, init.transferkey)
  const direct = performance.now() - t1

  process.stderr.write('uploading it raw (no MD5)...\n')
  const t2 = performance.now()
  const raw = await client.transfers.initialize({ subject: 'raw.bin', transfersize: SIZE })
  const chunks = Math.ceil(SIZE / CHUNK)
  let nextChunk = 0
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (nextChunk < chunks) {
      const index = nextChunk++
      const start = index * CHUNK
      const end = Math.min(SIZE, start + CHUNK)
      const url = new URL(raw.transferurl)
      for (const [k, v] of Object.entries({ [UPLOAD_QUERY.transferId]: raw.transferid, [UPLOAD_QUERY.transferKey]: raw.transferkey,
        [UPLOAD_QUERY.fileName]: 'raw.bin', [UPLOAD_QUERY.chunkSize]: CHUNK, [UPLOAD_QUERY.chunks]: chunks, [UPLOAD_QUERY.chunk]: index })) url.searchParams.set(k, String(v))
      const res = await request(url, { method: 'POST', body: createReadStream(source, { start, end: end - 1 }), headers: { 'content-length': String(end - start) }, dispatcher: w.dispatcher })
      await res.body.dump()
      if (res.statusCode !== 200) throw new Error(`raw upload of chunk ${index}: ${res.statusCode}`)
    }
  }))
  const rawMs = performance.now() - t2
  const rss = await peakRssMiB(pid)

  process.stderr.write('a folder of 1,000 small files and one of 64 MiB...\n')
  const folder = path.join(home, 'Project files')
  await mkdir(folder)
  for (let i = 0; i < 1000; i++) await writeFile(path.join(folder, `note-${i}.txt`), `note ${i}\n`.repeat(1 + (i % 300)))
  await sh('bash', ['-c', `head -c ${64 * 1024 * 1024} "$1" > "$2"`, 'bash', source, path.join(folder, 'video.bin')])
  const t3 = performance.now()
  await sh('cp', ['-r', folder, path.join(mountDir, 'outbox')])
  await sentAs(sentLog, 'Project files')
  const folderViaMount = performance.now() - t3
  const t4 = performance.now()
  await sh(process.execPath, [...process.execArgv, cliEntry, 'send', folder, '--subject', 'Project files (send)'], w.env)
  const folderSend = performance.now() - t4

  // The same over a slow link, where the upload (not this machine's two cores, which the
  // local service shares) bounds the send, and the copy can overlap it.
  process.stderr.write('the same folder through the throttle (12.5 MB/s, 20 ms per request)...\n')
  await w.service.control('POST', '/throttle', { bytesPerSecond: 12.5 * MB, latencyMs: 20 })
  const t5 = performance.now()
  await sh('cp', ['-r', folder, path.join(mountDir, 'outbox', 'Slow files')])
  await sentAs(sentLog, 'Slow files')
  const slowViaMount = performance.now() - t5
  const t6 = performance.now()
  await sh(process.execPath, [...process.execArgv, cliEntry, 'send', folder, '--subject', 'Slow files (send)'], w.env)
  const slowSend = performance.now() - t6
  await w.service.control('DELETE', '/faults')

  const s = (ms: number) => ms / 1000
  const folderHow = '1,000 small files and one of 64 MiB'
  rows.push(
    { figure: 'cp 1 GiB into outbox/ (returns)', value: s(cp.ms), unit: 's', how: 'cp of a 1 GiB file: the bytes only go to the staging folder' },
    { figure: '1 GiB direct upload (client)', value: s(direct), unit: 's', how: 'the client: initialize, 50 MB chunks with their MD5, complete' },
    { figure: 'cp 1 GiB until the transfer is complete', value: s(viaMount), unit: 's', baseline: '1 GiB direct upload (client)', ratio: viaMount / direct, target: '<= 1.1', how: `from the start of cp until sent.jsonl has it, settle ${SETTLE_MS} ms included` },
    { figure: '  the same less the settle time', value: s(viaMount - SETTLE_MS), unit: 's', baseline: '1 GiB direct upload (client)', ratio: (viaMount - SETTLE_MS) / direct, how: `less ${SETTLE_MS} ms` },
    { figure: '1 GiB raw upload (no MD5)', value: s(rawMs), unit: 's', how: 'the same chunks posted 4 at a time' },
    { figure: '  direct upload, as a speed', value: SIZE / MB / s(direct), unit: 'MB/s', baseline: '1 GiB raw upload (no MD5)', ratio: rawMs / direct, target: '>= 0.6', how: 'speed / the raw upload\'s' },
    { figure: 'mount peak RSS', value: rss, unit: 'MiB', how: 'VmHWM of the mount after the 1 GiB sends' },
    { figure: 'transferfs send of a folder', value: s(folderSend), unit: 's', how: folderHow },
    { figure: 'cp -r of the folder into outbox/ until in sent/', value: s(folderViaMount), unit: 's', baseline: `transferfs send + settle ${SETTLE_MS} ms`, ratio: folderViaMount / (folderSend + SETTLE_MS), target: '<= 1.2', how: `${folderHow}; uploadWhileCopying` },
    { figure: 'transferfs send of the folder, 12.5 MB/s + 20 ms', value: s(slowSend), unit: 's', how: `${folderHow}, through the service's throttle` },
    { figure: 'cp -r until in sent/, 12.5 MB/s + 20 ms', value: s(slowViaMount), unit: 's', baseline: `transferfs send + settle ${SETTLE_MS} ms`, ratio: slowViaMount / (slowSend + SETTLE_MS), how: 'the same through the throttle' },
  )
})
