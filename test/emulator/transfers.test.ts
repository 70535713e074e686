// Conformance: initialize, Complete and forward, with their mail log entries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../support/service.js'
import { api, login, sendTransfer, upload } from './http.js'

const DAY = 24 * 60 * 60 * 1000
let svc: TestService
let token: string
beforeAll(async () => {
  svc = await startTestService()
  token = (await login(svc)).logintoken
})
afterAll(async () => { await svc.close() })

describe('initialize', () => {
  it('stores every body field and returns upload credentials on the file server', async () => {
    const res = await api(svc, 'POST', '/transfer/initialize', {
      logintoken: token,
      body: {
        to: ['r1@example.com', 'r2@example.com'], subject: 'Report', message: 'Here it is', confirmation: true,
        notify: true, days: 3, transfersize: 1234, filesdb: true, sourcedetails: 'tests/1.0', companyid: 'acme',
        incomingpageid: 'page1', customfields: [{ id: 'ref', value: 'PO-77' }],
      },
    })
    expect(res.status).toBe(200)
    const data = res.body.data
    expect(data.transferurl).toBe(`${svc.uploadUrl}/savefile.ashx`)
    expect(data.filesdb).toEqual({ enabled: false, uploadurl: '', ackurl: '' })
    expect(data.customfields).toEqual({ ref: 'PO-77' })
    expect(typeof data.transferkey).toBe('string')
    const details = await api(svc, 'GET', `/transfer/${data.transferid}`, { logintoken: token })
    const t = details.body.data
    expect(t).toMatchObject({
      status: 'STATUS_STARTED', subject: 'Report', message: 'Here it is', notify: true, days: 3, size: 1234,
      source: 'tests/1.0', from: svc.user.email, permanent: false, key: data.transferkey, kind: 'incoming',
    })
    expect(t.recipients.map((r: { email: string }) => r.email)).toEqual(['r1@example.com', 'r2@example.com'])
    expect(t.expiredate - t.sentdate).toBe(3 * DAY)
    expect(t.customfields[0]).toMatchObject({ customfieldid: 'ref', value: 'PO-77' })
  })

  it('works without a logintoken: an anonymous sender (from = null) with the default days', async () => {
    const res = await api(svc, 'POST', '/transfer/initialize', { body: { subject: 'anon' } })
    expect(res.status).toBe(200)
    const t = (await api(svc, 'GET', `/transfer/${res.body.data.transferid}`)).body.data
    expect(t.from).toBeNull()
    expect(t.days).toBe(14)
    expect(t.key).toBeNull()
  })

  it('allows days = -1 only with canstorefilesforever', async () => {
    const ok = await api(svc, 'POST', '/transfer/initialize', { logintoken: token, body: { days: -1 } })
    expect(ok.status).toBe(200)
    const t = (await api(svc, 'GET', `/transfer/${ok.body.data.transferid}`, { logintoken: token })).body.data
    expect(t).toMatchObject({ permanent: true, expiredate: 0, days: -1, isexpired: false })
    await svc.controls.createUser({ email: 'plain@example.com', password: 'pw' })
    const plain = await login(svc, 'plain@example.com', 'pw')
    const refused = await api(svc, 'POST', '/transfer/initialize', { logintoken: plain.logintoken, body: { days: -1 } })
    expect(refused.status).toBe(400)
    expect(refused.body.validationerrors?.[0]?.propertyName).toBe('days')
    const anon = await api(svc, 'POST', '/transfer/initialize', { body: { days: -1 } })
    expect(anon.status).toBe(400)
    expect((await api(svc, 'POST', '/transfer/initialize', { body: { days: 0 } })).status).toBe(400)
  })

  it('rejects bad recipients, too many recipients and wrong types', async () => {
    const bad = await api(svc, 'POST', '/transfer/initialize', { body: { to: ['ok@example.com', 'not-an-address'] } })
    expect(bad.status).toBe(400)
    expect(bad.body.responsestatus).toBe('InvalidEmail')
    expect(bad.body.validationerrors).toEqual([expect.objectContaining({ propertyName: 'to[1]', errorCode: 'InvalidEmail' })])
    const many = Array.from({ length: 51 }, (_, i) => `r${i}@example.com`)
    const tooMany = await api(svc, 'POST', '/transfer/initialize', { body: { to: many } })
    expect(tooMany.status).toBe(400)
    expect(tooMany.body.responsestatus).toBe('TooManyRecipients')
    const typed = await api(svc, 'POST', '/transfer/initialize', { body: { days: 'three', notify: 'yes' } })
    expect(typed.status).toBe(400)
    expect(typed.body.validationerrors?.map((e) => e.propertyName).sort()).toEqual(['days', 'notify'])
  })

  it('answers 401 for an invalid logintoken', async () => {
    const res = await api(svc, 'POST', '/transfer/initialize', { logintoken: 'bogus', body: {} })
    expect(res.status).toBe(401)
    expect(res.body.responsestatus).toBe('InvalidOrExpiredLoginToken')
  })
})

