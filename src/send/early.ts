// Early uploads: each file of a folder in the outbox goes up as soon as it is closed
// after writing (or renamed into place), while the rest of the folder is still being
// copied, into a transfer initialized for the folder ahead of its send. Nothing is completed
// early: the send at settle (pipeline.ts) takes over, keeps the transfer when every file
// journaled for it is unchanged, uploads the rest and completes. A change to a file the
// transfer may already hold spoils it: early uploads stop for the entry, and its send
// drops that transfer (never completed) and sends a new one, as for any journaled send
// whose content changed. What a spoiled transfer cost is bandwidth, never a wrong send.
//
// Each file is hashed before its first byte goes and journaled with its MD5, so that after
// a crash the transfer is kept exactly when the files it may hold are unchanged. A file
// dropped on its own is not uploaded early: it waits for settleMs, and its MD5
// is worked out while it goes up, which a big file would otherwise wait for.
import { longPathFs as disk, withShortPath } from '../base/long-paths.js'
import path from 'node:path'
import PQueue from 'p-queue'
import { md5OfFile } from '../base/file-hash-pool.js'
import type { Entry } from './entry.js'
import { newJournalRecord, type JournalFile } from './journal.js'
import { isTemporaryName, isWithin } from './names.js'
import type { SendHost } from './host.js'
import { initializeJournaled, uploadJournaled } from './pipeline.js'
import type { InitializeAnswer } from './ports.js'
import { journalFits, PARALLEL_FILE_UPLOADS } from './rules.js'
import { filesOfFolder, type KnownMd5 } from './snapshot.js'
import type { EntryInfo } from './tree.js'

interface Upload {
  readonly abort: AbortController
  started: boolean
}

/** One entry's early uploads, from its first closed file until its send takes over. */
interface Session {
  readonly queue: PQueue
  /** Aborted once the transfer is spoiled, the send takes over, or the process stops. */
  readonly over: AbortController
  /** Uploads queued or under way, by outbox path. */
  readonly uploads: Map<string, Upload>
  readonly running: Set<Promise<void>>
  /**
   * Outbox paths of the files journaled for the transfer (it may hold some of their
   * bytes), and of the folders above them inside the entry.
   */
  readonly journaled: Set<string>
  /** MD5s of uploaded files, by path in the entry, that no change has touched since. */
  readonly known: Map<string, { size: number; md5: string }>
  transfer: Promise<InitializeAnswer | null> | null
  /** The send is taking over: no new uploads, those under way finish. */
  closing: boolean
}

export class EarlyUploads {
  private readonly sessions = new Map<string, Session>()

  constructor(private readonly host: SendHost) {}

  /** The file at outbox path `p` inside entry `e` is complete as far as anyone can tell: upload it now. */
  ready(e: Entry, p: string): void {
    const { host } = this
    const { d } = host
    if (!d.options.uploadWhileCopying || d.tree.existing || host.halted) return
    // Never into a transfer that may be sent already: Complete was asked (pipeline.ts, learnIfSent).
    if (e.phase !== 'settling' || e.running || e.journal?.completed || e.journal?.completing) return
    if (host.interrupted.has(e.key) || d.writeFailure(e.key) !== null || d.hasWriters(p)) return
    const info = d.tree.describe(e.key)
    if (!info || isTemporaryName(info.subject)) return
    if (!isWithin(p, e.key) || p === e.key) return
    const rel = p.slice(e.key.length + 1)
    if (rel.split('/').some(isTemporaryName)) return
    if (e.journal && !journalFits(e.journal, info, d.options)) return
    const s = this.session(e)
    if (s.closing || s.over.signal.aborted || s.uploads.has(p) || s.journaled.has(p)) return
    const upload: Upload = { abort: new AbortController(), started: false }
    s.uploads.set(p, upload)
    // Each upload has a signal of its own, which ending the session aborts too (one
    // listener per upload on a session signal would pile up in a folder of many files).
    const signal = upload.abort.signal
    const run: Promise<void> = s.queue
      .add(() => {
        upload.started = true
        return this.upload(e, s, info, rel, p, signal)
      })
      .catch(() => {
        // The send at settle retries with its own policy; until then no more early uploads.
        if (!signal.aborted) end(s)
      })
      .finally(() => {
        if (s.uploads.get(p) === upload) s.uploads.delete(p)
        s.running.delete(run)
      })
    s.running.add(run)
    host.track(run)
  }

