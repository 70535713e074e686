// A peek at the first bytes of a cold file (a type sniffer, a thumbnailer, `head`) through a
// real mount fetches about what the kernel asked for, not a whole head block: the service's
// byte counters tell. A `cat` of the same kind of file still fetches each byte once.
import { createHash } from 'node:crypto'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { bytes } from '../cli/harness.js'
import { run, useMounts } from '../support/mount.js'
import { login, mount, useAccount, useOneFile } from '../mount/harness.js'

const KiB = 1024
const MiB = 1024 * KiB
const SIZE = 8 * MiB

const world = useOneFile('peek.bin', SIZE, 11, 'first bytes')

useMounts()

describe('the first bytes of a cold file', () => {
  it('head -c 4096 fetches at most 128 KiB, and a cat after it each byte about once', async () => {
    // A fresh account: a new mount (no page cache of the file) and an empty disk cache.
    const account = await useAccount(world.service)
    await login(world.service)
    await mount(account)
    const file = path.join(account.mountDir, 'by-id', world.transferId, 'peek.bin')
    expect((await run('stat', [file])).code).toBe(0)

    await world.service.controls.resetCounters()
    const head = await run('bash', ['-c', 'head -c 4096 "$1" | md5sum', 'bash', file])
    expect(head.code, head.stderr).toBe(0)
    expect(head.stdout.split(' ')[0]).toBe(createHash('md5').update(bytes(SIZE, 11).subarray(0, 4096)).digest('hex'))
    const peek = await world.service.controls.counters()
    expect(peek.bytesServed, JSON.stringify(peek)).toBeGreaterThanOrEqual(4096)
    expect(peek.bytesServed, JSON.stringify(peek)).toBeLessThanOrEqual(128 * KiB)

    // The reader that goes on through the file is served whole blocks: the peek's bytes
    // are all it fetches twice.
    await world.service.controls.resetCounters()
    const cat = await run('bash', ['-c', 'cat "$1" | md5sum', 'bash', file], { timeoutMs: 60_000 })
    expect(cat.code, cat.stderr).toBe(0)
    expect(cat.stdout.split(' ')[0]).toBe(world.md5)
    const whole = await world.service.controls.counters()
    expect(whole.bytesServed, JSON.stringify(whole)).toBeLessThanOrEqual(SIZE + 128 * KiB)
  }, 120_000)
})
