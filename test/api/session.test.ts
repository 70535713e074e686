// The single-flight refresh and the token file, without a service: the caller of the
// service is replaced by a small scripted one that answers like docs/design.md says.
// The same behaviour is tested against the real local service in service-auth.test.ts.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { ApiCall, ApiCaller } from '../../src/api/api-call.js'
import { Session } from '../../src/api/auth.js'
import { NotSignedInError, ServiceError, UnsupportedError } from '../../src/api/errors.js'
import { TokenStore } from '../../src/api/tokens.js'

const dirs: string[] = []
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })))
})
async function tempFile(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tfs-session-'))
  dirs.push(dir)
  return join(dir, 'sub', 'session.json')
}

class ScriptedService {
  valid = new Set<string>()
  refreshTokens = new Set<string>()
  refreshCalls = 0
  twoFactor = false
  private n = 0
  async call(c: ApiCall): Promise<unknown> {
    await new Promise((r) => setTimeout(r, 1))
    if (c.path === '/auth/login') {
      if (this.twoFactor) return { signInStatus: 'TwoFactorRequired', twoFactorToken: 't', logintoken: '', refreshtoken: '' }
      return this.issue()
    }
    if (c.path === '/auth/refreshtoken') {
      this.refreshCalls++
      const rt = (c.body as { refreshtoken: string }).refreshtoken
      if (!this.refreshTokens.delete(rt)) throw new ServiceError('used', 401, 'RefreshTokenAlreadyUsed')
      return this.issue()
    }
    if (!c.loginToken || !this.valid.has(c.loginToken)) throw new ServiceError('expired', 401, 'InvalidOrExpiredLoginToken')
    return { ok: c.loginToken }
  }
  issue() {
    const n = ++this.n
    this.valid.add(`lt${n}`)
    this.refreshTokens.add(`rt${n}`)
    return { signInStatus: 'Success', logintoken: `lt${n}`, refreshtoken: `rt${n}`, logintokenExpireDate: 0, twoFactorToken: '' }
  }
  caller(): ApiCaller {
    return { call: (c: ApiCall) => this.call(c), callData: (c: ApiCall) => this.call(c) } as unknown as ApiCaller
  }
}

describe('Session', () => {
  it('refreshes once for 100 calls that meet an expired token, and replays each once', async () => {
    const svc = new ScriptedService()
    const file = await tempFile()
    const session = new Session(svc.caller(), new TokenStore(file))
    await session.login('a@example.com', 'pw')
    svc.valid.clear() // the logintoken expires
    let tries = 0
    const results = await Promise.all(
      Array.from({ length: 100 }, () => session.authorized(async (t) => { tries++; return svc.call({ operation: 'x', method: 'GET', path: '/x', loginToken: t, idempotent: true }) })),
    )
    expect(svc.refreshCalls).toBe(1)
    expect(tries).toBe(200)
    expect(new Set(results.map((r) => (r as { ok: string }).ok))).toEqual(new Set(['lt2']))
    const onDisk = JSON.parse(await readFile(file, 'utf8'))
    expect(onDisk.refreshtoken).toBe('rt2')
    expect((await stat(file)).mode & 0o777).toBe(0o600)
  })

  it('picks up tokens another process saved when its own refresh token was already used', async () => {
    const svc = new ScriptedService()
    const file = await tempFile()
    const a = new Session(svc.caller(), new TokenStore(file))
    await a.login('a@example.com', 'pw')
    const b = new Session(svc.caller(), new TokenStore(file))
    await b.loginToken()
    svc.valid.clear()
    await a.authorized(async (t) => svc.call({ operation: 'x', method: 'GET', path: '/x', loginToken: t, idempotent: true }))
    const r = await b.authorized(async (t) => svc.call({ operation: 'x', method: 'GET', path: '/x', loginToken: t, idempotent: true }))
    expect(r).toEqual({ ok: 'lt2' })
  })

  it('says plainly that two-factor accounts are not supported, and needs a sign-in', async () => {
    const svc = new ScriptedService()
    svc.twoFactor = true
    const session = new Session(svc.caller(), new TokenStore(undefined))
    await expect(session.login('a@example.com', 'pw')).rejects.toBeInstanceOf(UnsupportedError)
    await expect(session.authorized(async () => 1)).rejects.toBeInstanceOf(NotSignedInError)
  })
})

describe('TokenStore', () => {
  it('writes 0600, replaces atomically and leaves no temporary files', async () => {
    const file = await tempFile()
    const store = new TokenStore(file)
    expect(await store.load()).toBeNull()
    const s = { email: 'a@b', logintoken: 'l1', logintokenExpireDate: 1, refreshtoken: 'r1', savedAt: 1 }
    await Promise.all([store.save(s), store.save({ ...s, refreshtoken: 'r2' }), store.save({ ...s, refreshtoken: 'r3' })])
    const loaded = await store.load()
    expect(['r1', 'r2', 'r3']).toContain(loaded?.refreshtoken)
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    const { readdir } = await import('node:fs/promises')
    expect(await readdir(join(file, '..'))).toEqual(['session.json'])
    await store.clear()
    expect(await store.load()).toBeNull()
  })
})
