// The list of transfers sent from this machine (the vfs shows them under sent/): an
// append-only JSON-lines file, each line synced before record() resolves.
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import type { InitializeAnswer, SentLog, SentRecord } from './ports.js'

export class FileSentLog implements SentLog {
  private cache: SentRecord[] | null = null
  private tail: Promise<unknown> = Promise.resolve()

  constructor(readonly file: string) {}

  async list(): Promise<SentRecord[]> {
    if (this.cache) return [...this.cache]
    let text = ''
    try {
      text = await fsp.readFile(this.file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    const out: SentRecord[] = []
    for (const line of text.split('\n')) {
      if (!line.trim()) continue
      try {
        out.push(JSON.parse(line) as SentRecord)
      } catch {
        // A line torn by a crash mid-append: the record is written again on resume.
      }
    }
    this.cache = out
    return [...out]
  }

  /** The upload address and key of a transfer sent from here (to add files to it), or null. */
  async keyOf(transferid: string): Promise<InitializeAnswer | null> {
    const r = (await this.list()).find((x) => x.transferid === transferid)
    return r?.transferkey && r.transferurl ? { transferid, transferkey: r.transferkey, transferurl: r.transferurl } : null
  }

  async has(transferid: string): Promise<boolean> {
    return (await this.list()).some((r) => r.transferid === transferid)
  }

  record(entry: SentRecord): Promise<void> {
    const p = this.tail.then(async () => {
      if (await this.has(entry.transferid)) return
      await fsp.mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 })
      const h = await fsp.open(this.file, 'a', 0o600)
      try {
        // A leading newline isolates this record from a line torn by an earlier crash.
        await h.write('\n' + JSON.stringify(entry) + '\n')
        await h.sync()
      } finally {
        await h.close()
      }
      this.cache?.push(entry)
    })
    this.tail = p.catch(() => undefined)
    return p
  }
}

/** What the sent log records of a transfer whose Complete answered. */
export function sentRecordOf(
  t: InitializeAnswer,
  sent: Pick<SentRecord, 'subject' | 'recipients' | 'files' | 'sentAt' | 'url' | 'readers'>,
): SentRecord {
  return {
    transferid: t.transferid, subject: sent.subject, recipients: sent.recipients,
    files: sent.files.map((f) => ({ name: f.name, size: f.size, md5: f.md5 })), sentAt: sent.sentAt, url: sent.url,
    transferurl: t.transferurl, transferkey: t.transferkey,
    ...(sent.readers ? { readers: sent.readers } : {}),
  }
}
