// Conformance: GET /transfer/inbox: order, paging, search, from, expired, organization, portals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../support/service.js'
import { api, login, sendTransfer } from './http.js'

let svc: TestService
let token: string
let seeded: string[]
beforeAll(async () => {
  svc = await startTestService()
  token = (await login(svc)).logintoken
  seeded = await svc.controls.seedInbox(svc.user.email, 25, { subjectPrefix: 'Batch' })
})
afterAll(async () => { await svc.close() })

const inbox = (query: Record<string, string | number | boolean> = {}, logintoken = token) =>
  api(svc, 'GET', '/transfer/inbox', { query, logintoken })

const ids = (res: Awaited<ReturnType<typeof inbox>>) => (res.body.data.transfers as Array<{ id: string }>).map((t) => t.id)

describe('inbox', () => {
  it('lists received transfers newest first with files, the portal and the owner', async () => {
    const res = await inbox()
    expect(res.status).toBe(200)
    expect(ids(res)).toEqual([...seeded].reverse())
    const first = res.body.data.transfers[0]
    expect(first.files).toHaveLength(1)
    expect(first.key).toBeNull()
    expect(first.downloads).toEqual([])
    expect(first.trackid).toBeTruthy()
    expect(res.body.data.portal).toMatchObject({ portalId: expect.any(String), isDefault: true })
    expect(res.body.data.inboxOwner).toMatchObject({ email: svc.user.email, canstorefilesforever: true, maxrecipients: 50 })
    expect(res.body.data.inboxOwner.subscription.canCancel).toMatchObject({ state: 'active' })
  })

  it('pages with take and skip; a short page is the last', async () => {
    const pages: string[] = []
    for (let skip = 0; ; skip += 10) {
      const page = ids(await inbox({ take: 10, skip }))
      pages.push(...page)
      if (page.length < 10) break
    }
    expect(pages).toEqual([...seeded].reverse())
    expect(ids(await inbox({ take: 10, skip: 20 }))).toHaveLength(5)
    expect((await inbox({ take: 0 })).status).toBe(400)
    expect((await inbox({ skip: -1 })).status).toBe(400)
  })

  it('searches id, subject, message, sender, recipients and custom fields', async () => {
    expect(ids(await inbox({ search: 'Batch 7' }))).toEqual([seeded[6]])
    expect(ids(await inbox({ search: seeded[3]! }))).toEqual([seeded[3]])
    expect(ids(await inbox({ search: 'seeded transfer number 12' }))).toEqual([seeded[11]])
    expect(ids(await inbox({ search: 'SENDER1@' }))).toHaveLength(8)
    const custom = await sendTransfer(svc, undefined, { to: [svc.user.email], companyid: 'c', customfields: [{ id: 'po', value: 'PO-4711' }] }, {})
    expect(ids(await inbox({ search: 'po-4711' }))).toEqual([custom.transferid])
    expect(ids(await inbox({ search: 'zzz-nothing' }))).toEqual([])
  })

  it('pages a search the way it pages the inbox: take and skip count the matches only', async () => {
    // "Batch 1" matches Batch 1 and Batch 10 to 19: eleven, newest first.
    const all = ids(await inbox({ search: 'Batch 1' }))
    expect(all).toEqual([...seeded.slice(9, 19)].reverse().concat(seeded[0]!))
    const pages: string[] = []
    for (let skip = 0; ; skip += 4) {
      const page = ids(await inbox({ search: 'Batch 1', take: 4, skip }))
      pages.push(...page)
      if (page.length < 4) break
    }
    expect(pages).toEqual(all)
  })

  it('filters by from (sent after) and leaves out expired transfers unless includeExpired', async () => {
    const all = (await inbox()).body.data.transfers as Array<{ id: string; sentdate: number }>
    const pivot = all[5]!.sentdate
    const after = ids(await inbox({ from: pivot }))
    expect(after).toEqual(all.filter((t) => t.sentdate > pivot).map((t) => t.id))
    const svc2 = await startTestService()
    try {
      const s = (await login(svc2)).logintoken
      await sendTransfer(svc2, s, { to: [svc2.user.email], days: 1 }, {})
      await svc2.controls.advanceClock(2 * 24 * 60 * 60 * 1000)
      const fresh = await sendTransfer(svc2, s, { to: [svc2.user.email], days: 5 }, {})
      const s2 = (await login(svc2)).logintoken
      const live = await api(svc2, 'GET', '/transfer/inbox', { logintoken: s2 })
      expect(live.body.data.transfers.map((t: { id: string }) => t.id)).toEqual([fresh.transferid])
      const withExpired = await api(svc2, 'GET', '/transfer/inbox', { logintoken: s2, query: { includeExpired: true } })
      expect(withExpired.body.data.transfers).toHaveLength(2)
      expect(withExpired.body.data.transfers[1].isexpired).toBe(true)
    } finally {
      await svc2.close()
    }
  })

  it('includeOthers adds the organization\'s transfers for an administrator only', async () => {
    await svc.controls.createUser({ email: 'worker@example.com', password: 'pw', companyid: 'org' })
    await svc.controls.createUser({ email: 'admin@example.com', password: 'pw', companyid: 'org', admin: true })
    await svc.controls.createUser({ email: 'peer@example.com', password: 'pw', companyid: 'org' })
    const toWorker = await svc.controls.seedInbox('worker@example.com', 1)
    const admin = (await login(svc, 'admin@example.com', 'pw')).logintoken
    const peer = (await login(svc, 'peer@example.com', 'pw')).logintoken
    expect(ids(await inbox({}, admin))).toEqual([])
    expect(ids(await inbox({ includeOthers: true }, admin))).toEqual(toWorker)
    expect(ids(await inbox({ includeOthers: true }, peer))).toEqual([])
  })

  it('filters by portalIds; a deleted portal answers 409 unless ignoreDeletedPortals', async () => {
    const inSales = await svc.controls.seedInbox(svc.user.email, 2, { portalId: 'sales' })
    const inOld = await svc.controls.seedInbox(svc.user.email, 1, { portalId: 'old' })
    expect(ids(await inbox({ portalIds: 'sales' }))).toEqual([...inSales].reverse())
    expect(ids(await inbox({ portalIds: 'sales,old' })).sort()).toEqual([...inOld, ...inSales].sort())
    await svc.controls.setPortal('old', { deleted: true })
    const conflict = await inbox({ portalIds: 'sales,old' })
    expect(conflict.status).toBe(409)
    expect(conflict.body.responsestatus).toBe('InvalidDataState')
    expect(ids(await inbox({ portalIds: 'sales,old', ignoreDeletedPortals: true }))).toEqual([...inSales].reverse())
  })

  it('needs a logintoken', async () => {
    const res = await api(svc, 'GET', '/transfer/inbox')
    expect(res.status).toBe(401)
    expect(res.body.responsestatus).toBe('AccessDenied')
  })
})
