// Pinning files offline on the read path (CachePinning), against the real local service over
// HTTPS: the service's counters tell every byte served, so a pinned file fetched whole is seen
// served once, a second fetch asks nothing, and a fetch resumed after an abort and a
// "remount" (a new read path on the same cache folder) asks only the rest.
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { TransferClient } from '../../src/api/client.js'
import { ServiceError } from '../../src/api/errors.js'
import type { BodySink } from '../../src/api/range-sockets.js'
import { toBuffer } from '../../src/read/bytes.js'
import { ReadPath, type ReadPathContext } from '../../src/read/content.js'
import { reservedBytes } from '../../src/read/pinned-files.js'
import { blockKey } from '../../src/read/memory-cache.js'
import type { ReadOptions } from '../../src/read/options.js'
import { ServiceRangeSource } from '../../src/read/service-source.js'
import { NoRoomError, type RangeSource, type RemoteFile } from '../../src/read/source.js'
import { remoteFileOf } from '../../src/vfs/transfer-tree.js'
import { bytes, putTransfer } from '../cli/harness.js'
import { REPO, TS_REGISTER } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'

const KiB = 1024
const MiB = 1024 * KiB
/** A small grid, so that files of a few MiB span several chunks and many runs. */
const GRID = { blockSize: 256 * KiB, pieceSize: MiB, chunkSize: 4 * MiB, headSize: 256 * KiB }

let service: TestService
let client: TransferClient
let goneTransferId: string
const files = new Map<string, { file: RemoteFile; data: Buffer }>()

beforeAll(async () => {
  service = await startTestService()
  client = new TransferClient({ apiUrl: service.baseUrl, apiKey: service.apiKey, ca: service.caPem })
  await client.auth.login(service.user.email, service.user.password)
  const made = [
    { name: 'pinned.bin', data: bytes(18 * MiB + 1000, 1) },
    { name: 'other-1.bin', data: bytes(8 * MiB, 2) },
    { name: 'other-2.bin', data: bytes(8 * MiB, 3) },
    { name: 'other-3.bin', data: bytes(8 * MiB, 4) },
    { name: 'reader.bin', data: bytes(24 * MiB, 5) },
  ]
  const t = await putTransfer(client, made, { subject: 'pin offline', to: [service.user.email] })
  const details = await client.transfers.details(t.id, { filesLimit: -1 })
  for (const dto of details.files) files.set(dto.filename!, { file: remoteFileOf(details, dto), data: made.find((m) => m.name === dto.filename)!.data })
  const gone = await putTransfer(client, [{ name: 'gone.bin', data: bytes(3 * MiB, 6) }], { subject: 'to be deleted', to: [service.user.email] })
  goneTransferId = gone.id
  const goneDetails = await client.transfers.details(gone.id, { filesLimit: -1 })
  files.set('gone.bin', { file: remoteFileOf(goneDetails, goneDetails.files[0]!), data: bytes(3 * MiB, 6) })
}, 120_000)

afterAll(async () => {
  await client?.close()
  await service?.close()
})

let dir: string
const opened: ReadPath[] = []
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tfs-pin-'))
  await service.controls.clearFaults()
  await settled()
  await service.controls.resetCounters()
})
afterEach(async () => {
  await service.resume()
  await service.controls.clearFaults()
  for (const rp of opened.splice(0)) await rp.flush()
  await rm(dir, { recursive: true, force: true, maxRetries: 5 })
})

/** A mount's read path in a process of its own: pins the file and fetches it, printing the bytes on disk after each run. */
const PIN_CHILD = `
const a = JSON.parse(process.env.PIN_CHILD)
const { TransferClient } = await import(a.repo + '/src/api/client.ts')
const { ReadPath } = await import(a.repo + '/src/read/content.ts')
const { ServiceRangeSource } = await import(a.repo + '/src/read/service-source.ts')
const client = new TransferClient({ apiUrl: a.apiUrl, apiKey: a.apiKey, ca: a.ca })
await client.auth.login(a.email, a.password)
const rp = await ReadPath.create(new ServiceRangeSource(client), a.options)
await rp.pin([a.file])
await rp.fetchAll(a.file, { signal: new AbortController().signal, onProgress: (n) => process.stdout.write(n + '\\n') })
`