describe('complete', () => {
  it('moves the transfer to STATUS_COMPLETE, mails recipients and the sender once, and is safe to retry', async () => {
    const before = (await svc.controls.mail()).length
    const t = await sendTransfer(svc, token, { to: ['c1@example.com'], subject: 'Done', confirmation: true }, { 'a.txt': Buffer.from('a') }, false)
    const done = await api(svc, 'POST', '/transfer/complete', { logintoken: token, body: { transferid: t.transferid, transferkey: t.transferkey } })
    expect(done.status).toBe(200)
    expect(done.body.data.status).toBe('STATUS_COMPLETE')
    expect(done.body.data.files).toHaveLength(1)
    const mail = (await svc.controls.mail()).slice(before)
    expect(mail).toHaveLength(2)
    expect(mail[0]).toMatchObject({ kind: 'recipient', to: 'c1@example.com', subject: 'Done', transferid: t.transferid })
    expect(mail[0]!.link).toMatch(new RegExp(`^https://127\\.0\\.0\\.1:\\d+/d/${t.transferid}\\?trackid=`))
    expect(mail[1]).toMatchObject({ kind: 'confirmation', to: svc.user.email })
    const again = await api(svc, 'POST', '/transfer/complete', { body: { transferid: t.transferid, transferkey: t.transferkey } })
    expect(again.status).toBe(200)
    expect((await svc.controls.mail()).length).toBe(before + 2)
  })

  it('keeps a complete transfer complete when files are added later', async () => {
    const t = await sendTransfer(svc, token, {}, { 'a.txt': Buffer.from('a') })
    const up = await upload(svc, t.transferurl, { transferid: t.transferid, transferkey: t.transferkey, thefilename: 'b.txt' }, Buffer.from('bb'))
    expect(up.status).toBe(200)
    const d = (await api(svc, 'GET', `/transfer/${t.transferid}`, { logintoken: token })).body.data
    expect(d.status).toBe('STATUS_COMPLETE')
    expect(d.files.map((f: { filename: string }) => f.filename)).toEqual(['a.txt', 'b.txt'])
  })

  it('answers 409 UploadNotComplete while chunks are missing, 401 AccessDenied for a wrong key, 404 for an unknown id', async () => {
    const t = await sendTransfer(svc, token, {}, {}, false)
    await upload(svc, t.transferurl, { transferid: t.transferid, transferkey: t.transferkey, thefilename: 'c.bin', chunksize: 4, chunks: 2, chunk: 0 }, Buffer.from('abcd'))
    const partial = await api(svc, 'POST', '/transfer/complete', { body: { transferid: t.transferid, transferkey: t.transferkey } })
    expect(partial.status).toBe(409)
    expect(partial.body.responsestatus).toBe('UploadNotComplete')
    const wrong = await api(svc, 'POST', '/transfer/complete', { body: { transferid: t.transferid, transferkey: 'x' } })
    expect(wrong.status).toBe(401)
    expect(wrong.body.responsestatus).toBe('AccessDenied')
    const unknown = await api(svc, 'POST', '/transfer/complete', { body: { transferid: 'nope', transferkey: 'x' } })
    expect(unknown.status).toBe(404)
    expect(unknown.body.responsestatus).toBe('NotFound')
  })

  it('allows no other body properties and requires both', async () => {
    const extra = await api(svc, 'POST', '/transfer/complete', { body: { transferid: 'a', transferkey: 'b', more: 1 } })
    expect(extra.status).toBe(400)
    expect(extra.body.validationerrors).toEqual([expect.objectContaining({ propertyName: 'more' })])
    const missing = await api(svc, 'POST', '/transfer/complete', { body: { transferid: 'a' } })
    expect(missing.status).toBe(400)
    expect(missing.body.responsestatus).toBe('InputParameterMissing')
  })

  it('refuses cancelled transfers with 409', async () => {
    const t = await sendTransfer(svc, token, {}, {}, false)
    await svc.controls.setStatus(t.transferid, 'STATUS_CANCELLED')
    const res = await api(svc, 'POST', '/transfer/complete', { body: { transferid: t.transferid, transferkey: t.transferkey } })
    expect(res.status).toBe(409)
    expect(res.body.responsestatus).toBe('InvalidTransferState')
  })
})

