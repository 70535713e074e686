// POST /transfer/initialize, /transfer/complete, /transfer/forward.
import type { InitializeResult, ValidationError } from '../../api/types.js'
import type { ServiceContext } from '../context.js'
import { ApiError, invalid, isEmail, readJsonBody, validateBody } from '../envelope.js'
import { DAY, SETTINGS } from '../settings.js'
import type { StoredTransfer, User } from '../store.js'
import { recipientLink, transferView, DEFAULT_VIEW } from '../view.js'
import { caller, ok, requireCaller, seesEverything, type ApiRoute } from './common.js'

function checkEmails(list: string[], property: string): void {
  const errors: ValidationError[] = []
  list.forEach((email, i) => {
    if (!isEmail(email)) errors.push({ propertyName: `${property}[${i}]`, errorCode: 'InvalidEmail', errorMessage: `'${email}' is not an e-mail address` })
  })
  if (errors.length) throw new ApiError('InvalidEmail', errors.map((e) => e.errorMessage).join('; '), errors)
}

function daysFor(user: User | null, days: number | undefined): { days: number; permanent: boolean } {
  if (days === undefined) return { days: user?.defaultdays ?? SETTINGS.defaultDays, permanent: false }
  if (days === -1) {
    if (!user?.canstorefilesforever) throw invalid('days', 'days = -1 (permanent) is not available on this account')
    return { days: -1, permanent: true }
  }
  const max = user?.maxdays ?? SETTINGS.defaultMaxDays
  if (days < 1 || days > max) throw invalid('days', `days must be -1 or between 1 and ${max}`)
  return { days, permanent: false }
}

function fullView(ctx: ServiceContext, transfer: StoredTransfer) {
  return transferView(ctx, transfer, { ...DEFAULT_VIEW, full: true })
}

