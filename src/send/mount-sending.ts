// Sending as the mount wires it: the outbox and the additions to sent transfers (two
// OutboxFs on the data folder), the real Sender over the client with one chunk queue for
// both, the sent log, forward, and the status files. compose.ts plugs the result into the
// filesystem core (src/vfs/filesystem.ts attachSending).
import path from 'node:path'
import type { TransferClient } from '../api/client.js'
import type { SendingParts } from '../vfs/areas/staging.js'
import { openOutbox, SENT_FILE } from './open-outbox.js'
import type { OutboxFs } from './outbox-fs.js'
import type { SendOptions } from './options.js'
import type { SentLog, SentRecord } from './ports.js'
import { FileSentLog } from './sent-log.js'
import { ExistingTransferSender, ServiceSender } from './service-sender.js'
import type { PinStatus } from '../pin/status.js'
import { renderStatusText, type MountStatus, type ServiceHealth } from '../status/mount-status.js'
import { StatusFiles } from '../status/status-file.js'

/** Folder (in the data folder) staging files copied into sent/ folders until they are added. */
export const ADDITIONS_DIR = 'additions'
/** Prefix of the status names of additions ("sent/<transfer id>/<name>"). */
const ADDITION_PREFIX = 'sent/'
/** ms: how often the account's contact group names are fetched again. */
const GROUPS_REFRESH_MS = 5 * 60_000
/** ms: how long mounting waits for the first list of groups before going on without it. */
const GROUPS_FIRST_WAIT_MS = 5_000

export interface SendingConfig {
  client: TransferClient
  dataDir: string
  options?: Partial<SendOptions>
  /** A transfer was sent, added to or forwarded: show it (refresh the sent/ view) before this resolves. */
  onSentChanged?: (transferid: string) => Promise<void>
  /** An outbox entry became a transfer (after onSentChanged): its record, link included. */
  onSent?: (record: SentRecord) => void
  /** ms: status file interval (default STATUS_WRITE_INTERVAL_MS). */
  statusIntervalMs?: number
  /** How reads fare against the service, shown at the top of the status. */
  health?: () => ServiceHealth
  /** What is pinned (kept offline), shown after the sends. */
  pinStatus?: () => PinStatus
}

export interface MountSending extends SendingParts {
  readonly outboxFs: OutboxFs
  readonly additionsFs: OutboxFs
  readonly sentLog: FileSentLog
  readonly sender: ServiceSender
  status(): MountStatus
}

/** The sent log, telling the mount after each new record (so sent/ lists it before the entry leaves outbox/). */
class NotifyingSentLog implements SentLog {
  constructor(
    private readonly inner: FileSentLog,
    private readonly changed: (id: string) => Promise<void>,
    private readonly sent: (record: SentRecord) => void,
  ) {}
  has(id: string): Promise<boolean> { return this.inner.has(id) }
  list(): Promise<SentRecord[]> { return this.inner.list() }
  async record(entry: SentRecord): Promise<void> {
    await this.inner.record(entry)
    await this.changed(entry.transferid).catch(() => undefined)
    try {
      this.sent(entry)
    } catch {
      // Telling is a nicety; the send is done.
    }
  }
}

/** The account's contact group names: the inbox's owner carries them (one transfer per page is the cheapest answer). */
async function contactGroupNames(client: TransferClient): Promise<string[]> {
  const page = await client.transfers.inbox({ take: 1 })
  return page.inboxOwner.contactgroups.map((g) => g.contactgroupname).sort()
}

/**
 * Keeps the outbox's list of contact groups (which make a folder a recipient folder) in
 * step with the account. The first fetch is awaited, briefly: an entry that settles before
 * the groups are known would be sent as a link-only transfer named after the group.
 */
async function followContactGroups(client: TransferClient, outbox: OutboxFs): Promise<() => Promise<void>> {
  let known = ''
  let running: Promise<void> = Promise.resolve()
  const refresh = (): Promise<void> => {
    running = running.then(async () => {
      const groups = await contactGroupNames(client).catch(() => null)
      if (!groups || groups.join('\n') === known) return
      known = groups.join('\n')
      await outbox.updateSettings({ recipientGroups: groups })
    })
    return running
  }
  await Promise.race([refresh(), new Promise((resolve) => setTimeout(resolve, GROUPS_FIRST_WAIT_MS).unref())])
  const timer = setInterval(() => void refresh(), GROUPS_REFRESH_MS)
  timer.unref()
  return async () => {
    clearInterval(timer)
    await running
  }
}

export async function openSending(cfg: SendingConfig): Promise<MountSending> {
  const changed = cfg.onSentChanged ?? (async () => undefined)
  const sentLog = new FileSentLog(path.join(cfg.dataDir, SENT_FILE))
  const sender = new ServiceSender(cfg.client)
  const outboxFs = await openOutbox({ dataDir: cfg.dataDir, sender, sentLog: new NotifyingSentLog(sentLog, changed, cfg.onSent ?? (() => undefined)), options: cfg.options })
  const additionsFs = await openOutbox({
    dataDir: path.join(cfg.dataDir, ADDITIONS_DIR),
    sender: new ExistingTransferSender(sender, sentLog, changed),
    sentLog,
    options: cfg.options,
    target: 'existing-transfers',
  })
  const status = (): MountStatus => {
    const a = outboxFs.status()
    const b = additionsFs.status()
    const entries = [...a.entries, ...b.entries.map((e) => ({ ...e, name: ADDITION_PREFIX + e.name }))]
    const pins = cfg.pinStatus?.()
    return { at: a.at, entries, ...(cfg.health ? { service: cfg.health() } : {}), ...(pins ? { pins } : {}) }
  }
  const files = new StatusFiles(cfg.dataDir, status, cfg.statusIntervalMs)
  await files.start()
  const stopGroups = await followContactGroups(cfg.client, outboxFs)
  return {
    outbox: outboxFs,
    additions: additionsFs,
    outboxFs,
    additionsFs,
    sentLog,
    sender,
    status,
    statusText: () => renderStatusText(status()),
    async forward(transferid: string, to: string[]): Promise<void> {
      await cfg.client.transfers.forward(transferid, to)
      await changed(transferid).catch(() => undefined)
    },
    async shutdown(): Promise<void> {
      await stopGroups()
      await Promise.allSettled([outboxFs.shutdown(), additionsFs.shutdown()])
      await files.stop()
    },
  }
}
