// The local service sends no mail: each notification is recorded here for the test controls.
export type MailKind = 'recipient' | 'confirmation' | 'forward' | 'download-first' | 'download-summary'

export interface MailEntry {
  kind: MailKind
  to: string
  subject: string
  link: string | null
  transferid: string
  at: number
}

export class MailLog {
  readonly entries: MailEntry[] = []

  record(entry: MailEntry): void {
    this.entries.push(entry)
  }
}
