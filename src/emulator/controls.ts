// The test controls under /_emulator (docs/local-service.md). Only served with `controls: true`.
import type { IncomingMessage } from 'node:http'
import { Readable } from 'node:stream'
import { TRANSFER_STATES, type TransferState } from '../api/types.js'
import type { ServiceContext } from './context.js'
import { largeFileStream } from './demo-content.js'
import { ApiError, invalid, isEmail, readJsonBody } from './envelope.js'
import type { ApiResult } from './routes/common.js'
import { DAY } from './settings.js'
import type { NewUser } from './store.js'

const json = (body: unknown): ApiResult => ({ http: 200, body })

function record(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('body', 'a JSON object is required')
  return body as Record<string, unknown>
}

function transferOf(ctx: ServiceContext, id: string) {
  const transfer = ctx.store.transfers.get(decodeURIComponent(id))
  if (!transfer) throw new ApiError('NotFound', 'no such transfer')
  return transfer
}

/**
 * What each seeded transfer holds: `files` files, each a short text, or `fileSize` generated
 * bytes, named `<fileStem>-<transfer>[-<file>].<txt|bin>` (a long stem makes look-alike names).
 */
export interface SeedShape {
  files: number
  fileSize: number | null
  fileStem?: string
}

/**
 * Seeds `count` complete transfers shaped by `shape`, received by `to` (newest = the last one),
 * sent by `from` (by default sender0..2@example.com in turn). The service takes a sender's
 * text as given: `from`, like the subject, may hold anything, control characters too.
 */
export async function seedInbox(ctx: ServiceContext, to: string, count: number, subjectPrefix: string, portalId: string | null,
  shape: SeedShape = { files: 1, fileSize: null }, from: string | null = null): Promise<string[]> {
  const ids: string[] = []
  const now = ctx.clock.now()
  for (let i = 0; i < count; i++) {
    const sentdate = now - (count - i) * 1000
    const transfer = await ctx.store.createTransfer({
      to: [to], senderId: null, from: from ?? `sender${i % 3}@example.com`, subject: `${subjectPrefix} ${i + 1}`,
      message: `Seeded transfer number ${i + 1}`, password: null, confirmation: false, notify: false,
      days: 30, permanent: false, sentdate, expiredate: sentdate + 30 * DAY, status: 'STATUS_COMPLETE',
      transfersize: null, source: 'seed', companyid: null, fileRequestId: null, fileRequestShareId: null,
      incomingpageid: null, customfields: [], portalId, allowforwarding: false,
    })
    for (let j = 0; j < shape.files; j++) {
      const name = `${shape.fileStem ?? 'file'}-${i + 1}${shape.files > 1 ? `-${j + 1}` : ''}.${shape.fileSize === null ? 'txt' : 'bin'}`
      const body = shape.fileSize === null ? Readable.from([Buffer.from(`Content of seeded file ${i + 1}\n`)]) : largeFileStream(shape.fileSize)
      await ctx.store.writeFile(transfer, name, body, sentdate)
    }
    ids.push(transfer.id)
  }
  return ids
}