export const transferRoutes: ApiRoute[] = [
  {
    name: 'initialize', method: 'POST', pattern: /^\/transfer\/initialize$/,
    async handle(r) {
      const user = caller(r)
      const body = validateBody(await readJsonBody(r.req), {
        to: { type: 'string[]' }, subject: { type: 'string' }, message: { type: 'string' }, password: { type: 'string' },
        confirmation: { type: 'boolean' }, notify: { type: 'boolean' }, days: { type: 'integer' },
        transfersize: { type: 'integer' }, filesdb: { type: 'boolean' }, sourcedetails: { type: 'string' },
        companyid: { type: 'string' }, fileRequestId: { type: 'string' }, fileRequestShareId: { type: 'string' },
        incomingpageid: { type: 'string' }, incomingpassword: { type: 'string' }, customfields: { type: 'idvalue[]' },
      }, false)
      const to = (body.to as string[] | undefined) ?? []
      checkEmails(to, 'to')
      const maxRecipients = user?.maxrecipients ?? SETTINGS.defaultMaxRecipients
      if (to.length > maxRecipients) throw new ApiError('TooManyRecipients', `at most ${maxRecipients} recipients`)
      const companyid = (body.companyid as string | undefined) ?? null
      for (const linked of ['fileRequestId', 'fileRequestShareId'] as const) {
        if (body[linked] !== undefined && !companyid) throw invalid(linked, `${linked} needs the companyid it belongs to`)
      }
      if (body.transfersize !== undefined && (body.transfersize as number) < 0) throw invalid('transfersize', 'transfersize must be >= 0')
      if (body.password !== undefined && (body.password as string) === '') throw invalid('password', 'password must not be empty')
      const { days, permanent } = daysFor(user, body.days as number | undefined)
      const now = r.ctx.clock.now()
      const transfer = await r.ctx.store.createTransfer({
        to,
        senderId: user?.id ?? null,
        from: user?.email ?? null,
        subject: (body.subject as string | undefined) ?? '',
        message: (body.message as string | undefined) ?? '',
        password: (body.password as string | undefined) ?? null,
        confirmation: (body.confirmation as boolean | undefined) ?? false,
        notify: (body.notify as boolean | undefined) ?? false,
        days, permanent,
        sentdate: now,
        expiredate: permanent ? 0 : now + days * DAY,
        status: 'STATUS_STARTED',
        transfersize: (body.transfersize as number | undefined) ?? null,
        source: (body.sourcedetails as string | undefined) ?? null,
        companyid,
        fileRequestId: (body.fileRequestId as string | undefined) ?? null,
        fileRequestShareId: (body.fileRequestShareId as string | undefined) ?? null,
        incomingpageid: (body.incomingpageid as string | undefined) ?? null,
        customfields: (body.customfields as Array<{ id: string; value: string }> | undefined) ?? [],
        portalId: null,
        allowforwarding: false,
      })
      const result: InitializeResult = {
        transferid: transfer.id,
        transferkey: transfer.key,
        transferurl: `${r.ctx.fileOrigin}/savefile.ashx`,
        region: 'local',
        alternate_urls: [],
        transferip: '127.0.0.1',
        udpport: 0,
        udpthreshold: 0,
        customfields: Object.fromEntries(transfer.customfields.map((f) => [f.id, f.value])),
        filesdb: { enabled: false, uploadurl: '', ackurl: '' },
      }
      return ok(result)
    },
  },
  {
    name: 'complete', method: 'POST', pattern: /^\/transfer\/complete$/,
    async handle(r) {
      caller(r)
      const body = validateBody(await readJsonBody(r.req), {
        transferid: { type: 'string', required: true, minLength: 1 },
        transferkey: { type: 'string', required: true, minLength: 1 },
      }, true)
      const transfer = r.ctx.store.transfers.get(body.transferid as string)
      if (!transfer) throw new ApiError('NotFound', 'no such transfer')
      if (transfer.key !== body.transferkey) throw new ApiError('AccessDenied', 'wrong transfer key')
      if (transfer.status === 'STATUS_CANCELLED' || transfer.status === 'STATUS_DELETED') {
        throw new ApiError('InvalidTransferState', `the transfer is ${transfer.status}`)
      }
      const incomplete = [...transfer.uploads.values()].filter((u) => u.received.size < u.chunks || u.assembling)
      if (incomplete.length > 0) {
        throw new ApiError('UploadNotComplete', `chunks are missing for ${incomplete.map((u) => u.name).join(', ')}`)
      }
      if (transfer.status === 'STATUS_STARTED') {
        transfer.status = 'STATUS_COMPLETE'
        const at = r.ctx.clock.now()
        for (const recipient of transfer.recipients) {
          r.ctx.mail.record({
            kind: 'recipient', to: recipient.email, subject: transfer.subject || 'Files for you',
            link: recipientLink(r.ctx, transfer.id, recipient.trackid), transferid: transfer.id, at,
          })
        }
        if (transfer.confirmation && transfer.from) {
          r.ctx.mail.record({
            kind: 'confirmation', to: transfer.from, subject: `Sent: ${transfer.subject}`,
            link: `${r.ctx.fileOrigin}/d/${transfer.id}`, transferid: transfer.id, at,
          })
        }
      }
      return ok(fullView(r.ctx, transfer))
    },
  },
  {
    name: 'forward', method: 'POST', pattern: /^\/transfer\/forward$/,
    async handle(r) {
      const user = requireCaller(r)
      const body = validateBody(await readJsonBody(r.req), {
        transferid: { type: 'string', required: true, minLength: 1 },
        to: { type: 'string[]', required: true },
      }, true)
      const transfer = r.ctx.store.transfers.get(body.transferid as string)
      if (!transfer) throw new ApiError('NotFound', 'no such transfer')
      if (transfer.senderId !== user.id && !transfer.allowforwarding) throw new ApiError('AccessDenied', 'only the sender may forward this transfer')
      if (transfer.status !== 'STATUS_COMPLETE') throw new ApiError('InvalidTransferState', `the transfer is ${transfer.status}`)
      const to = body.to as string[]
      if (to.length === 0) throw invalid('to', "'to' needs at least one recipient")
      const emails: string[] = []
      const errors: ValidationError[] = []
      to.forEach((entry, i) => {
        if (isEmail(entry)) return void emails.push(entry)
        const group = user.contactgroups.find((g) => g.name.toLowerCase() === entry.toLowerCase())
        if (group) emails.push(...group.emails)
        else errors.push({ propertyName: `to[${i}]`, errorCode: 'InvalidEmail', errorMessage: `'${entry}' is neither an e-mail address nor a contact group` })
      })
      if (errors.length) throw new ApiError('InvalidEmail', errors.map((e) => e.errorMessage).join('; '), errors)
      const known = new Set(transfer.recipients.map((rc) => rc.email.toLowerCase()))
      const added = [...new Set(emails.map((e) => e.toLowerCase()))].filter((e) => !known.has(e))
        .map((lower) => emails.find((e) => e.toLowerCase() === lower)!)
      if (transfer.recipients.length + added.length > user.maxrecipients) {
        throw new ApiError('TooManyRecipients', `at most ${user.maxrecipients} recipients in total`)
      }
      const at = r.ctx.clock.now()
      for (const email of added) {
        const recipient = r.ctx.store.addRecipient(transfer, email)
        r.ctx.mail.record({
          kind: 'forward', to: email, subject: transfer.subject || 'Files for you',
          link: recipientLink(r.ctx, transfer.id, recipient.trackid), transferid: transfer.id, at,
        })
      }
      const full = seesEverything(r.ctx, user, transfer)
      return ok(transferView(r.ctx, transfer, { ...DEFAULT_VIEW, full }))
    },
  },
]