function get(name: string): { file: RemoteFile; data: Buffer } {
  return files.get(name)!
}

async function open(options: Partial<ReadOptions> = {}, context: ReadPathContext = {}, source: RangeSource = new ServiceRangeSource(client)): Promise<ReadPath> {
  const rp = await ReadPath.create(source, { ...GRID, diskCacheDir: dir, diskCacheBytes: 256 * MiB, ...options }, null, context)
  opened.push(rp)
  return rp
}

/** The service's counters once no request is being answered (an aborted range may still be sending). */
async function settled(): Promise<{ download: number; rangehash: number; bytesServed: number }> {
  for (;;) {
    const c = await service.controls.counters()
    if (c.inFlight === 0) return { download: c.routes.download ?? 0, rangehash: c.routes.rangehash ?? 0, bytesServed: c.bytesServed }
    await new Promise((r) => setTimeout(r, 20))
  }
}

async function readAll(rp: ReadPath, file: RemoteFile, step = 128 * KiB): Promise<Buffer> {
  const h = rp.open(file)
  const parts: Buffer[] = []
  try {
    for (let at = 0; at < file.size; at += step) parts.push(Buffer.from(toBuffer(await h.read(at, step))))
  } finally {
    h.close()
  }
  return Buffer.concat(parts)
}

/** Every block of the file read from the disk cache alone: a new read path on the folder, the service down. */
async function readOffline(name: string): Promise<void> {
  const { file, data } = get(name)
  await service.pause()
  try {
    const rp = await open()
    expect(rp.cachedBytes(file)).toBe(file.size)
    expect((await readAll(rp, file)).equals(data)).toBe(true)
    expect(rp.stats.fetches + rp.stats.spans).toBe(0)
  } finally {
    await service.resume()
  }
}

