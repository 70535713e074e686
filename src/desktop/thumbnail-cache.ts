// The freedesktop thumbnail cache (Thumbnail Managing Standard): file managers look for
// $XDG_CACHE_HOME/thumbnails/{normal,large}/<md5 of the file's URI>.png and trust one whose
// Thumb::URI is the file's URI and whose Thumb::MTime is the file's mtime in seconds. So a
// thumbnail written here for a file on the mount is shown without the file being read.
import { createHash } from 'node:crypto'
import { mkdir, open, readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { writeFileAtomically } from '../base/durable-file.js'
import { encodePng, fitWithin, readPngText, type Rgba } from '../base/thumbnail.js'

/** The standard's sizes: longest side in px of each folder's thumbnails. */
export const THUMBNAIL_SIZES = { normal: 128, large: 256 } as const
export type ThumbnailSize = keyof typeof THUMBNAIL_SIZES

/** Bytes a PNG's text chunks are looked for in: they come right after the header. */
const TEXT_PREFIX_BYTES = 4096

/**
 * ASCII bytes GLib leaves as they are in a file:// URI path (g_filename_to_uri); every
 * other byte is %XX with upper-case hex. The cache name is the MD5 of this exact
 * string, so it must match what the file manager computes byte for byte.
 */
const URI_PATH_SAFE = /[A-Za-z0-9!$&'()*+,\-./:=@_~]/

/** The file:// URI of an absolute path, percent-encoded as GLib (and so the file managers) do. */
export function fileUri(absolutePath: string): string {
  let out = 'file://'
  for (const byte of Buffer.from(absolutePath, 'utf8')) {
    const c = String.fromCharCode(byte)
    out += byte < 0x80 && URI_PATH_SAFE.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** The cache file name of a URI: the MD5 of it, in hex, then `.png`. */
export function thumbnailName(uri: string): string {
  return `${createHash('md5').update(uri, 'utf8').digest('hex')}.png`
}

/** $XDG_CACHE_HOME/thumbnails, else ~/.cache/thumbnails. */
export function thumbnailRoot(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache')
  return path.join(base, 'thumbnails')
}

/** What a thumbnail is of: the file's URI, its mtime in whole seconds and its size. */
export interface ThumbnailSubject {
  uri: string
  mtimeS: number
  size: number
}

export class ThumbnailCache {
  constructor(readonly root: string = thumbnailRoot()) {}

  pathOf(size: ThumbnailSize, uri: string): string {
    return path.join(this.root, size, thumbnailName(uri))
  }

  /** A thumbnail of this URI with this mtime is already in the cache (written by us or anyone). */
  async has(subject: ThumbnailSubject): Promise<boolean> {
    let head: Buffer
    try {
      const file = await open(this.pathOf('normal', subject.uri), 'r')
      try {
        const buf = Buffer.alloc(TEXT_PREFIX_BYTES)
        const { bytesRead } = await file.read(buf, 0, buf.length, 0)
        head = buf.subarray(0, bytesRead)
      } finally {
        await file.close()
      }
    } catch {
      return false
    }
    const text = readPngText(head)
    return text?.['Thumb::URI'] === subject.uri && text['Thumb::MTime'] === String(subject.mtimeS)
  }

  /**
   * Writes the thumbnail in `normal/` (shrunk to 128 px), and in `large/` when the image
   * has more than 128 px to give. Each file is written under a temporary name and renamed,
   * as the standard asks, so a reader never sees half a thumbnail.
   */
  async write(subject: ThumbnailSubject, image: Rgba): Promise<void> {
    const text = { 'Thumb::URI': subject.uri, 'Thumb::MTime': String(subject.mtimeS), 'Thumb::Size': String(subject.size), Software: 'transferfs' }
    const largest = Math.max(image.width, image.height)
    // large/ first: normal/ is what has() looks at, so it is written last.
    if (largest > THUMBNAIL_SIZES.normal) await this.writeOne('large', subject.uri, encodePng(fitWithin(image, THUMBNAIL_SIZES.large), text))
    await this.writeOne('normal', subject.uri, encodePng(fitWithin(image, THUMBNAIL_SIZES.normal), text))
  }

  private async writeOne(size: ThumbnailSize, uri: string, png: Buffer): Promise<void> {
    const dir = path.join(this.root, size)
    await mkdir(dir, { recursive: true, mode: 0o700 })
    // Replaced in one step: a file manager never reads half a thumbnail.
    await writeFileAtomically(this.pathOf(size, uri), png)
  }

  /** The thumbnail of `size` for a URI, or null (tests, the desktop check). */
  async read(size: ThumbnailSize, uri: string): Promise<Buffer | null> {
    return readFile(this.pathOf(size, uri)).catch(() => null)
  }
}