describe('forward', () => {
  it('adds recipients with new trackids and links, expands contact groups, and mails them', async () => {
    await svc.controls.createUser({
      email: 'fwd@example.com', password: 'pw',
      contactgroups: [{ name: 'Team', emails: ['t1@example.com', 't2@example.com'] }],
    })
    const sender = await login(svc, 'fwd@example.com', 'pw')
    const t = await sendTransfer(svc, sender.logintoken, { to: ['first@example.com'] }, { 'a.txt': Buffer.from('a') })
    const before = (await svc.controls.mail()).length
    const res = await api(svc, 'POST', '/transfer/forward', { logintoken: sender.logintoken, body: { transferid: t.transferid, to: ['new@example.com', 'team'] } })
    expect(res.status).toBe(200)
    const recipients = res.body.data.recipients as Array<{ email: string; downloadlink: string }>
    expect(recipients.map((r) => r.email)).toEqual(['first@example.com', 'new@example.com', 't1@example.com', 't2@example.com'])
    const links = new Set(recipients.map((r) => r.downloadlink))
    expect(links.size).toBe(4)
    for (const link of links) expect(link).toMatch(new RegExp(`^https://127\\.0\\.0\\.1:\\d+/d/${t.transferid}\\?trackid=\\w+$`))
    expect(res.body.data.allowforwarding).toBe(false)
    const mail = (await svc.controls.mail()).slice(before)
    expect(mail.map((m) => [m.kind, m.to])).toEqual([['forward', 'new@example.com'], ['forward', 't1@example.com'], ['forward', 't2@example.com']])
    expect(mail.map((m) => m.link)).toEqual(recipients.slice(1).map((r) => r.downloadlink))
  })

  it('answers 400 InvalidEmail for an unknown group, TooManyRecipients past maxrecipients', async () => {
    await svc.controls.createUser({ email: 'small@example.com', password: 'pw', maxrecipients: 2 })
    const s = await login(svc, 'small@example.com', 'pw')
    const t = await sendTransfer(svc, s.logintoken, { to: ['a@example.com'] }, {})
    const unknown = await api(svc, 'POST', '/transfer/forward', { logintoken: s.logintoken, body: { transferid: t.transferid, to: ['Nobody Group'] } })
    expect(unknown.status).toBe(400)
    expect(unknown.body.responsestatus).toBe('InvalidEmail')
    expect(unknown.body.validationerrors?.[0]?.propertyName).toBe('to[0]')
    const tooMany = await api(svc, 'POST', '/transfer/forward', { logintoken: s.logintoken, body: { transferid: t.transferid, to: ['b@example.com', 'c@example.com'] } })
    expect(tooMany.status).toBe(400)
    expect(tooMany.body.responsestatus).toBe('TooManyRecipients')
  })

  it('is for the sender only unless allowforwarding, and only on complete transfers', async () => {
    const started = await sendTransfer(svc, token, {}, {}, false)
    const notYet = await api(svc, 'POST', '/transfer/forward', { logintoken: token, body: { transferid: started.transferid, to: ['x@example.com'] } })
    expect(notYet.status).toBe(409)
    expect(notYet.body.responsestatus).toBe('InvalidTransferState')
    const t = await sendTransfer(svc, token, {}, {})
    await svc.controls.createUser({ email: 'other@example.com', password: 'pw' })
    const other = await login(svc, 'other@example.com', 'pw')
    const denied = await api(svc, 'POST', '/transfer/forward', { logintoken: other.logintoken, body: { transferid: t.transferid, to: ['x@example.com'] } })
    expect(denied.status).toBe(401)
    expect(denied.body.responsestatus).toBe('AccessDenied')
    await svc.controls.setAllowForwarding(t.transferid, true)
    const allowed = await api(svc, 'POST', '/transfer/forward', { logintoken: other.logintoken, body: { transferid: t.transferid, to: ['x@example.com'] } })
    expect(allowed.status).toBe(200)
    expect(allowed.body.data.recipients).toEqual([])
    expect(allowed.body.data.allowforwarding).toBe(true)
    const anonymous = await api(svc, 'POST', '/transfer/forward', { body: { transferid: t.transferid, to: ['x@example.com'] } })
    expect(anonymous.status).toBe(401)
  })

  it('allows no other body properties', async () => {
    const res = await api(svc, 'POST', '/transfer/forward', { logintoken: token, body: { transferid: 'a', to: [], subject: 'x' } })
    expect(res.status).toBe(400)
    expect(res.body.validationerrors).toEqual([expect.objectContaining({ propertyName: 'subject' })])
  })
})
