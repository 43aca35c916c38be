import type { RefreshResponse, TokenResponse } from '../core/index.js'
import { isApiError } from './api-error.js'

/** Why the client fetched a token: it had none, its token was about to expire, or the server refused it. */
export type TokenReason = 'initial' | 'expiring' | 'rejected'

/** How the keeper gets tokens: the client's login and refresh calls. */
export interface TokenSource {
  /** Whether the client holds credentials to log in with. */
  canLogin(): boolean
  /** Logs in with the client's credentials; a TypeError when it has none. */
  login(): Promise<TokenResponse>
  refresh(refreshToken: string): Promise<RefreshResponse>
  /** Told before each login or refresh the keeper starts. */
  starting(action: 'login' | 'refresh', reason: TokenReason): void
}

/**
 * The client's access and refresh tokens. A token is renewed before it expires (a margin ahead,
 * by the client's clock) and once after the server refuses it; concurrent requests share one
 * renewal. A refresh token the server no longer takes (30 days old, its session logged out, its
 * client revoked) leads to one login with the credentials, never to a loop.
 */
export class TokenKeeper {
  readonly #source: TokenSource
  readonly #now: () => number
  readonly #marginMs: number
  #access: string | undefined
  #refresh: string | undefined
  #renewAt = 0
  #flight: Promise<string> | undefined

  constructor(source: TokenSource, now: () => number, marginMs: number) {
    this.#source = source
    this.#now = now
    this.#marginMs = marginMs
  }

  /** The refresh token from the last login, if any. */
  get refreshToken(): string | undefined {
    return this.#refresh
  }

  /** Keeps a token set; a refresh answer keeps the refresh token from the login (D4). */
  store(tokens: TokenResponse | RefreshResponse): void {
    this.#access = tokens.access_token
    if ('refresh_token' in tokens) this.#refresh = tokens.refresh_token
    const lifetimeMs = tokens.expires_in * 1000
    this.#renewAt = this.#now() + lifetimeMs - Math.min(this.#marginMs, lifetimeMs / 2)
  }

  /** Drops both tokens (after a logout). */
  forget(): void {
    this.#access = undefined
    this.#refresh = undefined
  }

  /** The token to send: the current one, or a new one when there is none or it is about to expire. */
  token(): Promise<string> {
    if (this.#flight !== undefined) return this.#flight
    if (this.#access === undefined) return this.#start('initial')
    if (this.#now() >= this.#renewAt) return this.#start('expiring')
    return Promise.resolve(this.#access)
  }

  /** A token to replace `rejected`: a new one, unless another request has renewed it already. */
  renew(rejected: string): Promise<string> {
    if (this.#flight !== undefined) return this.#flight
    if (this.#access !== undefined && this.#access !== rejected)
      return Promise.resolve(this.#access)
    return this.#start('rejected')
  }

  #start(reason: TokenReason): Promise<string> {
    const flight = this.#obtain(reason).finally(() => {
      if (this.#flight === flight) this.#flight = undefined
    })
    this.#flight = flight
    return flight
  }

  async #obtain(reason: TokenReason): Promise<string> {
    const refreshToken = this.#refresh
    if (refreshToken !== undefined) {
      try {
        this.#source.starting('refresh', reason)
        const tokens = await this.#source.refresh(refreshToken)
        this.store(tokens)
        return tokens.access_token
      } catch (error) {
        if (!isApiError(error) || error.status !== 401 || !this.#source.canLogin()) throw error
        this.#refresh = undefined
      }
    }
    this.#source.starting('login', reason)
    const tokens = await this.#source.login()
    this.store(tokens)
    return tokens.access_token
  }
}
