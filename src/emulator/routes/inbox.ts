// GET /transfer/inbox: transfers received by the caller (and, for administrators, by the organization).
import type { InboxResult } from '../../api/types.js'
import { ApiError } from '../envelope.js'
import { SETTINGS } from '../settings.js'
import type { StoredTransfer, User } from '../store.js'
import { DEFAULT_VIEW, inboxOwner, transferView } from '../view.js'
import { involvesCompany, isRecipient, ok, requireCaller, type ApiRoute } from './common.js'

function matches(transfer: StoredTransfer, phrase: string): boolean {
  const p = phrase.toLowerCase()
  const haystack = [transfer.id, transfer.subject, transfer.message, transfer.from ?? '',
    ...transfer.recipients.map((r) => r.email), ...transfer.customfields.map((f) => f.value)]
  return haystack.some((text) => text.toLowerCase().includes(p))
}

export const inboxRoute: ApiRoute = {
  name: 'inbox', method: 'GET', pattern: /^\/transfer\/inbox$/,
  async handle(r) {
    const user: User = requireCaller(r)
    const q = r.query
    const from = q.integer('from')
    const includeOthers = (q.boolean('includeOthers') ?? false) && user.admin && user.companyid !== ''
    const includeExpired = q.boolean('includeExpired') ?? false
    const take = q.integer('take', 1) ?? SETTINGS.defaultInboxTake
    const skip = q.integer('skip', 0) ?? 0
    const search = q.string('search')
    const ignoreDeletedPortals = q.boolean('ignoreDeletedPortals') ?? false
    let portalIds: string[] | null = null
    const portalParam = q.string('portalIds')
    if (portalParam !== undefined) {
      portalIds = []
      for (const id of portalParam.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
        const portal = r.ctx.store.portals.get(id)
        if (portal?.deleted) {
          if (!ignoreDeletedPortals) throw new ApiError('InvalidDataState', `portal ${id} is deleted`)
          continue
        }
        portalIds.push(id)
      }
    }
    const store = r.ctx.store
    const received = [...store.transfers.values()].filter((t) => {
      if (t.status !== 'STATUS_COMPLETE') return false
      if (!isRecipient(user, t) && !(includeOthers && involvesCompany(r.ctx, t, user.companyid) && t.senderId !== user.id)) return false
      if (!includeExpired && store.isExpired(t)) return false
      if (from !== undefined && t.sentdate <= from) return false
      if (portalIds !== null && (t.portalId === null || !portalIds.includes(t.portalId))) return false
      if (search && !matches(t, search)) return false
      return true
    }).sort((a, b) => b.sentdate - a.sentdate || (a.id < b.id ? 1 : -1))
    const page = received.slice(skip, skip + take)
    if (from === undefined && !search) r.ctx.faults.counters.inboxListed += page.length
    const storageinuse = [...store.transfers.values()].filter((t) => t.senderId === user.id)
      .reduce((n, t) => n + t.files.reduce((m, f) => m + f.size, 0), 0)
    const result: InboxResult = {
      transfers: page.map((t) => {
        const own = t.recipients.find((rc) => rc.email.toLowerCase() === user.email.toLowerCase())
        return transferView(r.ctx, t, { ...DEFAULT_VIEW, trackid: own?.trackid ?? null })
      }),
      portal: { portalId: 'default', friendlyName: 'Inbox', uploadCount: received.length, isDefault: true },
      inboxOwner: inboxOwner(user, storageinuse),
    }
    return ok(result)
  },
}
