import type { AccessTokens } from './access-tokens.js'
import type { Admission } from './admission.js'
import type { RequestBody, RequestContext, Result } from './beneficiary-service.js'
import { constantTimeEqual, randomToken, type Sha256 } from './crypto.js'
import {
  BadRequestError,
  InsufficientScopeError,
  InvalidCredentialsError,
  InvalidTokenError,
  ValidationError,
} from './errors.js'
import type { Clock } from './ports/clock.js'
import type { Storage } from './ports/storage.js'
import { bodyOf } from './request-body.js'
import type { RefreshResponse, TokenResponse } from './shapes.js'
import { parseLoginInput, parseRefreshInput } from './validation/index.js'

/** The settings of login sessions. */
export interface SessionSettings {
  readonly accessTokenTtlSeconds: number
  readonly refreshTokenTtlSeconds: number
}

/** The hash an unknown client id is compared with, so it costs the same as a wrong secret (D1). */
const NO_CLIENT_HASH = 'A'.repeat(43)
const REFRESH_REFUSED = 'The refresh token is invalid, expired or revoked.'

/** Login, refresh and logout (specification 4.2, D1–D5). */
export class SessionOperations {
  readonly #storage: Storage
  readonly #clock: Clock
  readonly #tokens: AccessTokens
  readonly #admission: Admission
  readonly #sha256: Sha256
  readonly #settings: SessionSettings

  constructor(
    storage: Storage,
    clock: Clock,
    tokens: AccessTokens,
    admission: Admission,
    hash: Sha256,
    settings: SessionSettings,
  ) {
    this.#storage = storage
    this.#clock = clock
    this.#tokens = tokens
    this.#admission = admission
    this.#sha256 = hash
    this.#settings = settings
  }

  login(ctx: RequestContext, body: RequestBody): Promise<Result<TokenResponse>> {
    return this.#admission.admitAnonymous('login', ctx, async ({ rateLimit }) => {
      const input = parseLoginInput(bodyOf(body))
      const client = await this.#storage.clients.get(input.client_id)
      const presented = await this.#sha256(input.client_secret)
      const matches = constantTimeEqual(presented, client?.secret_hash ?? NO_CLIENT_HASH)
      if (client === undefined || !matches || client.revoked_at !== null)
        throw new InvalidCredentialsError()
      const scopes = input.scope ?? client.scopes
      const missing = scopes.find((scope) => !client.scopes.includes(scope))
      if (missing !== undefined) throw new InsufficientScopeError(missing)

      const now = this.#clock.now()
      const sid = randomToken(16)
      const refreshToken = randomToken(32)
      await this.#storage.sessions.insert({
        id: sid,
        client_id: client.id,
        refresh_token_hash: await this.#sha256(refreshToken),
        scopes,
        created_at: now,
        expires_at: now + this.#settings.refreshTokenTtlSeconds * 1000,
        revoked_at: null,
      })
      const accessToken = await this.#tokens.issue({ clientId: client.id, scopes, sid })
      return {
        value: {
          access_token: accessToken,
          token_type: 'Bearer',
          expires_in: this.#settings.accessTokenTtlSeconds,
          refresh_token: refreshToken,
          scope: scopes.join(' '),
        },
        rateLimit,
        clientId: client.id,
      }
    })
  }

  refresh(ctx: RequestContext, body: RequestBody): Promise<Result<RefreshResponse>> {
    return this.#admission.admitAnonymous('refresh', ctx, async ({ rateLimit }) => {
      const input = parseRefreshInput(bodyOf(body))
      const session = await this.#storage.sessions.findByRefreshTokenHash(
        await this.#sha256(input.refresh_token),
      )
      const now = this.#clock.now()
      if (session === undefined || session.revoked_at !== null || now >= session.expires_at) {
        throw new InvalidTokenError(REFRESH_REFUSED)
      }
      const client = await this.#storage.clients.get(session.client_id)
      if (client === undefined || client.revoked_at !== null) {
        throw new InvalidTokenError(REFRESH_REFUSED)
      }
      if (input.client_id !== undefined || input.client_secret !== undefined) {
        const presented = await this.#sha256(input.client_secret ?? '')
        const matches = constantTimeEqual(presented, client.secret_hash)
        if (!matches || input.client_id !== client.id) throw new InvalidCredentialsError()
      }
      const accessToken = await this.#tokens.issue({
        clientId: client.id,
        scopes: session.scopes,
        sid: session.id,
      })
      return {
        value: {
          access_token: accessToken,
          token_type: 'Bearer',
          expires_in: this.#settings.accessTokenTtlSeconds,
        },
        rateLimit,
        clientId: client.id,
      }
    })
  }

  logout(ctx: RequestContext, body?: RequestBody): Promise<Result<null>> {
    return this.#admission.admit('logout', ctx, async ({ claims, rateLimit }) => {
      const input = bodyOf(body)
      if (input !== undefined && input !== null) {
        if (typeof input !== 'object' || Array.isArray(input))
          throw new BadRequestError('The body must be a JSON object.')
        const presented: unknown = (input as Record<string, unknown>)['refresh_token']
        if (presented !== undefined) {
          const session =
            typeof presented === 'string'
              ? await this.#storage.sessions.findByRefreshTokenHash(await this.#sha256(presented))
              : undefined
          if (session?.id !== claims.sid) {
            throw new ValidationError([
              { field: 'refresh_token', message: 'does not belong to this login session' },
            ])
          }
        }
      }
      await this.#storage.sessions.revoke(claims.sid, this.#clock.now(), {
        jti: claims.jti,
        expiresAt: claims.exp * 1000,
      })
      return { value: null, rateLimit, clientId: claims.clientId }
    })
  }
}