export async function handleControl(ctx: ServiceContext, req: IncomingMessage, url: URL): Promise<ApiResult> {
  const path = url.pathname.slice('/_emulator'.length)
  const method = req.method ?? 'GET'
  const route = `${method} ${path}`
  let m: RegExpExecArray | null

  if (route === 'GET /mail') return json(ctx.mail.entries)
  if (route === 'POST /clock') {
    const body = record(await readJsonBody(req))
    if (typeof body.advanceMs !== 'number' || body.advanceMs < 0) throw invalid('advanceMs', 'advanceMs must be a number >= 0')
    ctx.clock.advance(body.advanceMs)
    return json({ now: ctx.clock.now() })
  }
  if (method === 'POST' && (m = /^\/transfers\/([^/]+)\/status$/.exec(path))) {
    const transfer = transferOf(ctx, m[1]!)
    const body = record(await readJsonBody(req))
    if (!(TRANSFER_STATES as readonly unknown[]).includes(body.status)) throw invalid('status', `status must be one of ${TRANSFER_STATES.join(', ')}`)
    transfer.status = body.status as TransferState
    return json({ id: transfer.id, status: transfer.status })
  }
  if (method === 'POST' && (m = /^\/transfers\/([^/]+)\/captcha$/.exec(path))) {
    const transfer = transferOf(ctx, m[1]!)
    const body = record(await readJsonBody(req))
    if (typeof body.captcha !== 'string' || body.captcha === '') throw invalid('captcha', 'captcha must be a non-empty string')
    transfer.captcha = body.captcha
    return json({ id: transfer.id })
  }
  if (method === 'POST' && (m = /^\/transfers\/([^/]+)\/allowforwarding$/.exec(path))) {
    const transfer = transferOf(ctx, m[1]!)
    const body = record(await readJsonBody(req))
    if (typeof body.allow !== 'boolean') throw invalid('allow', 'allow must be a boolean')
    transfer.allowforwarding = body.allow
    return json({ id: transfer.id, allowforwarding: transfer.allowforwarding })
  }
  if (route === 'POST /users') {
    const body = record(await readJsonBody(req))
    if (typeof body.email !== 'string' || !isEmail(body.email)) throw invalid('email', 'email must be an e-mail address')
    if (typeof body.password !== 'string' || body.password === '') throw invalid('password', 'password is required')
    if (ctx.store.userByEmail(body.email)) throw new ApiError('InvalidParameter', `an account for ${body.email} exists`)
    const user = ctx.store.createUser(body as unknown as NewUser)
    return json({ id: user.id, email: user.email })
  }
  if (route === 'POST /inbox/seed') {
    const body = record(await readJsonBody(req))
    if (typeof body.to !== 'string' || !isEmail(body.to)) throw invalid('to', 'to must be an e-mail address')
    if (!Number.isInteger(body.count) || (body.count as number) < 0) throw invalid('count', 'count must be an integer >= 0')
    const prefix = typeof body.subjectPrefix === 'string' ? body.subjectPrefix : 'Seeded transfer'
    const portalId = typeof body.portalId === 'string' ? body.portalId : null
    if (portalId !== null && !ctx.store.portals.has(portalId)) {
      ctx.store.portals.set(portalId, { portalId, friendlyName: portalId, deleted: false })
    }
    const files = body.files ?? 1
    if (!Number.isInteger(files) || (files as number) < 1) throw invalid('files', 'files must be an integer >= 1')
    const fileSize = body.fileSize ?? null
    if (fileSize !== null && (!Number.isInteger(fileSize) || (fileSize as number) < 0)) throw invalid('fileSize', 'fileSize must be an integer >= 0')
    if (body.from !== undefined && typeof body.from !== 'string') throw invalid('from', 'from must be a string')
    const fileStem = body.fileStem ?? 'file'
    if (typeof fileStem !== 'string' || fileStem === '' || fileStem.includes('/')) throw invalid('fileStem', 'fileStem must be a non-empty name without "/"')
    return json({ transferids: await seedInbox(ctx, body.to, body.count as number, prefix, portalId, { files: files as number, fileSize: fileSize as number | null, fileStem }, body.from ?? null) })
  }
  if (method === 'POST' && (m = /^\/portals\/([^/]+)$/.exec(path))) {
    const portalId = decodeURIComponent(m[1]!)
    const body = record(await readJsonBody(req))
    const portal = { portalId, friendlyName: typeof body.friendlyName === 'string' ? body.friendlyName : portalId, deleted: body.deleted === true }
    ctx.store.portals.set(portalId, portal)
    return json(portal)
  }
  if (route === 'GET /counters') return json(ctx.faults.counters)
  if (route === 'POST /counters/reset') {
    req.resume()
    ctx.faults.resetCounters()
    return json({})
  }
  if (route === 'POST /faults') return json(ctx.faults.add(await readJsonBody(req)))
  if (route === 'DELETE /faults') {
    req.resume()
    ctx.faults.clear()
    return json({})
  }
  if (route === 'POST /throttle') return json(ctx.faults.setThrottle(await readJsonBody(req)))
  req.resume()
  throw new ApiError('NotFound', `no test control ${route}`)
}