  /** A change at outbox path `at` inside entry `key` (`key` itself: any of it) is about to land. */
  touched(key: string, at: string): void {
    const s = this.sessions.get(key)
    if (!s) return
    for (const [p, u] of s.uploads) {
      if (!isWithin(p, at)) continue
      u.abort.abort()
      s.uploads.delete(p)
    }
    if (at === key ? s.journaled.size > 0 : s.journaled.has(at)) {
      end(s)
      for (const rel of [...s.known.keys()]) if (isWithin(rel ? `${key}/${rel}` : key, at)) s.known.delete(rel)
    }
  }

  /** The entry's send starts: no more early uploads; those under way finish. The MD5s they worked out. */
  async takeOver(e: Entry): Promise<KnownMd5> {
    const s = this.sessions.get(e.key)
    if (!s) return new Map()
    s.closing = true
    for (const u of s.uploads.values()) if (!u.started) u.abort.abort()
    // Still in the map meanwhile: a change or a halt must reach the uploads being waited for.
    await Promise.allSettled([...s.running])
    if (this.sessions.get(e.key) === s) this.sessions.delete(e.key)
    end(s)
    return s.known
  }

  /** As if the process died. */
  halt(): void {
    for (const s of this.sessions.values()) end(s)
  }

  private session(e: Entry): Session {
    let s = this.sessions.get(e.key)
    if (!s) {
      s = {
        queue: new PQueue({ concurrency: PARALLEL_FILE_UPLOADS }), over: new AbortController(), uploads: new Map(),
        running: new Set(), journaled: new Set(), known: new Map(), transfer: null, closing: false,
      }
      for (const f of e.journal?.files ?? []) noteJournaled(s, e.key, f)
      this.sessions.set(e.key, s)
    }
    return s
  }

  private async upload(e: Entry, s: Session, info: EntryInfo, rel: string, p: string, signal: AbortSignal): Promise<void> {
    const { host } = this
    const { d } = host
    const stale = (): boolean => host.halted || signal.aborted
    const full = path.join(info.realPath, rel)
    const st = await disk.lstat(full)
    if (!st.isFile() || stale()) return
    const t = await this.transferOf(e, s, info)
    const j = e.journal
    if (!t || !j || j.transfer !== t || stale()) return
    const md5 = await withShortPath(full, (s) => md5OfFile(s, 0, null, signal))
    if (stale() || j.transfer !== t || j.files.some((f) => f.name === rel)) return
    const file: JournalFile = { name: rel, rel, size: st.size, md5 }
    s.known.set(rel, { size: file.size, md5 })
    // Journaled before its first byte goes, so that nothing the transfer may hold is unaccounted for.
    j.files.push(file)
    noteJournaled(s, e.key, file)
    e.totalBytes = j.files.reduce((n, f) => n + f.size, 0)
    await d.journal.save(j)
    if (stale()) return
    await uploadJournaled({ host, e, rec: j, realPath: info.realPath, subject: info.subject, stale }, t, [file], signal)
  }

  /** The entry's transfer: the journaled one, or one initialized now (once per session). */
  private transferOf(e: Entry, s: Session, info: EntryInfo): Promise<InitializeAnswer | null> {
    s.transfer ??= (async () => {
      const { host } = this
      if (e.journal?.transfer) return e.journal.transfer
      const j = (e.journal ??= newJournalRecord({
        entryKey: e.key, subject: info.subject, recipients: info.recipients, chunkSize: host.d.options.uploadChunkSize, files: [],
      }))
      // The size initialize is told (informational, by the interface) is what is staged so
      // far: the copy is still running, and the whole is known only at the settle.
      const staged = (await filesOfFolder(info.realPath)).reduce((n, f) => n + f.size, 0)
      return initializeJournaled({ host, rec: j, stale: () => host.halted || s.over.signal.aborted }, s.over.signal, staged)
    })()
    return s.transfer
  }
}

/** No more early uploads in `s`: those queued or under way stop. */
function end(s: Session): void {
  s.over.abort()
  for (const u of s.uploads.values()) u.abort.abort()
}

/** Notes `f` (of entry `key`) as possibly held by the transfer, with the folders above it. */
function noteJournaled(s: Session, key: string, f: JournalFile): void {
  let p = f.rel ? `${key}/${f.rel}` : key
  while (p.length > key.length) {
    s.journaled.add(p)
    p = p.slice(0, p.lastIndexOf('/'))
  }
  s.journaled.add(key)
}
