// The thumbnails the service publishes as a file's `previewurl`: the file's image shrunk to
// fit THUMBNAIL_SIZE, as a JPEG (a few KiB, as a service's small thumbnail would be), made
// when the file is stored (a request comes before that only in a race: it waits for it)
// and kept for the life of the service. Made on request instead, a folder of large photos
// took the service over a second, and a file manager that looked meanwhile read the photos.
// Only PNG and JPEG files get one (what the pure-JS decoders read); every other file has
// `previewurl` null. The real service would give a file-type icon there instead; the mount
// tells the two apart by the file's category (docs/desktop.md), and an icon never comes
// from here, so a test that finds a thumbnail in the cache knows it is a real one.
import { readFile } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { decodeImage, encodeJpeg, fitWithin } from '../base/thumbnail.js'
import type { ServiceContext } from './context.js'
import { deliverBuffer } from './delivery.js'
import { access } from './download.js'
import { ApiError, Query } from './envelope.js'
import type { FaultSpec } from './faults.js'
import type { StoredFile } from './store.js'

/** px: the longest side of a thumbnail (the freedesktop "large" size). */
export const THUMBNAIL_SIZE = 256
/** JPEG quality of a thumbnail: small, and still clean at 256 px. */
const THUMBNAIL_QUALITY = 75
/** bytes: larger images get no thumbnail (decoding them would hold the whole image in memory). */
const MAX_SOURCE_BYTES = 32 * 1024 * 1024
const IMAGE_EXTENSIONS = /\.(png|jpe?g)$/i

/** Whether the file has a thumbnail, decided from its name and size, without reading it. */
export function hasThumbnail(file: StoredFile): boolean {
  return IMAGE_EXTENSIONS.test(file.name) && file.size > 0 && file.size <= MAX_SOURCE_BYTES
}

const made = new WeakMap<StoredFile, Promise<Buffer | null>>()

async function makeThumbnail(file: StoredFile): Promise<Buffer | null> {
  const image = decodeImage(await readFile(file.path))
  return image && encodeJpeg(fitWithin(image, THUMBNAIL_SIZE), THUMBNAIL_QUALITY)
}

function thumbnailOf(file: StoredFile): Promise<Buffer | null> {
  let thumbnail = made.get(file)
  if (!thumbnail) {
    thumbnail = makeThumbnail(file).catch(() => null)
    made.set(file, thumbnail)
  }
  return thumbnail
}

/** Starts making the file's thumbnail, when it has one, in the background. */
export function prepareThumbnail(file: StoredFile): void {
  if (hasThumbnail(file)) void thumbnailOf(file)
}

/** GET /preview/{transferid}/{fileid}: the same access rules as the file's download. */
export async function serveThumbnail(ctx: ServiceContext, req: IncomingMessage, res: ServerResponse, url: URL,
  transferid: string, fileid: string, fault: FaultSpec | null): Promise<void> {
  const a = access(ctx, req, new Query(url.searchParams), transferid)
  const file = a.transfer.files.find((f) => f.fileid === fileid)
  if (!file || !hasThumbnail(file)) throw new ApiError('NotFound', 'no thumbnail for this file')
  const thumbnail = await thumbnailOf(file)
  if (!thumbnail) throw new ApiError('NotFound', 'the file is not an image that can be read')
  res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(thumbnail.length) })
  if (await deliverBuffer(res, thumbnail, fault?.kind === 'reset' ? fault : null)) ctx.faults.counters.previewBytesServed += thumbnail.length
}
