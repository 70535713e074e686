// Conformance: x-api-key rules, login, two-factor, token lifetimes, refresh rotation, logout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errorCodeOf } from '../../src/api/types.js'
import { startTestService, type TestService } from '../support/service.js'
import { api, login } from './http.js'

const DAY = 24 * 60 * 60 * 1000
let svc: TestService
beforeAll(async () => { svc = await startTestService() })
afterAll(async () => { await svc.close() })

describe('x-api-key', () => {
  it('is required on API operations: missing → 401 MissingApikey, unknown → 401 InvalidApikey', async () => {
    const missing = await api(svc, 'POST', '/auth/login', { body: { email: svc.user.email, password: svc.user.password }, apiKey: null })
    expect(missing.status).toBe(401)
    expect(missing.body.responsestatus).toBe('MissingApikey')
    expect(missing.body.errorcode).toBe(errorCodeOf('MissingApikey'))
    const wrong = await api(svc, 'GET', '/transfer/inbox', { apiKey: 'nope' })
    expect(wrong.status).toBe(401)
    expect(wrong.body.responsestatus).toBe('InvalidApikey')
  })
})

describe('login', () => {
  it('answers Success with a 7-day logintoken and a refresh token', async () => {
    const res = await api(svc, 'POST', '/auth/login', { body: { email: svc.user.email, password: svc.user.password } })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ responsestatus: 'OK', errorcode: 0, errorid: null, errormessage: null })
    const data = res.body.data
    expect(data.signInStatus).toBe('Success')
    expect(typeof data.logintoken).toBe('string')
    expect(typeof data.refreshtoken).toBe('string')
    expect(data.logintokenExpireDate - Date.now()).toBeGreaterThan(7 * DAY - 60_000)
    expect(data.logintokenExpireDate - Date.now()).toBeLessThanOrEqual(7 * DAY + 60_000)
  })

  it('answers 401 WrongUsernamePassword for a wrong password or an unknown account', async () => {
    for (const body of [{ email: svc.user.email, password: 'wrong' }, { email: 'nobody@example.com', password: 'x' }]) {
      const res = await api(svc, 'POST', '/auth/login', { body })
      expect(res.status).toBe(401)
      expect(res.body.responsestatus).toBe('WrongUsernamePassword')
      expect(res.body.data).toBeNull()
    }
  })

  it('reports missing, empty and mistyped fields as validationerrors', async () => {
    const missing = await api(svc, 'POST', '/auth/login', { body: { email: svc.user.email } })
    expect(missing.status).toBe(400)
    expect(missing.body.responsestatus).toBe('InputParameterMissing')
    expect(missing.body.validationerrors).toEqual([expect.objectContaining({ propertyName: 'password', errorCode: 'InputParameterMissing' })])
    const empty = await api(svc, 'POST', '/auth/login', { body: { email: '', password: 'x' } })
    expect(empty.status).toBe(400)
    expect(empty.body.validationerrors?.[0]).toMatchObject({ propertyName: 'email', errorCode: 'InvalidParameter' })
    const typed = await api(svc, 'POST', '/auth/login', { body: { email: 5, password: 'x' } })
    expect(typed.status).toBe(400)
    expect(typed.body.validationerrors?.[0]?.propertyName).toBe('email')
  })

  it('answers TwoFactorRequired without a logintoken for a two-factor account', async () => {
    await svc.controls.createUser({ email: 'twofa@example.com', password: 'pw', twoFactor: true })
    const res = await api(svc, 'POST', '/auth/login', { body: { email: 'twofa@example.com', password: 'pw' } })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ signInStatus: 'TwoFactorRequired', logintoken: '' })
    expect(res.body.data.twoFactorToken).not.toBe('')
  })
})

