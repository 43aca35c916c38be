import { SignJWT, errors, jwtVerify, type JWTPayload } from 'jose'
import { InvalidTokenError, TokenExpiredError } from './errors.js'
import { isCanonicalCompactJws } from './compact-jws.js'
import { importHmacKey, randomToken, type HmacKey } from './crypto.js'
import type { Clock } from './ports/clock.js'

/** The claims the core relies on, from a verified access token (D3). */
export interface AccessTokenClaims {
  /** `sub`: the client id. */
  readonly clientId: string
  readonly scopes: readonly string[]
  readonly jti: string
  /** The login session. */
  readonly sid: string
  /** `exp`, epoch seconds. */
  readonly exp: number
}

/** Settings of `AccessTokens`. */
export interface AccessTokenSettings {
  /** Signing and verification keys; the first one signs. */
  readonly keys: readonly { readonly kid: string; readonly secret: string }[]
  readonly issuer: string
  readonly audience: string
  readonly ttlSeconds: number
  readonly clockSkewSeconds: number
  /** Verified tokens remembered, so that repeat requests skip the HMAC. */
  readonly cacheSize: number
  /**
   * Reads the keys again, newest first, for keys kept in storage, which another process may
   * rotate: asked before signing once `reloadSeconds` have passed since the last read, and when
   * a token names a key not known here (at most once a second). Without it the keys are fixed.
   */
  readonly reload?:
    (() => Promise<readonly { readonly kid: string; readonly secret: string }[]>) | undefined
  /** How long the keys read are used before signing reads them again. */
  readonly reloadSeconds?: number | undefined
}

const TYP = 'at+jwt'
const ALG = 'HS256'
const REQUIRED_CLAIMS = ['iss', 'aud', 'sub', 'exp', 'iat', 'jti', 'sid', 'scope']

/**
 * Issues and verifies access tokens: HS256 pinned, `typ: at+jwt`, `kid` chosen from several
 * verification keys (D3). Time comes from the injected clock. Revocation is not checked here:
 * the caller asks the session store on every request, so that it always wins over the cache.
 */
export class AccessTokens {
  readonly #settings: AccessTokenSettings
  readonly #clock: Clock
  #keys: ReadonlyMap<string, HmacKey>
  #signingKid: string
  readonly #verified = new Map<string, AccessTokenClaims>()
  /** When the keys were last read (`reload`), and when a token last made them read again. */
  #loadedAt: number
  #unknownKidAt = -Infinity
  #reloading: Promise<void> | undefined

  private constructor(settings: AccessTokenSettings, clock: Clock, keys: Map<string, HmacKey>) {
    this.#settings = settings
    this.#clock = clock
    this.#keys = keys
    this.#signingKid = settings.keys[0]!.kid
    this.#loadedAt = clock.now()
  }

  /** Imports the keys once; verification then reuses them. */
  static async create(settings: AccessTokenSettings, clock: Clock): Promise<AccessTokens> {
    if (settings.keys.length === 0) throw new TypeError('at least one signing key is required')
    const keys = new Map<string, HmacKey>()
    for (const { kid, secret } of settings.keys) keys.set(kid, await importHmacKey(secret))
    return new AccessTokens(Object.freeze({ ...settings }), clock, keys)
  }

