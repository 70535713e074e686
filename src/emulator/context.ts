// What every route of the local service shares.
import { createHmac } from 'node:crypto'
import type { ServiceClock } from './clock.js'
import type { Faults } from './faults.js'
import type { FileHashPool } from '../base/file-hash-pool.js'
import type { MailLog } from './maillog.js'
import type { Store, StoredTransfer } from './store.js'

export interface ServiceContext {
  store: Store
  clock: ServiceClock
  faults: Faults
  mail: MailLog
  apiKey: string
  /** `https://127.0.0.1:P` of the API listener (the base URL is this + `/api`). */
  apiOrigin: string
  /** `https://127.0.0.1:P2` of the file server. */
  fileOrigin: string
  /** Signs download URLs of password-protected transfers. */
  secret: Buffer
  controls: boolean
  /** GetRangeHash's MD5s, on worker threads. */
  hashes: FileHashPool
  log: (line: string) => void
}

/** The opaque token that download URLs of a protected transfer carry once the password was given. */
export function downloadToken(ctx: ServiceContext, transfer: StoredTransfer): string {
  return createHmac('sha256', ctx.secret).update(`${transfer.id}\n${transfer.password ?? ''}`).digest('base64url').slice(0, 32)
}
