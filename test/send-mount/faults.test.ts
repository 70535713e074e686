// Uploads answered badly a fifth of the time (406, 449, 503, a connection reset mid-body)
// still end as exactly one transfer per entry with the right bytes; and a 2 GiB file goes
// up in chunks while the mount's memory stays flat (peak RSS of the daemon).
import { createHash } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { run } from '../support/mount.js'
import { bytes, md5, outboxDrained, sentRecords, transferFiles, type User, useSendingMount } from './helpers.js'

const USER: User = { email: 'faults@example.com', password: 'pw-faults-123456' }
const world = useSendingMount(USER)

async function peakRssBytes(p: number): Promise<number> {
  const status = await fsp.readFile(`/proc/${p}/status`, 'utf8')
  const kb = /VmHWM:\s+(\d+) kB/.exec(status)
  return Number(kb?.[1] ?? 0) * 1024
}

describe('sending through faults and at size', () => {
  it('with 20% of uploads failing (406, 449, 503, reset), every entry completes once with the right bytes', async () => {
    const files = new Map<string, string>()
    await fsp.mkdir(path.join(world.src, 'batch'))
    for (let i = 0; i < 12; i++) {
      const data = bytes(500_000 + i * 300_000, 100 + i)
      await fsp.writeFile(path.join(world.src, 'batch', `f${i}.bin`), data)
      files.set(`f${i}.bin`, md5(data))
    }
    const big = bytes(120_000_000, 7)
    await fsp.writeFile(path.join(world.src, 'big.bin'), big)
    await world.service.controls.resetCounters()
    for (const f of [
      { kind: 'status' as const, status: 406 }, { kind: 'status' as const, status: 449 },
      { kind: 'status' as const, status: 503 }, { kind: 'reset' as const },
    ]) {
      // Each kind surely once (the next uploads), then at random: 15 uploads could otherwise
      // all pass by chance (0.815^15, about 5%) and the test would prove nothing.
      await world.service.controls.fault({ route: 'savefile', count: 1, ...f })
      await world.service.controls.fault({ route: 'savefile', probability: 0.05, ...f })
    }
    try {
      const r = await run('bash', ['-c', 'cp -r "$1/batch" "$2/" && cp "$1/big.bin" "$2/"', 'bash', world.src, path.join(world.account.mountDir, 'outbox')])
      expect(r.stderr).toBe('')
      expect(await outboxDrained(world.account, 120_000)).toBe(true)
    } finally {
      await world.service.controls.clearFaults()
    }
    const recs = await sentRecords(world.account)
    expect(recs.map((x) => x.subject).sort()).toEqual(['batch', 'big.bin'])
    expect(await transferFiles(world.client, recs.find((x) => x.subject === 'batch')!.transferid)).toEqual(files)
    expect(await transferFiles(world.client, recs.find((x) => x.subject === 'big.bin')!.transferid)).toEqual(new Map([['big.bin', md5(big)]]))
    const c = await world.service.controls.counters()
    // Faults really happened: at least the four certain failures beyond the chunks (12 + 3).
    expect(c.routes.savefile ?? 0).toBeGreaterThanOrEqual(19)
  })

  it('a 2 GiB file goes up in chunks with flat memory', async () => {
    const before = await peakRssBytes(world.pid)
    process.stdout.write(`before the 2 GiB send: peak RSS ${(before / 2 ** 20).toFixed(0)} MiB\n`)
    const r = await run('dd', ['if=/dev/zero', `of=${path.join(world.account.mountDir, 'outbox', 'two-gib.bin')}`, 'bs=1M', 'count=2048', 'status=none'], { timeoutMs: 120_000 })
    expect(r.code).toBe(0)
    const written = await peakRssBytes(world.pid)
    process.stdout.write(`after writing: peak RSS ${(written / 2 ** 20).toFixed(0)} MiB\n`)
    expect(await outboxDrained(world.account, 180_000)).toBe(true)
    const peak = await peakRssBytes(world.pid)
    const hash = createHash('md5')
    const zeros = Buffer.alloc(64 * 1024 * 1024)
    for (let i = 0; i < 32; i++) hash.update(zeros)
    const rec = (await sentRecords(world.account)).find((x) => x.subject === 'two-gib.bin')!
    expect(await transferFiles(world.client, rec.transferid)).toEqual(new Map([['two-gib.bin', hash.digest('hex')]]))
    process.stdout.write(`2 GiB send: daemon peak RSS ${(before / 2 ** 20).toFixed(0)} MiB before, ${(peak / 2 ** 20).toFixed(0)} MiB after\n`)
    // Bounded by the chunks in flight, not the file: 4 chunks of 50 MB, each held once as
    // read and at most once more as encrypted by TLS (400 MB), plus slack; the file is 2 GiB.
    expect(peak - before).toBeLessThan(600 * 2 ** 20)
  }, 240_000)
})