describe('pinning files offline', () => {
  it('pin and fetchAll put every block of a multi-chunk file on disk, verified, each byte served once; a second fetchAll asks nothing', async () => {
    const { file } = get('pinned.bin')
    const rp = await open()
    expect(rp.isPinned(file)).toBe(false)
    await rp.pin([file])
    expect(rp.isPinned(file)).toBe(true)
    expect(rp.cacheUse()).toEqual({ pinnedBytes: reservedBytes(file.size, GRID.blockSize), otherBytes: 0, budgetBytes: 256 * MiB })
    const progress: number[] = []
    await rp.fetchAll(file, { signal: new AbortController().signal, onProgress: (n) => progress.push(n) })
    expect(rp.cachedBytes(file)).toBe(file.size)
    expect(progress.at(-1)).toBe(file.size)
    expect(progress.every((n, i) => i === 0 || n >= progress[i - 1]!)).toBe(true)
    const served = await settled()
    expect(served.bytesServed).toBeGreaterThanOrEqual(file.size)
    expect(served.bytesServed).toBeLessThanOrEqual(file.size + GRID.pieceSize)
    // Runs of a piece at most: more than one chunk's worth of requests.
    expect(served.download).toBeGreaterThan(file.size / GRID.chunkSize)
    await rp.fetchAll(file, { signal: new AbortController().signal })
    expect(await settled()).toEqual(served)
    await rp.flush()
    await readOffline('pinned.bin')
  })

  it('reading other files past the budget evicts no pinned block, and the pinned file reads with the service down', async () => {
    const pinned = get('pinned.bin').file
    const budget = 32 * MiB
    const rp = await open({ diskCacheBytes: budget })
    await rp.pin([pinned])
    await rp.fetchAll(pinned, { signal: new AbortController().signal })
    for (const name of ['other-1.bin', 'other-2.bin', 'other-3.bin', 'reader.bin']) {
      const { file, data } = get(name)
      expect((await readAll(rp, file)).equals(data)).toBe(true)
      await rp.flush()
    }
    expect(rp.cachedBytes(pinned)).toBe(pinned.size)
    const use = rp.cacheUse()
    expect(use.pinnedBytes).toBe(reservedBytes(pinned.size, GRID.blockSize))
    expect(use.otherBytes).toBeGreaterThan(0)
    expect(use.otherBytes).toBeLessThanOrEqual(budget - use.pinnedBytes)
    expect(rp.disk!.bytes).toBeLessThanOrEqual(budget)
    await readOffline('pinned.bin')

    // Pinned no more, its blocks are ordinary ones again: reads of others push them out.
    await rp.unpin([pinned])
    expect(rp.isPinned(pinned)).toBe(false)
    for (const name of ['other-1.bin', 'other-2.bin', 'other-3.bin']) {
      await readAll(rp, get(name).file)
      await rp.flush()
    }
    expect(rp.cachedBytes(pinned)).toBeLessThan(pinned.size)
  })

  it('a remount with a smaller budget evicts other files to fit, never a pinned one', async () => {
    const pinned = get('pinned.bin').file
    const first = await open({ diskCacheBytes: 256 * MiB })
    await first.pin([pinned])
    await first.fetchAll(pinned, { signal: new AbortController().signal })
    for (const name of ['other-1.bin', 'other-2.bin', 'reader.bin']) await readAll(first, get(name).file)
    await first.flush()
    expect(first.disk!.bytes).toBeGreaterThan(48 * MiB)
    // The index rebuild evicts down to the budget at start: the pinned list is read before it.
    const budget = 24 * MiB
    const second = await open({ diskCacheBytes: budget })
    expect(second.isPinned(pinned)).toBe(true)
    expect(second.cachedBytes(pinned)).toBe(pinned.size)
    expect(second.disk!.bytes).toBeLessThanOrEqual(budget)
    expect(second.cacheUse().otherBytes).toBeLessThanOrEqual(budget - reservedBytes(pinned.size, GRID.blockSize))
    await readOffline('pinned.bin')
  })

  it('pinOnly lets go of the pinned files not named, across a new read path, and keeps the named ones', async () => {
    const pinned = get('pinned.bin').file
    const stale = get('other-3.bin').file
    const first = await open({ diskCacheBytes: 256 * MiB })
    await first.pin([pinned, stale])
    const second = await open({ diskCacheBytes: 256 * MiB })
    expect(second.isPinned(stale)).toBe(true)
    await second.pinOnly([pinned])
    expect(second.isPinned(pinned)).toBe(true)
    expect(second.isPinned(stale)).toBe(false)
    expect(second.cacheUse().pinnedBytes).toBe(reservedBytes(pinned.size, GRID.blockSize))
    const third = await open({ diskCacheBytes: 256 * MiB })
    expect(third.isPinned(stale)).toBe(false)
    expect(third.isPinned(pinned)).toBe(true)
  })

  it('a pin past the budget is refused with the room it lacks, keeps nothing and fetches nothing', async () => {
    const budget = 32 * MiB
    const rp = await open({ diskCacheBytes: budget })
    const first = get('other-1.bin').file
    await rp.pin([first])
    const more = [get('pinned.bin').file, get('other-2.bin').file]
    const err = await rp.pin(more).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(NoRoomError)
    expect((err as NoRoomError).code).toBe('ENOSPC')
    const reserved = (f: RemoteFile) => reservedBytes(f.size, GRID.blockSize)
    expect((err as NoRoomError).needed).toBe(reserved(first) + reserved(more[0]!) + reserved(more[1]!) - budget)
    expect((err as NoRoomError).message).toMatch(/more room in the cache/)
    for (const f of more) expect(rp.isPinned(f)).toBe(false)
    expect(rp.cacheUse().pinnedBytes).toBe(reserved(first))
    expect((await settled()).download).toBe(0)
    // One of them alone fits.
    await rp.pin([more[1]!])
    expect(rp.isPinned(more[1]!)).toBe(true)
  })

  it('a pin past the disk free space is refused; the other files cached count as room, since they can go', async () => {
    const free = 2 * MiB
    const rp = await open({}, { freeSpace: async () => free })
    const pinned = get('pinned.bin').file
    const err = await rp.pin([pinned]).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(NoRoomError)
    expect((err as NoRoomError).needed).toBe(reservedBytes(pinned.size, GRID.blockSize) - free)
    expect((err as NoRoomError).message).toMatch(/more room on the disk/)
    expect(rp.isPinned(pinned)).toBe(false)
    // 24 MiB of another file cached: they would be evicted to make room, so now it fits.
    await readAll(rp, get('reader.bin').file)
    await rp.flush()
    await rp.pin([pinned])
    expect(rp.isPinned(pinned)).toBe(true)
    const other = rp.cacheUse().otherBytes
    expect(other).toBeGreaterThan(0)
    expect((await settled()).bytesServed).toBe(get('reader.bin').file.size)
  })

  it('without a disk cache a pin is refused with the files\' size, saying the cache is off', async () => {
    const rp = await open({ diskCacheBytes: 0 })
    const pinned = get('pinned.bin').file
    const err = await rp.pin([pinned]).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(NoRoomError)
    expect((err as NoRoomError).needed).toBe(pinned.size)
    expect((err as NoRoomError).message).toMatch(/disk cache is off/)
  })

  it('the pinned list survives a new read path on the folder, and a fetch aborted half way goes on with only the rest', async () => {
    const { file } = get('pinned.bin')
    const first = await open()
    await first.pin([file])
    const stop = new AbortController()
    const reason = new Error('stopped by the test')
    const err = await first.fetchAll(file, {
      signal: stop.signal,
      onProgress: (n) => {
        if (n >= file.size / 2) stop.abort(reason)
      },
    }).catch((e: unknown) => e)
    expect(err).toBe(reason)
    await first.flush()
    const have = first.cachedBytes(file)
    expect(have).toBeGreaterThanOrEqual(file.size / 2)
    expect(have).toBeLessThan(file.size)

    const second = await open()
    expect(second.isPinned(file)).toBe(true)
    expect(second.cachedBytes(file)).toBe(have)
    await settled()
    await service.controls.resetCounters()
    await second.fetchAll(file, { signal: new AbortController().signal })
    const served = (await settled()).bytesServed
    expect(served).toBeGreaterThanOrEqual(file.size - have)
    expect(served).toBeLessThanOrEqual(file.size - have + GRID.chunkSize)
    await second.flush()
    await readOffline('pinned.bin')
  })

  it('a fetch killed half way (SIGKILL) goes on after a remount: the bytes on disk are not asked again', async () => {
    const { file } = get('pinned.bin')
    // Slow enough that the kill lands half way.
    await service.controls.throttle({ bytesPerSecond: 16 * MiB })
    // A file, not -e: --input-type would pass on to the hashing threads, whose code is CommonJS.
    const script = `${dir}.child.mjs`
    await writeFile(script, PIN_CHILD)
    const child = spawn(process.execPath, ['--import', TS_REGISTER, script], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        PIN_CHILD: JSON.stringify({
          repo: REPO, apiUrl: service.baseUrl, apiKey: service.apiKey, ca: service.caPem, email: service.user.email, password: service.user.password,
          options: { ...GRID, diskCacheDir: dir, diskCacheBytes: 256 * MiB }, file,
        }),
      },
    })
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)))
    let errors = ''
    child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()))
    let lines = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      lines += chunk.toString()
      const last = Number(lines.trim().split('\n').at(-1))
      if (last >= file.size / 2) child.kill('SIGKILL')
    })
    expect(await exited, errors).toBe('SIGKILL')
    await rm(script, { force: true })
    await service.controls.clearFaults()
    const before = await settled()

    const rp = await open()
    expect(rp.isPinned(file)).toBe(true)
    const have = rp.cachedBytes(file)
    expect(have).toBeGreaterThanOrEqual(file.size / 2)
    expect(have).toBeLessThan(file.size)
    await rp.fetchAll(file, { signal: new AbortController().signal })
    const after = await settled()
    expect(after.bytesServed - before.bytesServed).toBeLessThanOrEqual(file.size - have + GRID.chunkSize)
    // In all, killed and resumed: the file and at most a chunk more.
    expect(after.bytesServed).toBeLessThanOrEqual(file.size + GRID.chunkSize)
    await rp.flush()
    await readOffline('pinned.bin')
  }, 60_000)

  it('a disk cache that cannot take the blocks ends the fetch after a few runs, not after fetching the file over and over', async () => {
    const { file } = get('pinned.bin')
    const rp = await open()
    await rp.pin([file])
    // Where the file's folder of segments goes, a file: every write of its blocks fails.
    await writeFile(path.join(dir, 'blocks-v5', rp.disk!.fileId(file.cacheKey)), 'not a folder')
    const err = await rp.fetchAll(file, { signal: new AbortController().signal }).catch((e: unknown) => e)
    expect((err as Error).message).toMatch(/could not be written to the disk cache/)
    expect(rp.cachedBytes(file)).toBe(0)
    expect((await settled()).bytesServed).toBeLessThanOrEqual(6 * GRID.pieceSize)
  })

  it('transient faults are ridden out: resets, 503s, damaged bytes and hashes', async () => {
    const { file } = get('other-1.bin')
    const rp = await open({ deadlineMs: 30_000, retryBaseDelayMs: 20, retryMaxDelayMs: 100 })
    await rp.pin([file])
    await service.controls.fault({ route: 'download', kind: 'reset', count: 3 })
    await service.controls.fault({ route: 'download', kind: 'status', status: 503, count: 2 })
    await service.controls.fault({ route: 'download', kind: 'corrupt', count: 2 })
    await service.controls.fault({ route: 'rangehash', kind: 'status', status: 503, count: 2 })
    await rp.fetchAll(file, { signal: new AbortController().signal })
    expect(rp.stats.retries).toBeGreaterThanOrEqual(5)
    expect(rp.stats.mismatches).toBeGreaterThanOrEqual(1)
    await rp.flush()
    await readOffline('other-1.bin')
  })

  it('a network loss outlasting the deadline pauses the fetch; it goes on when the service is back', async () => {
    const { file } = get('other-2.bin')
    const rp = await open({ deadlineMs: 500, retryBaseDelayMs: 20, retryMaxDelayMs: 100, stallTimeoutMs: 500 })
    await rp.pin([file])
    await service.pause()
    const fetched = rp.fetchAll(file, { signal: new AbortController().signal })
    let settledEarly = false
    void fetched.then(() => (settledEarly = true), () => (settledEarly = true))
    // Several deadlines pass with the service down: the fetch is still waiting, not failed.
    await new Promise((r) => setTimeout(r, 2_000))
    expect(settledEarly).toBe(false)
    await service.resume()
    await fetched
    expect(rp.cachedBytes(file)).toBe(file.size)
  }, 60_000)

  it('a transfer deleted on the service ends the fetch at once with the service\'s answer', async () => {
    const { file } = get('gone.bin')
    // A minute's deadline: were the answer taken for a transient fault, the test would time out.
    const rp = await open({ deadlineMs: 60_000 })
    await rp.pin([file])
    await service.controls.setStatus(goneTransferId, 'STATUS_DELETED')
    const err = await rp.fetchAll(file, { signal: new AbortController().signal }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ServiceError)
    expect(rp.cachedBytes(file)).toBe(0)
  })

  it('while a reader streams a file, a background fetchAll of another starts no range until the reader\'s fetches are over', async () => {
    // A link slow enough that the reader's fetches take a while.
    await service.controls.throttle({ bytesPerSecond: 40 * MiB })
    const events: { file: string; what: 'start' | 'end'; at: number }[] = []
    let clock = 0
    const inner = new ServiceRangeSource(client)
    const source: RangeSource = {
      get reachability() {
        return inner.reachability
      },
      rangeHash: (f, p, l, s) => inner.rangeHash(f, p, l, s),
      async streamRange(f: RemoteFile, start: number, end: number, sink: BodySink, signal?: AbortSignal) {
        events.push({ file: f.fileName, what: 'start', at: clock++ })
        try {
          await inner.streamRange(f, start, end, sink, signal)
        } finally {
          events.push({ file: f.fileName, what: 'end', at: clock++ })
        }
      },
    }
    const rp = await open({}, {}, source)
    const reader = get('reader.bin')
    const pinned = get('other-3.bin').file
    await rp.pin([pinned])
    const h = rp.open(reader.file)
    const step = 128 * KiB
    const parts: Buffer[] = [Buffer.from(toBuffer(await h.read(0, step)))]
    const background = rp.fetchAll(pinned, { signal: new AbortController().signal })
    for (let at = step; at < reader.file.size; at += step) parts.push(Buffer.from(toBuffer(await h.read(at, step))))
    h.close()
    expect(Buffer.concat(parts).equals(reader.data)).toBe(true)
    await background
    await service.controls.clearFaults()
    const lastReaderEnd = Math.max(...events.filter((e) => e.file === 'reader.bin' && e.what === 'end').map((e) => e.at))
    const pinnedStarts = events.filter((e) => e.file === 'other-3.bin' && e.what === 'start').map((e) => e.at)
    expect(pinnedStarts.length).toBeGreaterThan(0)
    expect(Math.min(...pinnedStarts)).toBeGreaterThan(lastReaderEnd)
    expect(rp.cachedBytes(pinned)).toBe(pinned.size)
  }, 60_000)

  it('blocks fetched in the background do not push a reader\'s blocks out of the memory cache', async () => {
    // A memory cache of a few MiB, far smaller than the file pinned.
    const rp = await open({ memoryCacheBytes: 80 * MiB })
    const room = rp.memory.maxBytes
    const reader = get('reader.bin')
    const pinned = get('pinned.bin').file
    expect(room).toBeLessThan(pinned.size / 2)
    // Whole blocks here and there, as a reader jumping about reads them: kept in memory.
    const blocks = [3, 17, 31, 45, 59, 73].slice(0, Math.floor(room / GRID.blockSize / 2))
    for (const b of blocks) {
      const at = b * GRID.blockSize
      const h = rp.open(reader.file)
      expect(toBuffer(await h.read(at, GRID.blockSize - 4 * KiB)).equals(reader.data.subarray(at, at + GRID.blockSize - 4 * KiB))).toBe(true)
      h.close()
    }
    expect(rp.stats.bytesReceived).toBe(blocks.length * GRID.blockSize)
    const inMemory = () => blocks.filter((b) => rp.memory.has(blockKey(reader.file.cacheKey, b))).length
    expect(inMemory()).toBe(blocks.length)
    await rp.pin([pinned])
    await rp.fetchAll(pinned, { signal: new AbortController().signal })
    expect(rp.cachedBytes(pinned)).toBe(pinned.size)
    expect(inMemory()).toBe(blocks.length)
  })

  it('free drops an unpinned file\'s blocks from disk and returns the bytes; a pinned file keeps them', async () => {
    const rp = await open()
    const loose = get('other-1.bin')
    const pinned = get('other-2.bin').file
    await rp.pin([pinned])
    await rp.fetchAll(pinned, { signal: new AbortController().signal })
    await readAll(rp, loose.file)
    await rp.flush()
    expect(rp.cachedBytes(loose.file)).toBe(loose.file.size)
    const stored = rp.cacheUse().otherBytes
    expect(await rp.free(loose.file)).toBe(stored)
    expect(rp.cachedBytes(loose.file)).toBe(0)
    expect(rp.cacheUse().otherBytes).toBe(0)
    expect(await rp.free(pinned)).toBe(0)
    expect(rp.cachedBytes(pinned)).toBe(pinned.size)
    // Gone from disk too: a new read path on the folder finds nothing of it.
    const again = await open()
    expect(again.cachedBytes(loose.file)).toBe(0)
    expect(again.cachedBytes(pinned)).toBe(pinned.size)
  })
})
