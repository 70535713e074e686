// Conformance: GET /transfer/{id}: query parameters, visibility, password and captcha, trackid lookup.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestService, type TestService } from '../support/service.js'
import { api, get, login, sendTransfer } from './http.js'

let svc: TestService
let sender: string
let t: { transferid: string; transferkey: string }
beforeAll(async () => {
  svc = await startTestService()
  sender = (await login(svc)).logintoken
  t = await sendTransfer(svc, sender, { to: ['rcpt@example.com'], subject: 'Details' }, {
    'one.txt': Buffer.from('1'), 'two.txt': Buffer.from('22'), 'dir/three.txt': Buffer.from('333'),
  })
  await get(svc, (await api(svc, 'GET', `/transfer/${t.transferid}`, { logintoken: sender })).body.data.files[0].downloadurl)
})
afterAll(async () => { await svc.close() })

const details = (id: string, query: Record<string, string | number | boolean> = {}, logintoken?: string) =>
  api(svc, 'GET', `/transfer/${id}`, { query, logintoken })

describe('query parameters', () => {
  it('gives the sender everything by default', async () => {
    const d = (await details(t.transferid, {}, sender)).body.data
    expect(d.files).toHaveLength(3)
    expect(d.numberoffiles).toBe(3)
    expect(d.size).toBe(6)
    expect(d.key).toBe(t.transferkey)
    expect(d.downloads).toHaveLength(1)
    expect(d.numberofdownloads).toBe(1)
    expect(d.files[0].downloads).toHaveLength(1)
    expect(d.files[0]).toMatchObject({ filename: 'one.txt', filesize: 1, md5: 'c4ca4238a0b923820dcc509a6f75849b', transferid: t.transferid })
    expect(d.containsmorefiles).toBe(0)
  })

  it('filesLimit limits the files (-1 = all) and containsmorefiles counts the rest', async () => {
    const two = (await details(t.transferid, { filesLimit: 2 }, sender)).body.data
    expect(two.files.map((f: { filename: string }) => f.filename)).toEqual(['one.txt', 'two.txt'])
    expect(two.containsmorefiles).toBe(1)
    expect((await details(t.transferid, { filesLimit: -1 }, sender)).body.data.files).toHaveLength(3)
    expect((await details(t.transferid, { filesLimit: -2 }, sender)).status).toBe(400)
  })

  it('withDetails=false omits files, tracking and recipients; excludeFiles/excludeDownloads omit one each', async () => {
    const lean = (await details(t.transferid, { withDetails: false }, sender)).body.data
    expect(lean.files).toEqual([])
    expect(lean.downloads).toEqual([])
    expect(lean.recipients).toEqual([])
    expect(lean.numberoffiles).toBe(3)
    const noFiles = (await details(t.transferid, { excludeFiles: true }, sender)).body.data
    expect(noFiles.files).toEqual([])
    expect(noFiles.downloads).toHaveLength(1)
    const noDownloads = (await details(t.transferid, { excludeDownloads: true }, sender)).body.data
    expect(noDownloads.files).toHaveLength(3)
    expect(noDownloads.downloads).toEqual([])
    expect(noDownloads.files[0].downloads).toBeNull()
  })

  it('fileProperties limits each file entry to the named properties', async () => {
    const d = (await details(t.transferid, { fileProperties: 'filename,md5' }, sender)).body.data
    expect(d.files[2]).toEqual({ filename: 'dir/three.txt', md5: '310dcbbf4cce62f762a2aaa148d556bd' })
    const bad = await details(t.transferid, { fileProperties: 'filename,nonsense' }, sender)
    expect(bad.status).toBe(400)
    expect(bad.body.validationerrors?.[0]?.propertyName).toBe('fileProperties')
  })

  it('answers 404 NotFound for an unknown id', async () => {
    const res = await details('does-not-exist')
    expect(res.status).toBe(404)
    expect(res.body.responsestatus).toBe('NotFound')
    expect(res.body.errorcode).toBe(5)
  })
})

describe('visibility', () => {
  it('hides key, recipients and tracking from anonymous callers, recipients and other users', async () => {
    await svc.controls.createUser({ email: 'rcpt@example.com', password: 'pw' })
    await svc.controls.createUser({ email: 'stranger@example.com', password: 'pw' })
    const rcpt = (await login(svc, 'rcpt@example.com', 'pw')).logintoken
    const stranger = (await login(svc, 'stranger@example.com', 'pw')).logintoken
    for (const who of [undefined, rcpt, stranger]) {
      const d = (await details(t.transferid, {}, who)).body.data
      expect(d.key).toBeNull()
      expect(d.recipients).toEqual([])
      expect(d.downloads).toEqual([])
      expect(d.to).toEqual([])
      expect(d.files).toHaveLength(3)
      expect(d.files[0].downloads).toBeNull()
    }
    // A signed-in recipient's download URLs carry its trackid.
    expect((await details(t.transferid, {}, rcpt)).body.data.files[0].downloadurl).toContain('trackid=')
  })

  it('shows everything to an administrator of a company involved, nothing extra to another company\'s', async () => {
    await svc.controls.createUser({ email: 'boss@example.com', password: 'pw', admin: true, companyid: 'local-company' })
    await svc.controls.createUser({ email: 'otherboss@example.com', password: 'pw', admin: true, companyid: 'elsewhere' })
    const boss = (await login(svc, 'boss@example.com', 'pw')).logintoken
    const otherBoss = (await login(svc, 'otherboss@example.com', 'pw')).logintoken
    expect((await details(t.transferid, {}, boss)).body.data.key).toBe(t.transferkey)
    expect((await details(t.transferid, {}, otherBoss)).body.data.key).toBeNull()
  })

  it('finds a transfer by trackid through the path "-", and its download URLs record that recipient', async () => {
    const full = (await details(t.transferid, {}, sender)).body.data
    const trackid = new URL(full.recipients[0].downloadlink).searchParams.get('trackid')!
    const byTrack = await details('-', { trackid })
    expect(byTrack.status).toBe(200)
    expect(byTrack.body.data.id).toBe(t.transferid)
    expect(byTrack.body.data.trackid).toBe(trackid)
    expect(byTrack.body.data.key).toBeNull()
    await get(svc, byTrack.body.data.files[1].downloadurl)
    const after = (await details(t.transferid, {}, sender)).body.data
    expect(after.files[1].downloads[0].email).toBe('rcpt@example.com')
    expect((await details('-')).status).toBe(400)
    expect((await details('-', { trackid: 'nope' })).status).toBe(404)
  })
})

