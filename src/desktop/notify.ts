// Desktop notifications through `notify-send` (Debian's libnotify-bin), which speaks the
// freedesktop notification protocol on the session bus. Without a session bus there is
// no desktop to tell (a server, a test run, a systemd unit without a session): nothing is
// run and nothing is said. A notification is fire-and-forget: it never holds up the mount.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import type { Transfer } from '../api/types.js'
import { markupText, plainText } from '../base/shown-text.js'
import type { Logger } from '../base/log.js'

/** What a notification says, as the texts themselves: notifySendArgs makes them safe to show. */
export interface Notification {
  summary: string
  /** The body's lines, each one text (a sender's subject may hold a newline of its own). */
  lines: string[]
}

/** Arrivals told one by one at most; more at once become one notification. */
const MAX_SEPARATE = 3
/** ms: a notify-send that takes longer is given up. */
const NOTIFY_TIMEOUT_MS = 5_000
const APP_NAME = 'transferfs'

/** How sizes read (the command line's own format, passed in: this module sits below it). */
export type SizeFormat = (bytes: number) => string

/** One transfer that arrived: sender, subject, size, and where it is on the mount. */
export function arrivalNotification(transfer: Transfer, folderPath: string, size: SizeFormat): Notification {
  const from = transfer.from ?? 'someone'
  const subject = transfer.subject || '(no subject)'
  const files = transfer.numberoffiles ?? transfer.files?.length ?? 0
  return {
    summary: `New transfer from ${from}`,
    lines: [subject, `${files} file${files === 1 ? '' : 's'}, ${size(transfer.size ?? 0)}`, folderPath],
  }
}

/** Several at once: one notification naming the inbox. */
export function arrivalsNotification(transfers: Transfer[], inboxPath: string, size: SizeFormat): Notification[] {
  if (transfers.length <= MAX_SEPARATE) return []
  const total = transfers.reduce((n, t) => n + (t.size ?? 0), 0)
  return [{ summary: `${transfers.length} new transfers`, lines: [`${size(total)} in all`, inboxPath] }]
}

/** A send finished: its link, and where it is on the mount. */
export function sentNotification(subject: string, url: string, folderPath: string | null): Notification {
  return { summary: `Sent: ${subject || '(no subject)'}`, lines: folderPath ? [url, folderPath] : [url] }
}

/** A pin's files are all on this machine: where it is on the mount. */
export function pinnedNotification(label: string, folderPath: string): Notification {
  return { summary: `Kept on this computer: ${label.slice(label.lastIndexOf('/') + 1) || label}`, lines: [folderPath, 'readable offline'] }
}

/**
 * The notify-send command line of a notification. Its texts quote senders: the summary as
 * plain text, each line of the body as markup text too (the notification spec lets a daemon
 * read the body as markup), so only the lines the notification is made of are lines.
 */
export function notifySendArgs(n: Notification): string[] {
  return [`--app-name=${APP_NAME}`, '--icon=folder-download', '--', plainText(n.summary), notificationBody(n)]
}

/** The body notify-send is given: each line as markup text, one under the other. */
function notificationBody(n: Notification): string {
  return n.lines.map(markupText).join('\n')
}

/** A session bus to send notifications on: the address in the environment, or the usual socket. */
export function hasSessionBus(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.DBUS_SESSION_BUS_ADDRESS) return true
  return !!env.XDG_RUNTIME_DIR && existsSync(path.join(env.XDG_RUNTIME_DIR, 'bus'))
}

export interface Notifier {
  notify(n: Notification): void
}

export const silentNotifier: Notifier = { notify: () => undefined }

/** notify-send on the session bus, or silence when there is none (or no notify-send). */
export function desktopNotifier(log: Logger, env: NodeJS.ProcessEnv = process.env): Notifier {
  if (!hasSessionBus(env)) return silentNotifier
  let missing = false
  return {
    notify(n: Notification): void {
      if (missing) return
      execFile('notify-send', notifySendArgs(n), { timeout: NOTIFY_TIMEOUT_MS, env }, (err) => {
        if (!err) return
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
          missing = true
          log.info('no desktop notifications: notify-send is not installed (Debian: libnotify-bin)')
        } else log.debug(`notification: ${err.message}`)
      })
    },
  }
}

/** Tells arrivals: each of a few, or one for many. */
export function notifyArrivals(notifier: Notifier, arrivals: Array<{ transfer: Transfer; path: string }>, inboxPath: string, size: SizeFormat): void {
  const many = arrivalsNotification(arrivals.map((a) => a.transfer), inboxPath, size)
  if (many.length > 0) for (const n of many) notifier.notify(n)
  else for (const a of arrivals) notifier.notify(arrivalNotification(a.transfer, a.path, size))
}
