// Thumbnails without downloads, through a real mount of the demo: listing an image
// folder puts the service's thumbnail of each image into the desktop's thumbnail cache,
// valid per the Thumbnail Managing Standard (a PNG whose Thumb::URI is the file's URI on
// the mount and whose Thumb::MTime is its mtime there), and not one byte of the images
// is downloaded. A password-protected transfer gets none until `.password` unlocks it;
// with `previews: no` none is written at all.
import { readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import { PNG } from 'pngjs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Transfer } from '../../src/api/types.js'
import { fileUri, ThumbnailCache, thumbnailName, thumbnailRoot } from '../../src/desktop/thumbnail-cache.js'
import { DEMO_PASSWORD } from '../../src/emulator/demo-content.js'
import { readPngText } from '../../src/base/thumbnail.js'
import { run, unmountAll, waitFor } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { inboxDetails, login, mount, serviceClient, transferFolder, useAccount, type Account } from './harness.js'

const IMAGE = /\.(png|jpe?g)$/i
/** ms: thumbnails are made in the background; a slow machine gets this long. */
const THUMBNAILS_WITHIN_MS = 30_000

interface World {
  service: TestService
  account: Account
  transfers: Transfer[]
  cache: ThumbnailCache
}

/** The demo service and a mount with these settings, for one describe block. */
function useDemo(env: Record<string, string>): World {
  const world = {} as World
  beforeAll(async () => {
    world.service = await startTestService({ demo: true })
    const client = await serviceClient(world.service)
    world.transfers = await inboxDetails(client, DEMO_PASSWORD)
    await client.close()
    world.account = await useAccount(world.service, env)
    world.cache = new ThumbnailCache(thumbnailRoot())
    await login(world.service)
    await mount(world.account)
  })
  afterAll(async () => {
    await unmountAll()
    await world.service?.close()
  })
  return world
}

/** `ls` of every folder below dir (a child process, as a file manager would list). */
async function listAll(dir: string): Promise<void> {
  const r = await run('find', [dir, '-type', 'd', '-exec', 'ls', '-A', '{}', ';'])
  expect(r.code, r.stderr).toBe(0)
}

/** The images of a transfer as files on the mount. */
async function imagesOf(world: World, subject: string): Promise<string[]> {
  const t = world.transfers.find((x) => x.subject.startsWith(subject))!
  const folder = await transferFolder(world.account.mountDir, t.id)
  return (t.files ?? []).filter((f) => IMAGE.test(f.filename ?? '')).map((f) => path.join(folder, f.filename!))
}

async function cachedNames(world: World): Promise<string[]> {
  return readdir(path.join(world.cache.root, 'normal')).catch(() => [])
}

/** Checks one file's thumbnails against the standard: URI, MTime, size, a PNG that decodes. */
async function expectValidThumbnail(world: World, file: string): Promise<void> {
  const uri = fileUri(file)
  const mtimeS = Math.floor((await stat(file)).mtimeMs / 1000)
  const normal = await world.cache.read('normal', uri)
  expect(normal, `no thumbnail of ${file}`).not.toBeNull()
  const png = PNG.sync.read(normal!)
  expect(Math.max(png.width, png.height)).toBeLessThanOrEqual(128)
  expect(Math.max(png.width, png.height)).toBeGreaterThan(16)
  expect(readPngText(normal!)).toMatchObject({ 'Thumb::URI': uri, 'Thumb::MTime': String(mtimeS) })
  const large = await world.cache.read('large', uri)
  if (large) {
    const big = PNG.sync.read(large)
    expect(Math.max(big.width, big.height)).toBeLessThanOrEqual(256)
    expect(readPngText(large)).toMatchObject({ 'Thumb::URI': uri, 'Thumb::MTime': String(mtimeS) })
  }
}

describe('previews on (the default)', () => {
  const world = useDemo({})

  it('listing an image folder puts a valid thumbnail of each image in the cache, and no image byte is fetched', async () => {
    await world.service.controls.resetCounters()
    const images = await imagesOf(world, 'Photos from the harbour walk')
    expect(images.filter((f) => /\.jpg$/.test(f)).length).toBeGreaterThanOrEqual(1)
    expect(images.filter((f) => /\.png$/.test(f)).length).toBeGreaterThanOrEqual(1)
    await listAll(path.dirname(images[0]!))
    const haveAll = async () => (await Promise.all(images.map((f) => world.cache.read('normal', fileUri(f))))).every((b) => b !== null)
    expect(await waitFor(haveAll, THUMBNAILS_WITHIN_MS, 200), 'thumbnails never appeared').toBe(true)
    for (const file of images) await expectValidThumbnail(world, file)

    // Images one folder down (charts/, photos/) are ready once their transfer folder is listed.
    const below = await imagesOf(world, 'Quarterly report')
    await run('ls', ['-A', path.dirname(path.dirname(below[0]!))])
    const haveBelow = async () => (await Promise.all(below.map((f) => world.cache.read('normal', fileUri(f))))).every((b) => b !== null)
    expect(await waitFor(haveBelow, THUMBNAILS_WITHIN_MS, 200), 'no thumbnails of the images one folder down').toBe(true)
    for (const file of below) await expectValidThumbnail(world, file)

    const counters = await world.service.controls.counters()
    expect(counters.bytesServed).toBe(0)
    expect(counters.routes.download ?? 0).toBe(0)
    expect(counters.routes.preview ?? 0).toBeGreaterThanOrEqual(images.length + below.length)
    // Only images: every thumbnail in the cache is one of an image (no file-type icons).
    const everyImage: string[] = []
    for (const t of world.transfers.filter((x) => !x.passwordprotected)) everyImage.push(...(await imagesOf(world, t.subject)))
    const wanted = new Set(everyImage.map((f) => thumbnailName(fileUri(f))))
    const written = await cachedNames(world)
    expect(written.length).toBeGreaterThanOrEqual(images.length + below.length)
    expect(written.filter((n) => !wanted.has(n))).toEqual([])

    // Listed again: nothing is fetched again (the cache already holds them with this mtime).
    await world.service.controls.resetCounters()
    await listAll(path.join(world.account.mountDir, 'inbox'))
    await waitFor(async () => false, 2_000)
    expect((await world.service.controls.counters()).routes.preview ?? 0).toBe(0)
  })

  it('a password-protected transfer gets none until .password unlocks it', async () => {
    const t = world.transfers.find((x) => x.passwordprotected)!
    const folder = await transferFolder(world.account.mountDir, t.id)
    const before = (await cachedNames(world)).length
    await world.service.controls.resetCounters()
    await listAll(folder)
    await waitFor(async () => false, 2_000)
    expect((await world.service.controls.counters()).routes.preview ?? 0).toBe(0)
    expect(await cachedNames(world)).toHaveLength(before)

    const unlock = await run('bash', ['-c', `echo -n ${DEMO_PASSWORD} > "$1"`, 'bash', path.join(folder, '.password')])
    expect(unlock.code, unlock.stderr).toBe(0)
    await listAll(folder)
    const images = await imagesOf(world, t.subject)
    expect(images.length).toBeGreaterThanOrEqual(1)
    const haveAll = async () => (await Promise.all(images.map((f) => world.cache.read('normal', fileUri(f))))).every((b) => b !== null)
    expect(await waitFor(haveAll, THUMBNAILS_WITHIN_MS, 200), 'no thumbnail after the unlock').toBe(true)
    for (const file of images) await expectValidThumbnail(world, file)
    expect((await world.service.controls.counters()).bytesServed).toBe(0)
  })
})

describe('previews: no', () => {
  const world = useDemo({ TRANSFERFS_PREVIEWS: 'no' })

  it('writes no thumbnail and asks for none', async () => {
    await world.service.controls.resetCounters()
    const images = await imagesOf(world, 'Photos from the harbour walk')
    await listAll(path.join(world.account.mountDir, 'inbox'))
    // The same wait that was enough for every thumbnail with previews on.
    await waitFor(async () => false, 5_000)
    expect((await world.service.controls.counters()).routes.preview ?? 0).toBe(0)
    expect(await cachedNames(world)).toEqual([])
    for (const file of images) expect(await world.cache.read('normal', fileUri(file))).toBeNull()
  })
})
