// Transfers: initialize, Complete, forward, details and the inbox (one page, or an
// iterator over every page).
import type { ApiCaller, QueryParams } from './api-call.js'
import type { Session } from './auth.js'
import { API_PATH, completeBody, DETAILS_QUERY, INBOX_DEFAULT_TAKE, INBOX_QUERY } from './protocol.js'
import type { InboxResult, InitializeRequest, InitializeResult, Transfer } from './types.js'

export interface DetailsQuery {
  /** Identify the transfer by a recipient's trackid instead of its id. */
  trackId?: string
  /** Files to include; -1 = all. */
  filesLimit?: number
  /** False: no files, download tracking or other advanced details. Service default true. */
  withDetails?: boolean
  excludeFiles?: boolean
  excludeDownloads?: boolean
  password?: string
  captcha?: string
  /** FileDto property names to include in each file entry. */
  fileProperties?: readonly string[]
  signal?: AbortSignal
}

export interface InboxQuery {
  /** Only transfers received after this time (unix ms). */
  from?: number
  includeOthers?: boolean
  portalIds?: readonly string[]
  includeExpired?: boolean
  /** Page size. */
  take?: number
  skip?: number
  search?: string
  ignoreDeletedPortals?: boolean
  signal?: AbortSignal
}

export interface CallOptions {
  signal?: AbortSignal
}

/** The query parameters of `query`, each under the service's name for it in `names` (field → parameter). */
function queryParams<Q extends object>(query: Q, names: { readonly [F in keyof Q]?: string }): QueryParams {
  const out: QueryParams = {}
  for (const [field, param] of Object.entries(names) as Array<[keyof Q, string]>) out[param] = query[field] as QueryParams[string]
  return out
}

export class TransferApi {
  constructor(
    private readonly api: ApiCaller,
    private readonly session: Session,
  ) {}

  /**
   * Create a transfer. It is not repeated after a failure that may have been served
   * (that would create a second transfer); as the signed-in user when there is one.
   */
  initialize(request: InitializeRequest, options: CallOptions & { anonymous?: boolean } = {}): Promise<InitializeResult> {
    const send = (token: string | null) =>
      this.api.callData<InitializeResult>({
        operation: 'creating a transfer',
        method: 'POST',
        path: API_PATH.initialize,
        body: request,
        loginToken: token,
        idempotent: false,
        signal: options.signal,
      })
    return options.anonymous ? send(null) : this.session.optionallyAuthorized(send)
  }

  /** Finalize a transfer. Completing a complete transfer answers OK again, so this is retried freely. */
  complete(transferId: string, transferKey: string, options: CallOptions = {}): Promise<Transfer> {
    return this.session.optionallyAuthorized((token) =>
      this.api.callData<Transfer>({
        operation: 'completing the transfer',
        method: 'POST',
        path: API_PATH.complete,
        body: completeBody(transferId, transferKey),
        loginToken: token,
        idempotent: true,
        signal: options.signal,
      }),
    )
  }

  /** Add recipients (e-mail addresses or contact group names); each gets an e-mail, so never repeated blindly. */
  forward(transferId: string, to: readonly string[], options: CallOptions = {}): Promise<Transfer> {
    return this.session.authorized((token) =>
      this.api.callData<Transfer>({
        operation: 'forwarding the transfer',
        method: 'POST',
        path: API_PATH.forward,
        body: { transferid: transferId, to },
        loginToken: token,
        idempotent: false,
        signal: options.signal,
      }),
    )
  }

  /** Details by transfer id (or by trackid: pass `null` as the id and `trackId`). */
  details(transferId: string | null, query: DetailsQuery = {}): Promise<Transfer> {
    if (transferId === null && !query.trackId) throw new TypeError('details need a transfer id or a trackid')
    const path = API_PATH.details(transferId ?? API_PATH.detailsByTrackIdPlaceholder)
    return this.session.optionallyAuthorized((token) =>
      this.api.callData<Transfer>({
        operation: 'reading transfer details',
        method: 'GET',
        path,
        query: queryParams(query, DETAILS_QUERY),
        loginToken: token,
        idempotent: true,
        signal: query.signal,
      }),
    )
  }

  /** One page of the inbox. */
  inbox(query: InboxQuery = {}): Promise<InboxResult> {
    return this.session.authorized((token) =>
      this.api.callData<InboxResult>({
        operation: 'reading the inbox',
        method: 'GET',
        path: API_PATH.inbox,
        query: queryParams(query, INBOX_QUERY),
        loginToken: token,
        idempotent: true,
        signal: query.signal,
      }),
    )
  }

  /**
   * Every transfer of the inbox, page after page, each once. There is no total: a page
   * shorter than the page size is the last. A transfer arriving meanwhile shifts later
   * pages by one, which would repeat an entry at a page boundary, so ids already given
   * are skipped. `onPage` sees each page as it arrives (its inboxOwner describes the account).
   */
  async *inboxAll(query: Omit<InboxQuery, 'skip'> = {}, onPage?: (page: InboxResult) => void): AsyncGenerator<Transfer> {
    const take = query.take ?? INBOX_DEFAULT_TAKE
    const seen = new Set<string>()
    for (let skip = 0; ; skip += take) {
      const page = await this.inbox({ ...query, take, skip })
      onPage?.(page)
      const transfers = page.transfers ?? []
      for (const t of transfers) {
        if (seen.has(t.id)) continue
        seen.add(t.id)
        yield t
      }
      if (transfers.length < take) return
    }
  }
}