describe('states', () => {
  it('answers 200 with the status and no files for cancelled and deleted transfers; they leave the inbox', async () => {
    const x = await sendTransfer(svc, sender, { to: [svc.user.email] }, { 'a.txt': Buffer.from('a') })
    const inboxBefore = (await api(svc, 'GET', '/transfer/inbox', { logintoken: sender })).body.data.transfers
    expect(inboxBefore.map((i: { id: string }) => i.id)).toContain(x.transferid)
    for (const status of ['STATUS_CANCELLED', 'STATUS_DELETED'] as const) {
      await svc.controls.setStatus(x.transferid, status)
      const d = await details(x.transferid, {}, sender)
      expect(d.status).toBe(200)
      expect(d.body.data.status).toBe(status)
      expect(d.body.data.files).toEqual([])
    }
    const inboxAfter = (await api(svc, 'GET', '/transfer/inbox', { logintoken: sender })).body.data.transfers
    expect(inboxAfter.map((i: { id: string }) => i.id)).not.toContain(x.transferid)
  })
})

describe('password', () => {
  it('needs the password from everyone; downloads need the signed URL of a details answer', async () => {
    const p = await sendTransfer(svc, sender, { password: 'sesame' }, { 'secret.txt': Buffer.from('secret') })
    const none = await details(p.transferid, {}, sender)
    expect(none.status).toBe(401)
    expect(none.body.responsestatus).toBe('PasswordRequired')
    const wrong = await details(p.transferid, { password: 'nope' }, sender)
    expect(wrong.status).toBe(401)
    expect(wrong.body.responsestatus).toBe('AccessDenied')
    const right = await details(p.transferid, { password: 'sesame' })
    expect(right.status).toBe(200)
    expect(right.body.data.passwordprotected).toBe(true)
    const url = right.body.data.files[0].downloadurl as string
    expect(new URL(url).searchParams.get('token')).toBeTruthy()
    expect((await get(svc, url)).bytes.toString()).toBe('secret')
    const unsigned = new URL(url)
    unsigned.searchParams.delete('token')
    expect((await get(svc, unsigned.toString())).status).toBe(401)
    unsigned.searchParams.set('token', 'forged')
    expect((await get(svc, unsigned.toString())).status).toBe(401)
    const zip = await get(svc, right.body.data.compressedfileurl)
    expect(zip.status).toBe(200)
  })

  it('requires the captcha after 5 wrong passwords in a row, until a correct captcha comes with the right password', async () => {
    const p = await sendTransfer(svc, sender, { password: 'sesame' }, { 'a.txt': Buffer.from('a') })
    for (let i = 0; i < 5; i++) expect((await details(p.transferid, { password: `bad${i}` })).body.responsestatus).toBe('AccessDenied')
    const locked = await details(p.transferid, { password: 'sesame' })
    expect(locked.status).toBe(401)
    expect(locked.body.responsestatus).toBe('CaptchaRequiredForNextLogin')
    await svc.controls.setCaptcha(p.transferid, 'XK42')
    expect((await details(p.transferid, { password: 'sesame', captcha: 'wrong' })).body.responsestatus).toBe('CaptchaRequiredForNextLogin')
    expect((await details(p.transferid, { password: 'bad', captcha: 'XK42' })).body.responsestatus).toBe('AccessDenied')
    expect((await details(p.transferid, { password: 'sesame', captcha: 'XK42' })).status).toBe(200)
    expect((await details(p.transferid, { password: 'sesame' })).status).toBe(200)
  })

  it('shows a protected transfer in the inbox without files', async () => {
    await sendTransfer(svc, sender, { to: [svc.user.email], password: 'pw', subject: 'Locked one' }, { 'a.txt': Buffer.from('a') })
    const inbox = (await api(svc, 'GET', '/transfer/inbox', { logintoken: sender, query: { search: 'Locked one' } })).body.data.transfers
    expect(inbox).toHaveLength(1)
    expect(inbox[0]).toMatchObject({ passwordprotected: true, files: [], numberoffiles: 1 })
  })
})

describe('expiry', () => {
  it('still answers details for an expired transfer (isexpired = true) and its downloads answer 404', async () => {
    const svc2 = await startTestService()
    try {
      const s = (await login(svc2)).logintoken
      const x = await sendTransfer(svc2, s, { days: 1 }, { 'a.txt': Buffer.from('a') })
      const url = (await api(svc2, 'GET', `/transfer/${x.transferid}`, { logintoken: s })).body.data.files[0].downloadurl
      await svc2.controls.advanceClock(24 * 60 * 60 * 1000 + 1)
      const d = await api(svc2, 'GET', `/transfer/${x.transferid}`, { logintoken: s })
      expect(d.status).toBe(200)
      expect(d.body.data.isexpired).toBe(true)
      expect(d.body.data.status).toBe('STATUS_COMPLETE')
      expect((await get(svc2, url)).status).toBe(404)
    } finally {
      await svc2.close()
    }
  })
})
