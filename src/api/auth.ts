// Sign-in and the session: login, logout, and the logintoken every authorized call
// carries. When the service says the logintoken expired, exactly one refresh runs
// however many calls are in flight; the new tokens reach the token file before any
// call uses them, and each failed call is replayed once.
import type { ApiCaller } from './api-call.js'
import { NotSignedInError, ServiceError, UnsupportedError } from './errors.js'
import { API_PATH, LOGOUT_QUERY, SIGN_IN, STATUS } from './protocol.js'
import type { TokenStore, StoredSession } from './tokens.js'
import type { LoginResult, RefreshResult } from './types.js'

function isExpiredToken(err: unknown): boolean {
  return err instanceof ServiceError && err.httpStatus === STATUS.unauthorized && err.responsestatus === 'InvalidOrExpiredLoginToken'
}

export class Session {
  private current: StoredSession | null = null
  private loading: Promise<void> | null = null
  private refreshing: Promise<string> | null = null
  /** Refresh exchanges this process made (diagnostics and tests). */
  refreshCount = 0

  constructor(
    private readonly api: ApiCaller,
    private readonly store: TokenStore,
  ) {}

  private ensureLoaded(): Promise<void> {
    this.loading ??= this.store.load().then((s) => {
      // A session set by login() while loading wins over the file's older one.
      this.current ??= s
    })
    return this.loading
  }

  async isSignedIn(): Promise<boolean> {
    await this.ensureLoaded()
    return this.current !== null
  }

  /** E-mail of the signed-in account, when known. */
  async email(): Promise<string | null> {
    await this.ensureLoaded()
    return this.current?.email ?? null
  }

  async login(email: string, password: string, signal?: AbortSignal): Promise<LoginResult> {
    await this.ensureLoaded()
    const result = await this.api.callData<LoginResult>({
      operation: 'sign-in',
      method: 'POST',
      path: API_PATH.login,
      body: { email, password },
      idempotent: false,
      signal,
    })
    if (result.signInStatus === SIGN_IN.twoFactorRequired || (!result.logintoken && result.twoFactorToken)) {
      throw new UnsupportedError(
        `the account ${email} uses two-factor sign-in, which transferfs does not support yet; ` +
          'use an account without two-factor sign-in',
      )
    }
    if (result.signInStatus !== SIGN_IN.success || !result.logintoken || !result.refreshtoken) {
      throw new ServiceError(`sign-in failed: the service answered signInStatus ${result.signInStatus}`, STATUS.ok, null)
    }
    await this.adopt({
      email,
      logintoken: result.logintoken,
      logintokenExpireDate: result.logintokenExpireDate,
      refreshtoken: result.refreshtoken,
      savedAt: Date.now(),
    })
    return result
  }

  /**
   * End the session (this device, or every device of the account). The local session is
   * forgotten even when the service had already ended it.
   */
  async logout(options: { allDevices?: boolean; signal?: AbortSignal } = {}): Promise<void> {
    await this.ensureLoaded()
    if (!this.current) return
    try {
      await this.authorized((token) =>
        this.api.call<null>({
          operation: 'sign-out',
          method: 'POST',
          path: API_PATH.logout,
          query: { [LOGOUT_QUERY.allDevices]: options.allDevices },
          loginToken: token,
          idempotent: true,
          signal: options.signal,
        }),
      )
    } catch (err) {
      // A session the service no longer knows is as ended as it gets.
      if (!(err instanceof ServiceError && err.httpStatus === STATUS.unauthorized)) throw err
    }
    this.current = null
    await this.store.clear()
  }

  /** The current logintoken, or null when not signed in. */
  async loginToken(): Promise<string | null> {
    await this.ensureLoaded()
    return this.current?.logintoken ?? null
  }

  /**
   * Run `call` with the logintoken; if the service says it expired, renew it (one
   * refresh shared by every caller) and replay the call once.
   */
  async authorized<T>(call: (loginToken: string) => Promise<T>): Promise<T> {
    await this.ensureLoaded()
    const token = this.current?.logintoken
    if (!token) throw new NotSignedInError()
    try {
      return await call(token)
    } catch (err) {
      if (!isExpiredToken(err)) throw err
      const fresh = await this.renew(token)
      return call(fresh)
    }
  }

  /** Like authorized() when signed in; anonymous (token null) otherwise. */
  async optionallyAuthorized<T>(call: (loginToken: string | null) => Promise<T>): Promise<T> {
    await this.ensureLoaded()
    if (!this.current) return call(null)
    return this.authorized(call)
  }

  /** A logintoken newer than `stale`: the one another caller already obtained, or one refresh. */
  renew(stale: string): Promise<string> {
    if (this.current && this.current.logintoken !== stale) return Promise.resolve(this.current.logintoken)
    this.refreshing ??= this.exchange().finally(() => {
      this.refreshing = null
    })
    return this.refreshing
  }

  private async exchange(): Promise<string> {
    const session = this.current
    if (!session) throw new NotSignedInError()
    let result: RefreshResult
    try {
      this.refreshCount++
      result = await this.api.callData<RefreshResult>({
        operation: 'session renewal',
        method: 'POST',
        path: API_PATH.refresh,
        body: { refreshtoken: session.refreshtoken },
        // The refresh token dies when served: repeating a served call would fail anyway.
        idempotent: false,
      })
    } catch (err) {
      // Another process sharing the token file may have renewed first; use its tokens.
      if (err instanceof ServiceError && err.responsestatus === 'RefreshTokenAlreadyUsed') {
        const onDisk = await this.store.load()
        if (onDisk && onDisk.refreshtoken !== session.refreshtoken) {
          this.current = onDisk
          return onDisk.logintoken
        }
      }
      throw err
    }
    await this.adopt({
      email: session.email,
      logintoken: result.logintoken,
      logintokenExpireDate: result.logintokenExpireDate,
      refreshtoken: result.refreshtoken,
      savedAt: Date.now(),
    })
    return result.logintoken
  }

  /** The file first: a refresh token that only lived in memory would be lost in a crash. */
  private async adopt(session: StoredSession): Promise<void> {
    await this.store.save(session)
    this.current = session
  }

  /** Exchange a given refresh token directly (the `login --refresh` path and tests). */
  async exchangeRefreshToken(refreshtoken: string, signal?: AbortSignal): Promise<RefreshResult> {
    return this.api.callData<RefreshResult>({
      operation: 'session renewal',
      method: 'POST',
      path: API_PATH.refresh,
      body: { refreshtoken },
      idempotent: false,
      signal,
    })
  }

  /** Refresh token of the current session (tests of single use; never logged). */
  async currentRefreshToken(): Promise<string | null> {
    await this.ensureLoaded()
    return this.current?.refreshtoken ?? null
  }
}
