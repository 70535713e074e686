// What the mount does for the desktop, put together from the settings: thumbnails of
// listed images into the thumbnail cache (`previews`), and a notification for each new
// transfer and each finished send (`notifyArrivals`). Arrivals and sends are logged
// either way.
import type { TransferClient } from '../api/client.js'
import type { Logger } from '../base/log.js'
import type { SentRecord } from '../send/ports.js'
import type { Arrival } from '../vfs/inbox-news.js'
import type { FilesListed } from '../vfs/listed.js'
import { desktopNotifier, pinnedNotification, notifyArrivals, sentNotification, silentNotifier, type Notifier, type SizeFormat } from './notify.js'
import { Previews } from './previews.js'
import { ThumbnailCache } from './thumbnail-cache.js'

export interface DesktopConfig {
  mountDir: string
  client: TransferClient
  previews: boolean
  notify: boolean
  log: Logger
  size: SizeFormat
  /** The sent/ folder name of a transfer, when listed. */
  sentFolderOf: (transferid: string) => string | null
  notifier?: Notifier
}

export interface MountDesktop {
  onFilesListed: FilesListed | undefined
  onArrivals(arrivals: Arrival[]): void
  onSent(record: SentRecord): void
  /** A pin is complete on disk; `label` is its path from the mount's root. */
  onPinned(label: string): void
  stop(): Promise<void>
}

export function openDesktop(cfg: DesktopConfig): MountDesktop {
  const notifier = cfg.notify ? (cfg.notifier ?? desktopNotifier(cfg.log)) : silentNotifier
  const previews = cfg.previews
    ? new Previews(cfg.mountDir, new ThumbnailCache(), (url, max) => cfg.client.download.preview(url, max), cfg.log)
    : undefined
  const inbox = `${cfg.mountDir}/inbox`
  return {
    onFilesListed: previews && ((files) => previews.listed(files)),
    onArrivals(arrivals) {
      const told = arrivals.map((a) => ({ transfer: a.transfer, path: `${inbox}/${a.name}` }))
      for (const a of told) cfg.log.info(`new transfer from ${a.transfer.from ?? 'someone'}: ${a.path}`)
      notifyArrivals(notifier, told, inbox, cfg.size)
    },
    onSent(record) {
      if (!record.url) return
      const folder = cfg.sentFolderOf(record.transferid)
      notifier.notify(sentNotification(record.subject, record.url, folder && `${cfg.mountDir}/sent/${folder}`))
    },
    onPinned(label) {
      notifier.notify(pinnedNotification(label, `${cfg.mountDir}/${label}`))
    },
    async stop() {
      await previews?.stop()
    },
  }
}
