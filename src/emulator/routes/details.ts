// GET /transfer/{transferid} (or /transfer/-?trackid=...): details, with password and captcha rules.
import type { ServiceContext } from '../context.js'
import { ApiError, invalid } from '../envelope.js'
import { SETTINGS } from '../settings.js'
import type { Recipient, StoredTransfer } from '../store.js'
import { FILE_PROPERTIES, transferView } from '../view.js'
import { caller, ok, seesEverything, type ApiRequest, type ApiRoute } from './common.js'

function find(r: ApiRequest, id: string, trackid: string | undefined): { transfer: StoredTransfer; recipient: Recipient | null } {
  if (id === '-') {
    if (!trackid) throw invalid('trackid', "'trackid' is required when the path holds no transfer id", 'InputParameterMissing')
    const found = r.ctx.store.byTrackId(trackid)
    if (!found) throw new ApiError('NotFound', 'no transfer has this trackid')
    return found
  }
  const transfer = r.ctx.store.transfers.get(id)
  if (!transfer) throw new ApiError('NotFound', 'no such transfer')
  if (trackid === undefined) return { transfer, recipient: null }
  const recipient = transfer.recipients.find((rc) => rc.trackid === trackid)
  if (!recipient) throw new ApiError('NotFound', 'this trackid does not belong to the transfer')
  return { transfer, recipient }
}

/** A protected transfer needs its password, and after too many wrong ones in a row the captcha the operator set. */
export function checkPassword(ctx: ServiceContext, transfer: StoredTransfer, password: string | undefined, captcha: string | undefined): void {
  if (transfer.password === null) return
  const locked = transfer.wrongPasswords >= SETTINGS.wrongPasswordsBeforeCaptcha
  if (locked && (transfer.captcha === null || captcha !== transfer.captcha)) {
    throw new ApiError('CaptchaRequiredForNextLogin', 'too many wrong passwords: a captcha is required')
  }
  if (password === undefined || password === '') throw new ApiError('PasswordRequired', 'this transfer is password protected')
  if (password !== transfer.password) {
    transfer.wrongPasswords += 1
    ctx.log(`details ${transfer.id}: wrong password (${transfer.wrongPasswords} in a row)`)
    throw new ApiError('AccessDenied', 'wrong password')
  }
  transfer.wrongPasswords = 0
}

export const detailsRoute: ApiRoute = {
  name: 'details', method: 'GET', pattern: /^\/transfer\/([^/]+)$/,
  async handle(r) {
    const q = r.query
    const { transfer, recipient } = find(r, decodeURIComponent(r.params[0]!), q.string('trackid'))
    const filesLimit = q.integer('filesLimit', -1) ?? -1
    const withDetails = q.boolean('withDetails') ?? true
    const excludeFiles = q.boolean('excludeFiles') ?? false
    const excludeDownloads = q.boolean('excludeDownloads') ?? false
    let fileProperties: string[] | null = null
    const props = q.string('fileProperties')
    if (props !== undefined) {
      fileProperties = props.split(',').map((p) => p.trim()).filter((p) => p !== '')
      const unknown = fileProperties.filter((p) => !(FILE_PROPERTIES as readonly string[]).includes(p))
      if (unknown.length) throw invalid('fileProperties', `unknown file properties: ${unknown.join(', ')}`)
    }
    const user = caller(r)
    checkPassword(r.ctx, transfer, q.string('password'), q.string('captcha'))
    const full = seesEverything(r.ctx, user, transfer)
    // A signed-in recipient's download URLs record that recipient, as a trackid link would.
    const own = recipient ?? (user ? transfer.recipients.find((rc) => rc.email.toLowerCase() === user.email.toLowerCase()) ?? null : null)
    return ok(transferView(r.ctx, transfer, {
      full, trackid: own?.trackid ?? null, unlocked: transfer.password !== null, withDetails,
      excludeFiles: withDetails && excludeFiles, excludeDownloads: withDetails && excludeDownloads,
      filesLimit, fileProperties,
    }))
  },
}
