// Thumbnails of listed files, put into the desktop's thumbnail cache in the background:
// the mount tells this about the files of each folder listed (a sync call that only
// queues), and a few workers fetch the service's thumbnail of each image and write it.
// Nothing here ever holds up a filesystem operation, and a failure is only logged: the
// file manager then shows its generic icon, as it would without us.
import type { FileDto } from '../api/types.js'
import { decodeImage } from '../base/thumbnail.js'
import type { Logger } from '../base/log.js'
import type { ListedFile } from '../vfs/listed.js'
import { fileUri, type ThumbnailCache, type ThumbnailSubject } from './thumbnail-cache.js'

export interface PreviewOptions {
  /** Thumbnails fetched at once. */
  concurrency: number
  /** Files waiting at most; a listing past that waits for its next listing. */
  maxQueued: number
  /** bytes: a larger answer is not a thumbnail. */
  maxThumbnailBytes: number
}

export const DEFAULT_PREVIEW_OPTIONS: PreviewOptions = { concurrency: 2, maxQueued: 2000, maxThumbnailBytes: 4 * 1024 * 1024 }

/** Categories whose `previewurl` is a picture of the file: for any other file it is the service's file-type icon. */
const PICTURED_CATEGORIES: ReadonlySet<string> = new Set(['image', 'video'])

/**
 * The URL of the file's real thumbnail, or null when the service has none. The service's
 * `previewurl` is "a small thumbnail, or a file icon when no thumbnail exists", with no
 * field saying which: a thumbnail is taken to be real when the file is an image or a
 * video, or has a custom thumbnail (docs/desktop.md). What comes back must also decode
 * as an image.
 */
export function thumbnailUrlOf(dto: Pick<FileDto, 'previewurl' | 'smallpreview' | 'category' | 'hascustomthumbnail'>): string | null {
  const url = dto.previewurl ?? dto.smallpreview ?? null
  if (!url) return null
  if (dto.hascustomthumbnail === true || PICTURED_CATEGORIES.has(dto.category ?? '')) return url
  return null
}

interface Job extends ThumbnailSubject {
  url: string
  key: string
}

export class Previews {
  private readonly queue: Job[] = []
  /** uri@mtime of every file queued, being done, done or failed: each is tried once per mount. */
  private readonly seen = new Set<string>()
  private active = 0
  private idleWaiters: Array<() => void> = []
  private stopped = false

  constructor(
    private readonly mountDir: string,
    private readonly cache: ThumbnailCache,
    private readonly fetchThumbnail: (url: string, maxBytes: number) => Promise<Buffer>,
    private readonly log: Logger,
    private readonly options: PreviewOptions = DEFAULT_PREVIEW_OPTIONS,
  ) {}

  /** The files of a folder just listed. Synchronous and cheap: it only queues. */
  listed(files: readonly ListedFile[]): void {
    if (this.stopped) return
    for (const file of files) {
      const url = thumbnailUrlOf(file.dto)
      if (!url) continue
      const uri = fileUri(this.mountDir + file.path)
      const mtimeS = Math.floor(file.mtimeMs / 1000)
      const key = `${uri}@${mtimeS}`
      if (this.seen.has(key) || this.queue.length >= this.options.maxQueued) continue
      this.seen.add(key)
      this.queue.push({ uri, mtimeS, size: file.size, url, key })
    }
    this.pump()
  }

  /** Resolves once nothing is queued or being fetched (tests, shutdown). */
  whenIdle(): Promise<void> {
    if (this.active === 0 && this.queue.length === 0) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  /** No new work; what is being fetched finishes. */
  async stop(): Promise<void> {
    this.stopped = true
    this.queue.length = 0
    await this.whenIdle()
  }

  private pump(): void {
    while (this.active < this.options.concurrency && this.queue.length > 0) {
      const job = this.queue.shift()!
      this.active++
      void this.make(job).finally(() => {
        this.active--
        this.pump()
        if (this.active === 0 && this.queue.length === 0) {
          for (const wake of this.idleWaiters.splice(0)) wake()
        }
      })
    }
  }

  private async make(job: Job): Promise<void> {
    try {
      if (await this.cache.has(job)) return
      const bytes = await this.fetchThumbnail(job.url, this.options.maxThumbnailBytes)
      const image = decodeImage(bytes)
      if (!image) {
        this.log.debug(`thumbnail of ${job.uri}: the service's answer is not an image`)
        return
      }
      await this.cache.write(job, image)
    } catch (err) {
      this.log.debug(`thumbnail of ${job.uri}: ${(err as Error).message}`)
    }
  }
}
