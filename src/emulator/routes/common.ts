// What API routes share: the request as a route sees it, the caller's identity, visibility.
import type { IncomingMessage } from 'node:http'
import type { ServiceContext } from '../context.js'
import { ApiError, type Query } from '../envelope.js'
import type { RouteName } from '../faults.js'
import type { StoredTransfer, User } from '../store.js'

export interface ApiRequest {
  req: IncomingMessage
  url: URL
  query: Query
  params: string[]
  ctx: ServiceContext
}

export interface ApiResult {
  http: number
  body: unknown
  headers?: Record<string, string>
}

export interface ApiRoute {
  name: RouteName
  method: string
  pattern: RegExp
  handle(r: ApiRequest): Promise<ApiResult>
}

export function loginTokenOf(r: ApiRequest): string | null {
  const value = r.req.headers['logintoken']
  return typeof value === 'string' && value !== '' ? value : null
}

/** The user of the `logintoken` header; null without one. A bad or expired token is a 401. */
export function caller(r: ApiRequest): User | null {
  const token = loginTokenOf(r)
  if (token === null) return null
  const found = r.ctx.store.lookupSession(token)
  if ('error' in found) throw new ApiError('InvalidOrExpiredLoginToken', found.error === 'expired' ? 'the logintoken has expired' : 'the logintoken is not valid')
  return found.user
}

export function requireCaller(r: ApiRequest): User {
  const user = caller(r)
  if (!user) throw new ApiError('AccessDenied', 'this operation needs a logintoken')
  return user
}

function isUserOfCompany(ctx: ServiceContext, email: string, companyid: string): boolean {
  const user = ctx.store.userByEmail(email)
  return user !== undefined && user.companyid === companyid
}

/** Whether a transfer was sent or received by a user of the company. */
export function involvesCompany(ctx: ServiceContext, transfer: StoredTransfer, companyid: string): boolean {
  if (!companyid) return false
  if (transfer.companyid === companyid) return true
  const sender = transfer.senderId ? ctx.store.users.get(transfer.senderId) : undefined
  if (sender?.companyid === companyid) return true
  return transfer.recipients.some((r) => isUserOfCompany(ctx, r.email, companyid))
}

/** Key, recipients and download tracking: for the sender, and an administrator of an involved company. */
export function seesEverything(ctx: ServiceContext, user: User | null, transfer: StoredTransfer): boolean {
  if (!user) return false
  if (transfer.senderId === user.id) return true
  return user.admin && involvesCompany(ctx, transfer, user.companyid)
}

export function isRecipient(user: User, transfer: StoredTransfer): boolean {
  const email = user.email.toLowerCase()
  return transfer.recipients.some((r) => r.email.toLowerCase() === email)
}

export const ok = (data: unknown): ApiResult => ({ http: 200, body: { responsestatus: 'OK', errorid: null, errormessage: null, data, errorcode: 0 } })