describe('tokens', () => {
  it('rotates refresh tokens: each works once, the reused one answers RefreshTokenAlreadyUsed', async () => {
    const first = await login(svc)
    const r1 = await api(svc, 'POST', '/auth/refreshtoken', { body: { refreshtoken: first.refreshtoken } })
    expect(r1.status).toBe(200)
    expect(r1.body.data.refreshtoken).not.toBe(first.refreshtoken)
    expect(r1.body.data.logintoken).not.toBe(first.logintoken)
    const inbox = await api(svc, 'GET', '/transfer/inbox', { logintoken: r1.body.data.logintoken })
    expect(inbox.status).toBe(200)
    const again = await api(svc, 'POST', '/auth/refreshtoken', { body: { refreshtoken: first.refreshtoken } })
    expect(again.status).toBe(401)
    expect(again.body.responsestatus).toBe('RefreshTokenAlreadyUsed')
    const r2 = await api(svc, 'POST', '/auth/refreshtoken', { body: { refreshtoken: r1.body.data.refreshtoken } })
    expect(r2.status).toBe(200)
  })

  it('counts refresh calls', async () => {
    await svc.controls.resetCounters()
    const { refreshtoken } = await login(svc)
    await api(svc, 'POST', '/auth/refreshtoken', { body: { refreshtoken } })
    await api(svc, 'POST', '/auth/refreshtoken', { body: { refreshtoken } })
    const counters = await svc.controls.counters()
    expect(counters.refreshCalls).toBe(2)
    expect(counters.routes.refresh).toBe(2)
    expect(counters.routes.login).toBe(1)
  })

  it('expires the logintoken after 7 days (401 InvalidOrExpiredLoginToken) and the refresh token after 3 months', async () => {
    const svc2 = await startTestService()
    try {
      const s = await login(svc2)
      await svc2.controls.advanceClock(7 * DAY + 1000)
      const expired = await api(svc2, 'GET', '/transfer/inbox', { logintoken: s.logintoken })
      expect(expired.status).toBe(401)
      expect(expired.body.responsestatus).toBe('InvalidOrExpiredLoginToken')
      const fresh = await api(svc2, 'POST', '/auth/refreshtoken', { body: { refreshtoken: s.refreshtoken } })
      expect(fresh.status).toBe(200)
      expect((await api(svc2, 'GET', '/transfer/inbox', { logintoken: fresh.body.data.logintoken })).status).toBe(200)
      await svc2.controls.advanceClock(92 * DAY)
      const old = await api(svc2, 'POST', '/auth/refreshtoken', { body: { refreshtoken: fresh.body.data.refreshtoken } })
      expect(old.status).toBe(401)
      expect(old.body.responsestatus).toBe('RefreshTokenExpired')
    } finally {
      await svc2.close()
    }
  })

  it('logout destroys the logintoken and its refresh token; allDevices destroys every session', async () => {
    const a = await login(svc)
    const b = await login(svc)
    const out = await api(svc, 'POST', '/auth/logout', { logintoken: a.logintoken })
    expect(out.status).toBe(200)
    expect(out.body.data).toBeNull()
    expect((await api(svc, 'GET', '/transfer/inbox', { logintoken: a.logintoken })).body.responsestatus).toBe('InvalidOrExpiredLoginToken')
    expect((await api(svc, 'POST', '/auth/refreshtoken', { body: { refreshtoken: a.refreshtoken } })).status).toBe(401)
    expect((await api(svc, 'GET', '/transfer/inbox', { logintoken: b.logintoken })).status).toBe(200)
    const all = await api(svc, 'POST', '/auth/logout', { logintoken: b.logintoken, query: { allDevices: true } })
    expect(all.status).toBe(200)
    expect((await api(svc, 'GET', '/transfer/inbox', { logintoken: b.logintoken })).status).toBe(401)
    expect((await api(svc, 'POST', '/auth/refreshtoken', { body: { refreshtoken: b.refreshtoken } })).status).toBe(401)
  })

  it('logout with allDevices=true also ends sessions opened elsewhere', async () => {
    const a = await login(svc)
    const b = await login(svc)
    await api(svc, 'POST', '/auth/logout', { logintoken: a.logintoken, query: { allDevices: true } })
    expect((await api(svc, 'GET', '/transfer/inbox', { logintoken: b.logintoken })).status).toBe(401)
  })

  it('rejects a malformed boolean query value with 400', async () => {
    const res = await api(svc, 'POST', '/auth/logout', { query: { allDevices: 'yes' } })
    expect(res.status).toBe(400)
    expect(res.body.validationerrors?.[0]?.propertyName).toBe('allDevices')
  })
})