  /** A new signed access token for a client's login session. */
  async issue(input: {
    clientId: string
    scopes: readonly string[]
    sid: string
  }): Promise<string> {
    const reloadMs = (this.#settings.reloadSeconds ?? 60) * 1000
    if (this.#settings.reload !== undefined && this.#clock.now() - this.#loadedAt >= reloadMs) {
      await this.#reload()
    }
    const iat = Math.floor(this.#clock.now() / 1000)
    return new SignJWT({ scope: input.scopes.join(' '), sid: input.sid })
      .setProtectedHeader({ alg: ALG, typ: TYP, kid: this.#signingKid })
      .setIssuer(this.#settings.issuer)
      .setAudience(this.#settings.audience)
      .setSubject(input.clientId)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.#settings.ttlSeconds)
      .setJti(randomToken(16))
      .sign(this.#keys.get(this.#signingKid)!)
  }

  /**
   * Checks that the token is spelled in canonical base64url, then signature, algorithm, `typ`,
   * `iss`, `aud`, `exp`, `nbf` and that `iat` is not in the future (D3, D6).
   * @throws TokenExpiredError past `exp` plus the skew allowance; InvalidTokenError otherwise.
   */
  async verify(token: string): Promise<AccessTokenClaims> {
    const nowSeconds = Math.floor(this.#clock.now() / 1000)
    const cached = this.#verified.get(token)
    if (cached !== undefined) {
      // Only expiry depends on time once the signature and claims have been checked.
      if (cached.exp > nowSeconds - this.#settings.clockSkewSeconds) return cached
      this.#verified.delete(token)
      throw new TokenExpiredError()
    }
    const claims = await this.#verifyWithJose(token)
    if (this.#verified.size >= this.#settings.cacheSize) {
      // Maps iterate in insertion order: drop the oldest entry.
      this.#verified.delete(this.#verified.keys().next().value!)
    }
    this.#verified.set(token, claims)
    return claims
  }

  /**
   * Reads the keys again: the newest signs from now on, a retired one verifies no more. Calls
   * made meanwhile wait for the same read. A read that fails keeps the keys as they were.
   */
  #reload(): Promise<void> {
    this.#reloading ??= (async () => {
      try {
        const fresh = await this.#settings.reload!()
        if (fresh.length === 0) return
        const keys = new Map<string, HmacKey>()
        for (const { kid, secret } of fresh) {
          keys.set(kid, this.#keys.get(kid) ?? (await importHmacKey(secret)))
        }
        this.#keys = keys
        this.#signingKid = fresh[0]!.kid
      } catch {
        // The storage does not answer: the keys read before still hold; asked again later.
      } finally {
        this.#loadedAt = this.#clock.now()
        this.#reloading = undefined
      }
    })()
    return this.#reloading
  }

  async #verifyWithJose(token: string): Promise<AccessTokenClaims> {
    if (!isCanonicalCompactJws(token)) throw new InvalidTokenError()
    let payload: JWTPayload
    try {
      const result = await jwtVerify(
        token,
        async (header) => {
          if (header.kid === undefined) throw new InvalidTokenError('The token names no key.')
          let key = this.#keys.get(header.kid)
          // A key made since the last read, by a rotation: read them again, at most once a
          // second, so that made-up kids cannot make every request a read.
          const now = this.#clock.now()
          if (
            key === undefined &&
            this.#settings.reload !== undefined &&
            now - this.#unknownKidAt >= 1000
          ) {
            this.#unknownKidAt = now
            await this.#reload()
            key = this.#keys.get(header.kid)
          }
          if (key === undefined)
            throw new InvalidTokenError('The token was signed with an unknown key.')
          return key
        },
        {
          algorithms: [ALG],
          typ: TYP,
          issuer: this.#settings.issuer,
          audience: this.#settings.audience,
          clockTolerance: this.#settings.clockSkewSeconds,
          currentDate: new Date(this.#clock.now()),
          requiredClaims: REQUIRED_CLAIMS,
        },
      )
      payload = result.payload
    } catch (error) {
      if (error instanceof errors.JWTExpired) throw new TokenExpiredError({ cause: error })
      throw new InvalidTokenError(undefined, { cause: error })
    }
    const { sub, scope, jti, sid, exp, iat } = payload
    // jose checks `iat` only against a maximum age: a token issued in the future is refused here.
    const latestIat = Math.floor(this.#clock.now() / 1000) + this.#settings.clockSkewSeconds
    if (
      typeof sub !== 'string' ||
      typeof scope !== 'string' ||
      typeof jti !== 'string' ||
      typeof sid !== 'string' ||
      typeof exp !== 'number' ||
      typeof iat !== 'number' ||
      iat > latestIat
    ) {
      throw new InvalidTokenError()
    }
    return Object.freeze({ clientId: sub, scopes: Object.freeze(scope.split(' ')), jti, sid, exp })
  }
}
