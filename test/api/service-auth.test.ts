// Authentication against the real local service: single-flight refresh, single-use
// refresh tokens, logout, two-factor and key errors.
import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ApiCaller } from '../../src/api/api-call.js'
import { NetworkError, ServiceError, UnsupportedError } from '../../src/api/errors.js'
import { Transport } from '../../src/api/http.js'
import { DEFAULT_OFFLINE, DEFAULT_RETRY, DEFAULT_TIMEOUTS } from '../../src/api/options.js'
import { newUser, startHarness } from './harness.js'
import type { Harness } from './harness.js'

const DAY = 24 * 60 * 60 * 1000
let h: Harness

beforeAll(async () => {
  h = await startHarness()
})
afterAll(async () => {
  await h?.close()
})

/** Ask the service directly with a given logintoken, no refresh in between. */
async function inboxWithToken(token: string): Promise<unknown> {
  const transport = new Transport({ timeouts: DEFAULT_TIMEOUTS, ca: h.ca, connectionsPerOrigin: 1, offline: DEFAULT_OFFLINE })
  try {
    const api = new ApiCaller(transport, h.baseUrl, h.apiKey, DEFAULT_RETRY)
    return await api.call({ operation: 'inbox', method: 'GET', path: '/transfer/inbox', query: { take: 1 }, loginToken: token, idempotent: true })
  } finally {
    await transport.close()
  }
}

describe('sign-in and session', () => {
  it('100 concurrent calls with an expired logintoken cause exactly one refresh, and all succeed', async () => {
    const user = await newUser(h)
    const client = h.client()
    await client.auth.login(user.email, user.password)
    const before = await client.auth.currentRefreshToken()
    await h.control('POST', '/clock', { advanceMs: 8 * DAY })
    await h.control('POST', '/counters/reset')
    const results = await Promise.all(Array.from({ length: 100 }, () => client.transfers.inbox({ take: 1 })))
    expect(results).toHaveLength(100)
    for (const r of results) expect(Array.isArray(r.transfers)).toBe(true)
    const counters = await h.counters()
    expect(counters.refreshCalls).toBe(1)
    expect(client.auth.refreshCount).toBe(1)
    // The new refresh token is on disk, readable by its owner only.
    const file = client.options.tokenFile!
    const saved = JSON.parse(await readFile(file, 'utf8'))
    expect(saved.refreshtoken).toBe(await client.auth.currentRefreshToken())
    expect(saved.refreshtoken).not.toBe(before)
    expect((await stat(file)).mode & 0o777).toBe(0o600)
  })

  it('a reused refresh token is reported as such; logout then invalidates the token', async () => {
    const user = await newUser(h)
    const client = h.client()
    await client.auth.login(user.email, user.password)
    const first = (await client.auth.currentRefreshToken())!
    await h.control('POST', '/clock', { advanceMs: 8 * DAY })
    await client.transfers.inbox({ take: 1 }) // renews: `first` is now used up
    const err = await client.auth.exchangeRefreshToken(first).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ServiceError)
    expect((err as ServiceError).httpStatus).toBe(401)
    expect((err as ServiceError).responsestatus).toBe('RefreshTokenAlreadyUsed')
    expect((err as ServiceError).message).toMatch(/already (renewed|used)/)

    const token = (await client.auth.loginToken())!
    await expect(inboxWithToken(token)).resolves.toBeDefined()
    await client.auth.logout()
    expect(await client.auth.isSignedIn()).toBe(false)
    await expect(readFile(client.options.tokenFile!)).rejects.toMatchObject({ code: 'ENOENT' })
    const after = await inboxWithToken(token).catch((e: unknown) => e)
    expect(after).toBeInstanceOf(ServiceError)
    expect((after as ServiceError).responsestatus).toBe('InvalidOrExpiredLoginToken')
  })

  it('logout of all devices ends every session of the account', async () => {
    const user = await newUser(h)
    const a = h.client()
    const b = h.client()
    await a.auth.login(user.email, user.password)
    await b.auth.login(user.email, user.password)
    const bToken = (await b.auth.loginToken())!
    await expect(inboxWithToken(bToken)).resolves.toBeDefined()
    await a.auth.logout({ allDevices: true })
    const err = await inboxWithToken(bToken).catch((e: unknown) => e)
    expect((err as ServiceError).responsestatus).toBe('InvalidOrExpiredLoginToken')
    // b's own refresh token died too: b cannot renew and says to sign in again.
    const viaB = await b.transfers.inbox({ take: 1 }).catch((e: unknown) => e)
    expect(viaB).toBeInstanceOf(ServiceError)
    expect((viaB as ServiceError).httpStatus).toBe(401)
    expect((viaB as ServiceError).message).toMatch(/sign in again/)
  })

  it('a session saved by another process is picked up from the token file', async () => {
    const user = await newUser(h)
    const a = h.client()
    await a.auth.login(user.email, user.password)
    const file = join(h.dir, 'shared-session.json')
    await writeFile(file, await readFile(a.options.tokenFile!), { mode: 0o600 })
    const b = h.client({ tokenFile: file })
    expect(await b.auth.isSignedIn()).toBe(true)
    await expect(b.transfers.inbox({ take: 1 })).resolves.toBeDefined()
  })

  it('says plainly that two-factor accounts are not supported yet', async () => {
    const user = await newUser(h, { twoFactor: true })
    const client = h.client()
    const err = await client.auth.login(user.email, user.password).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UnsupportedError)
    expect((err as Error).message).toMatch(/two-factor.*not support/)
    expect(await client.auth.isSignedIn()).toBe(false)
  })

  it('reports wrong credentials and a wrong API key in words a person can act on', async () => {
    const client = h.client()
    const wrong = await client.auth.login(h.user.email, 'not-the-password').catch((e: unknown) => e)
    expect((wrong as ServiceError).responsestatus).toBe('WrongUsernamePassword')
    expect((wrong as ServiceError).message).toMatch(/wrong e-mail address or password/)
    const badKey = h.client({ apiKey: 'not-a-key' })
    const err = await badKey.auth.login(h.user.email, h.user.password).catch((e: unknown) => e)
    expect((err as ServiceError).responsestatus).toBe('InvalidApikey')
    expect((err as ServiceError).message).toMatch(/API key/)
    expect((err as ServiceError).message).not.toContain('not-a-key')
  })

  it('does not repeat a sign-in that may have been served, but does retry a 503', async () => {
    const client = h.client({ retry: { baseDelayMs: 5, maxDelayMs: 20 } })
    await h.control('POST', '/counters/reset')
    await h.control('POST', '/faults', { route: 'login', kind: 'reset', count: 1, afterBytes: 0 })
    const err = await client.auth.login(h.user.email, h.user.password).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(NetworkError)
    expect((await h.counters()).routes.login).toBe(1)
    await h.control('POST', '/faults', { route: 'login', kind: 'status', status: 503, count: 2 })
    await client.auth.login(h.user.email, h.user.password)
    expect((await h.counters()).routes.login).toBe(4)
    await h.control('DELETE', '/faults')
  })
})
