// POST /auth/login, /auth/refreshtoken, /auth/logout.
import type { LoginResult, RefreshResult } from '../../api/types.js'
import { ApiError, readJsonBody, validateBody } from '../envelope.js'
import { loginTokenOf, ok, type ApiRoute } from './common.js'

export const authRoutes: ApiRoute[] = [
  {
    name: 'login', method: 'POST', pattern: /^\/auth\/login$/,
    async handle(r) {
      const body = validateBody(await readJsonBody(r.req), {
        email: { type: 'string', required: true, minLength: 1 },
        password: { type: 'string', required: true, minLength: 1 },
      }, false)
      const user = r.ctx.store.userByEmail(body.email as string)
      if (!user || user.password !== body.password) throw new ApiError('WrongUsernamePassword', 'wrong e-mail address or password')
      if (user.twoFactor) {
        const result: LoginResult = {
          logintoken: '', logintokenExpireDate: 0, refreshtoken: '',
          twoFactorToken: `2fa-${user.id}`, signInStatus: 'TwoFactorRequired',
        }
        return ok(result)
      }
      const session = r.ctx.store.openSession(user)
      const result: LoginResult = { ...session, twoFactorToken: '', signInStatus: 'Success' }
      return ok(result)
    },
  },
  {
    name: 'refresh', method: 'POST', pattern: /^\/auth\/refreshtoken$/,
    async handle(r) {
      r.ctx.faults.counters.refreshCalls += 1
      const body = validateBody(await readJsonBody(r.req), {
        refreshtoken: { type: 'string', required: true, minLength: 1 },
      }, false)
      const outcome = r.ctx.store.refresh(body.refreshtoken as string)
      if ('error' in outcome) {
        throw new ApiError(outcome.error, outcome.error === 'RefreshTokenAlreadyUsed'
          ? 'this refresh token was used already' : 'this refresh token has expired or is not valid')
      }
      const result: RefreshResult = outcome
      return ok(result)
    },
  },
  {
    name: 'logout', method: 'POST', pattern: /^\/auth\/logout$/,
    async handle(r) {
      const allDevices = r.query.boolean('allDevices') ?? false
      const token = loginTokenOf(r)
      // Logging out twice, or with a token that already expired, is not an error: the session is gone either way.
      if (token !== null) r.ctx.store.logout(token, allDevices)
      return ok(null)
    },
  },
]
