import type { AccessTokenClaims, AccessTokens } from './access-tokens.js'
import type { RequestContext, Result } from './beneficiary-service.js'
import {
  InsufficientScopeError,
  InvalidTokenError,
  isDomainError,
  type ErrorContext,
  type RateLimitStatus,
} from './errors.js'
import { OPERATIONS, type OperationName } from './operations.js'
import type { BeneficiaryRecord } from './beneficiary.js'
import type { TokenIdentity, TokenRead } from './ports/beneficiary-store.js'
import type { SessionStore } from './ports/session-store.js'
import type { RateLimiter } from './rate-limiter.js'

/** What an admitted request brings to an operation's work. */
export interface Admitted {
  /** The verified token's claims. */
  readonly claims: AccessTokenClaims
  readonly rateLimit: RateLimitStatus
}

/** What an admitted request for an operation that takes no token brings to its work. */
export interface AdmittedAnonymous {
  readonly rateLimit: RateLimitStatus
}

/**
 * Decides whether a request may proceed, by the operation's policy (`OPERATIONS`): verifies the
 * token, that its session belongs to its client (`sid` to `sub`, a forged pair being refused
 * even with the signing key), and that session, client and `jti` are not revoked (401), draws from the limit
 * class (429), checks that the token holds every scope the policy names (403, D2, D29), in
 * that order, then runs the operation's work. Any domain error is rethrown with the request's
 * rate-limit state and client attached.
 */
export class Admission {
  readonly #tokens: AccessTokens
  readonly #sessions: SessionStore
  readonly #limiter: RateLimiter

  constructor(tokens: AccessTokens, sessions: SessionStore, limiter: RateLimiter) {
    this.#tokens = tokens
    this.#sessions = sessions
    this.#limiter = limiter
  }

  /** Admits a request for an operation that needs a token, then runs `work`. */
  async admit<T>(
    operation: OperationName,
    ctx: RequestContext,
    work: (admitted: Admitted) => Promise<Result<T>>,
  ): Promise<Result<T>> {
    const claims = await this.#verify(ctx.token)
    if (!(await this.#sessions.isTokenActive(claims.sid, claims.jti, claims.clientId))) {
      throw revoked()
    }
    return this.#proceed(operation, claims, work)
  }

  /**
   * As `admit`, for work that starts from one read the storage answers together with the
   * token's check (`BeneficiaryStore.getForToken`): one round trip where there would be two.
   * The read comes before the limit and scope checks and is dropped when either refuses, so
   * refusals keep their order (401, 429, 403) and a refused request changes nothing.
   */
  async admitWithRead<T>(
    operation: OperationName,
    ctx: RequestContext,
    read: (token: TokenIdentity) => Promise<TokenRead>,
    work: (admitted: Admitted, record: BeneficiaryRecord | undefined) => Promise<Result<T>>,
  ): Promise<Result<T>> {
    const claims = await this.#verify(ctx.token)
    const found = await read({ sessionId: claims.sid, jti: claims.jti, clientId: claims.clientId })
    if (!found.active) throw revoked()
    return this.#proceed(operation, claims, (admitted) => work(admitted, found.record))
  }

  /** Admits a request for an operation open to anyone (login, refresh), keyed by `ctx.ip`. */
  async admitAnonymous<T>(
    operation: OperationName,
    ctx: RequestContext,
    work: (admitted: AdmittedAnonymous) => Promise<Result<T>>,
  ): Promise<Result<T>> {
    const rateLimit = await this.#limiter.take(
      OPERATIONS[operation].limitClass,
      ctx.ip ?? 'unknown',
    )
    return attachContext({ rateLimit }, () => work({ rateLimit }))
  }

  /** Checks the token's signature and claims; whether it is revoked is the caller's next step. */
  async #verify(token: string | undefined): Promise<AccessTokenClaims> {
    if (token === undefined || token.length === 0)
      throw new InvalidTokenError('A bearer token is required.')
    return this.#tokens.verify(token)
  }

  /** Draws from the limit class, checks the scopes, then runs `work` (the token is active). */
  async #proceed<T>(
    operation: OperationName,
    claims: AccessTokenClaims,
    work: (admitted: Admitted) => Promise<Result<T>>,
  ): Promise<Result<T>> {
    const policy = OPERATIONS[operation]
    const clientId = claims.clientId
    let rateLimit: RateLimitStatus
    try {
      rateLimit = await this.#limiter.take(policy.limitClass, clientId)
    } catch (error) {
      throw withContext(error, { clientId })
    }
    const required = policy.scopes
    return attachContext({ rateLimit, clientId }, () => {
      for (let i = 0; i < required.length; i++) {
        const scope = required[i]!
        if (!claims.scopes.includes(scope)) throw new InsufficientScopeError(scope)
      }
      return work({ claims, rateLimit })
    })
  }
}

function revoked(): InvalidTokenError {
  return new InvalidTokenError('The token has been revoked.')
}

async function attachContext<T>(context: ErrorContext, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    throw withContext(error, context)
  }
}

function withContext(error: unknown, context: ErrorContext): unknown {
  return isDomainError(error) ? error.withContext(context) : error
}
