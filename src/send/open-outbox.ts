// Opening the outbox: its parts wired on the data folder (staging, journal, attributes,
// writer marks, write failures, the send engine) and what an earlier run left resumed:
// entries a dead process was writing to are held, journaled sends go on.
import { promises as fsp } from 'node:fs'
import { removeTree } from '../base/long-paths.js'
import path from 'node:path'
import { systemClock, type Clock } from '../base/clock.js'
import { SendEngine } from './engine.js'
import { OpenFiles } from './handles.js'
import { Journal } from './journal.js'
import { isWithin } from './names.js'
import { resolveSendOptions, type SendOptions } from './options.js'
import { OutboxFs } from './outbox-fs.js'
import type { Sender, SentLog } from './ports.js'
import { FileSentLog } from './sent-log.js'
import { AttrStore, diskBytesOf, DiskGuard, freeBytesOf } from './staging.js'
import { shownPerm } from './sent-access.js'
import { OutboxTree } from './tree.js'
import { WriteFailures } from './write-failures.js'
import { WriterMarks } from './writers.js'

export interface OutboxFsConfig {
  /** The data folder (must survive restarts): staging, journal, sent list live under it. */
  dataDir: string
  sender: Sender
  /** Default: a FileSentLog at <dataDir>/sent.jsonl. */
  sentLog?: SentLog
  clock?: Clock
  options?: Partial<SendOptions>
  /** Owner reported for entries nobody chowned (default: this process's). */
  uid?: number
  gid?: number
  /**
   * 'existing-transfers': the staging of files copied into `sent/` folders. Each top-level
   * folder is named by a transfer id; each entry in it is uploaded into that transfer (the
   * Sender's initialize answers the existing transfer), a folder under its own name.
   */
  target?: 'new-transfers' | 'existing-transfers'
  /** Free bytes where staging lives (tests fake a full disk); default statfs. */
  freeBytes?: () => Promise<number>
}

/** Folder names under the data folder. */
const STAGING_DIR = 'outbox'
const JOURNAL_DIR = 'journal'
const TRASH_DIR = 'trash'
const ATTR_FILE = 'outbox-attrs.json'
export const SENT_FILE = 'sent.jsonl'
const WRITING_DIR = 'writing'
const WRITE_FAILURES_FILE = 'write-failures.json'

/** Opens the outbox on `dataDir`, resuming whatever an earlier run left unfinished. */
export async function openOutbox(cfg: OutboxFsConfig): Promise<OutboxFs> {
  const options = resolveSendOptions(cfg.options)
  const clock = cfg.clock ?? systemClock
  const staging = path.join(cfg.dataDir, STAGING_DIR)
  const trash = path.join(cfg.dataDir, TRASH_DIR)
  await fsp.mkdir(staging, { recursive: true, mode: 0o700 })
  await removeTree(trash)
  await fsp.mkdir(trash, { recursive: true, mode: 0o700 })
  const journal = new Journal(path.join(cfg.dataDir, JOURNAL_DIR))
  const attrs = new AttrStore(path.join(cfg.dataDir, ATTR_FILE), clock, options.attrSaveDelayMs)
  await attrs.load()
  const tree = new OutboxTree(staging, options.recipientGroups, cfg.target === 'existing-transfers')
  const sentLog = cfg.sentLog ?? new FileSentLog(path.join(cfg.dataDir, SENT_FILE))
  const disk = new DiskGuard(cfg.freeBytes ?? (() => freeBytesOf(staging)), clock, options.minFreeBytes, options.freeSpaceCheckMs, () => diskBytesOf(staging))
  const marks = new WriterMarks(path.join(cfg.dataDir, WRITING_DIR))
  const failures = new WriteFailures(path.join(cfg.dataDir, WRITE_FAILURES_FILE))
  await failures.load()
  const leftovers = await marks.init()
  const handles = new OpenFiles(marks)
  const engine = new SendEngine({
    options, clock, sender: cfg.sender, sentLog, journal, tree, trashDir: trash,
    isOpen: (key) => handles.isOpen(key),
    hasWriters: (key) => handles.hasWriters(key),
    permOf: (p, isDir) => shownPerm(attrs.get(p)?.mode, isDir ? 'dir' : 'file'),
    forget: (key) => attrs.drop(key),
    writeFailure: (key) => failures.failureIn(key),
    clearInterrupted: (key) => {
      void marks.remove(leftovers.filter((l) => isWithin(l, key))).catch(() => undefined)
    },
  })
  const self = new OutboxFs(tree, engine, journal, attrs, disk, marks, failures, handles, clock, cfg.uid ?? process.getuid?.() ?? 0, cfg.gid ?? process.getgid?.() ?? 0, sentLog)
  const keys = await tree.scan()
  const interrupted = new Set<string>()
  for (const l of leftovers) {
    const key = tree.entryOf(l)
    if (key && keys.includes(key)) interrupted.add(key)
  }
  await marks.remove(leftovers.filter((l) => !interrupted.has(tree.entryOf(l) ?? '')))
  await engine.resume(await journal.loadAll(), keys, interrupted)
  return self
}
