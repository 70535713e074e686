// Benchmark of sending through the mount against the local service, in one run. Not a
// test: it prints figures (and a ratio, which travels between machines better than MB/s).
//
//   node --import ./test/fuse/fixtures/register-ts.mjs scripts/bench/send.ts   (from TypeScript)
//   npm run build && node dist/scripts/bench/send.js                             (after a build)
//
// What it measures: `cp` of a 1 GiB file into outbox/ (the time cp takes: local-disk
// speed, since bytes only go to the staging folder), the time from the start of cp until
// the transfer is complete (settle time included, given separately), the same file
// uploaded directly with the client (initialize, chunks, Complete), their ratio, and the
// mount daemon's peak RSS.
import { createWriteStream } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { MB, sh, withBenchWorld } from './world.js'

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

await withBenchWorld('send', { service: {}, env: { TRANSFERFS_SETTLE_MS: String(SETTLE_MS) } }, async ({ home, mountDir, client, rows }, mount) => {
  const source = path.join(home, 'source.bin')
  process.stderr.write('writing a 1 GiB source file...\n')
  await writeSource(source)
  await mount()

  process.stderr.write('cp 1 GiB into outbox/ and waiting for the transfer...\n')
  const sentLog = path.join(home, 'data', 'sent.jsonl')
  const t0 = performance.now()
  const cp = await sh('cp', [source, path.join(mountDir, 'outbox', 'big.bin')])
  for (;;) {
    const text = await readFile(sentLog, 'utf8').catch(() => '')
    if (text.includes('"subject":"big.bin"')) break
    await new Promise((r) => setTimeout(r, 20))
  }
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

  const mbps = (ms: number) => `${(SIZE / MB / (ms / 1000)).toFixed(0)} MB/s`
  rows.push(
    ['cp 1 GiB into outbox/ (returns)', `${(cp.ms / 1000).toFixed(2)} s (${mbps(cp.ms)})`],
    [`cp start → transfer complete (settle ${SETTLE_MS} ms)`, `${(viaMount / 1000).toFixed(1)} s (${mbps(viaMount)})`],
    ['1 GiB direct upload (client)', `${(direct / 1000).toFixed(1)} s (${mbps(direct)})`],
    ['via mount / direct (time ratio)', (viaMount / direct).toFixed(2)],
    ['via mount minus settle / direct', ((viaMount - SETTLE_MS) / direct).toFixed(2)],
  )
})
