import { AccessTokens, type AccessTokenClaims } from './access-tokens.js'
import {
  WRITABLE_FIELDS,
  type BeneficiaryFields,
  type BeneficiaryRecord,
  type BeneficiaryStatus,
  type FieldChange,
  type HistoryAction,
  type HistoryEntry,
} from './beneficiary.js'
import type {
  BeneficiaryService,
  ClientAdmin,
  QueryInput,
  RequestContext,
  Result,
} from './beneficiary-service.js'
import { canonicalJson } from './canonical-json.js'
import { base64urlByteLength, constantTimeEqual, randomToken, sha256 } from './crypto.js'
import {
  BadRequestError,
  IdempotencyKeyReusedError,
  InsufficientScopeError,
  InvalidCredentialsError,
  InvalidTokenError,
  InvalidTransitionError,
  NotFoundError,
  PreconditionFailedError,
  ValidationError,
  isDomainError,
  type RateLimitStatus,
} from './errors.js'
import { etagOf, ifMatchAdmits } from './etag.js'
import { pageOf } from './pagination.js'
import type { Clock } from './ports/clock.js'
import type { SigningKey } from './ports/signing-key-store.js'
import type { Storage } from './ports/storage.js'
import { RateLimiter, type LimitClass, type RateLimitOptions } from './rate-limiter.js'
import { createdOf, detailOf, historyItemOf, listItemOf } from './representation.js'
import { DAY_MS, isoTime } from './time.js'
import { searchTerms } from './search-terms.js'
import type {
  ClientInfo,
  HistoryItem,
  Paged,
  ProvisionedClient,
  RefreshResponse,
  TokenResponse,
} from './shapes.js'
import type { BeneficiaryCreated, BeneficiaryDetail, BeneficiaryListItem } from './beneficiary.js'
import { systemClock } from './system-clock.js'
import {
  fiscalCodeBirthDateProblem,
  parseCreateInput,
  parseHistoryQuery,
  parseListQuery,
  parseLoginInput,
  parseRefreshInput,
  parseStatusInput,
  parseUpdateInput,
  type BeneficiaryPatch,
} from './validation/index.js'

/** A key for signing and verifying access tokens (D3). */
export interface AccessTokenKey {
  /** Key id, written into each token's `kid` header. */
  readonly kid: string
  /** At least 32 random bytes, base64url. */
  readonly secret: string
}

/** Options of `createBeneficiaryService`. Only `storage` is required. */
export interface BeneficiaryServiceOptions {
  /** Where everything is kept; the caller owns it and closes it. */
  readonly storage: Storage
  /** Where time comes from. Default: the system clock. Tests pass a `FakeClock`. */
  readonly clock?: Clock
  /**
   * Access-token keys; the first one signs, all of them verify (rotate by prepending a new key).
   * Default: keys kept in `storage.signingKeys`, one generated on first start (D3).
   */
  readonly keys?: readonly AccessTokenKey[]
  /** `iss` of access tokens. Default `beneficiary-service`. */
  readonly issuer?: string
  /** `aud` of access tokens. Default `beneficiary-service`. */
  readonly audience?: string
  /** Access-token lifetime. Default 3600 (specification 5.5). */
  readonly accessTokenTtlSeconds?: number
  /** Refresh-token lifetime. Default 30 days (D4). */
  readonly refreshTokenTtlSeconds?: number
  /** Clock-skew allowance when checking `exp` and `nbf`, 0–30. Default 5 (D3). */
  readonly clockSkewSeconds?: number
  /** How long an Idempotency-Key is remembered. Default 24 hours (D22). */
  readonly idempotencyTtlSeconds?: number
  /** Limits per class (D19). Default 5 auth, 10 write, 100 standard per minute. */
  readonly limits?: RateLimitOptions
  /** Prefix of the paths in pagination links. Default `/v3` (specification 9). */
  readonly basePath?: string
  /** Verified access tokens remembered to skip repeated HMAC checks. Default 10,000. */
  readonly tokenCacheSize?: number
  /**
   * SHA-256 of a UTF-8 string, base64url without padding: hashes secrets, refresh tokens and
   * Idempotency-Key bodies. Default: Web Crypto, which is asynchronous and so costs a trip to a
   * worker thread per call; on Node.js pass `nodeSha256` from `beneficiary-service/server`.
   */
  readonly sha256?: (text: string) => string | Promise<string>
}

const SCOPES = ['read', 'write'] as const
const MAX_UPDATE_ATTEMPTS = 8
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/
const ID = /^[1-9][0-9]{0,15}$/
const TRANSITIONS: Readonly<Record<BeneficiaryStatus, readonly BeneficiaryStatus[]>> = {
  pending: ['active', 'inactive'],
  active: ['inactive'],
  inactive: ['active'],
}

/**
 * Creates the beneficiary service on a storage: every operation of the /v3 API as a method,
 * framework-free. Host applications call it in-process; the HTTP server only translates it.
 *
 * @example
 * const storage = new MemoryStorage()
 * const service = await createBeneficiaryService({ storage, clock: new FakeClock() })
 * const { client_id, client_secret } = await service.clients.create({ name: 'ops', scopes: ['read', 'write'] })
 * const { value: tokens } = await service.login({ ip: '127.0.0.1' }, { client_id, client_secret })
 * const { value: created } = await service.create({ token: tokens.access_token }, {
 *   first_name: 'Maria', last_name: 'Rossi', email: 'maria.rossi@example.org',
 * })
 *
 * @throws TypeError when an option is out of range.
 */
export async function createBeneficiaryService(
  options: BeneficiaryServiceOptions,
): Promise<BeneficiaryService> {
  const clock = options.clock ?? systemClock
  const settings = {
    issuer: options.issuer ?? 'beneficiary-service',
    audience: options.audience ?? 'beneficiary-service',
    accessTokenTtlSeconds: positiveInteger(
      'accessTokenTtlSeconds',
      options.accessTokenTtlSeconds ?? 3600,
    ),
    refreshTokenTtlSeconds: positiveInteger(
      'refreshTokenTtlSeconds',
      options.refreshTokenTtlSeconds ?? 30 * 86_400,
    ),
    idempotencyTtlSeconds: positiveInteger(
      'idempotencyTtlSeconds',
      options.idempotencyTtlSeconds ?? 86_400,
    ),
    clockSkewSeconds: options.clockSkewSeconds ?? 5,
    basePath: (options.basePath ?? '/v3').replace(/\/+$/, ''),
  }
  if (
    !Number.isInteger(settings.clockSkewSeconds) ||
    settings.clockSkewSeconds < 0 ||
    settings.clockSkewSeconds > 30
  ) {
    throw new TypeError('clockSkewSeconds must be an integer from 0 to 30')
  }
  if (settings.basePath !== '' && !settings.basePath.startsWith('/')) {
    throw new TypeError("basePath must start with '/'")
  }
  const keys = options.keys ?? (await storedKeys(options.storage, clock))
  for (const key of keys) {
    if (key.kid.length === 0 || base64urlByteLength(key.secret) < 32) {
      throw new TypeError('each key needs a kid and a base64url secret of at least 32 bytes')
    }
  }
  const tokens = await AccessTokens.create(
    {
      keys,
      issuer: settings.issuer,
      audience: settings.audience,
      ttlSeconds: settings.accessTokenTtlSeconds,
      clockSkewSeconds: settings.clockSkewSeconds,
      cacheSize: positiveInteger('tokenCacheSize', options.tokenCacheSize ?? 10_000),
    },
    clock,
  )
  const limiter = new RateLimiter(options.limits ?? {}, clock)
  const hash = options.sha256 ?? sha256
  return new Service(options.storage, clock, tokens, limiter, hash, Object.freeze(settings))
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new TypeError(`${name} must be a positive integer`)
  return value
}

async function storedKeys(storage: Storage, clock: Clock): Promise<AccessTokenKey[]> {
  let stored = await storage.signingKeys.list()
  if (stored.length === 0) {
    // A fixed kid: two processes starting at once on a new database insert the same kid, the
    // store keeps the first, and both sign with it (a random kid each left one refusing the
    // other's tokens).
    const key: SigningKey = {
      kid: GENERATED_KID,
      secret: randomToken(32),
      created_at: clock.now(),
    }
    await storage.signingKeys.insert(key)
    // Another process may have won the race: whatever is stored now is the truth.
    stored = await storage.signingKeys.list()
  }
  return [...stored].reverse().map(({ kid, secret }) => ({ kid, secret }))
}

/** The kid of the key a service generates for itself when the storage has none (D3). */
const GENERATED_KID = 'generated-1'

/** The hash an unknown client id is compared with, so it costs the same as a wrong secret (D1). */
const NO_CLIENT_HASH = 'A'.repeat(43)

type Hash = (text: string) => string | Promise<string>

type Settings = {
  readonly issuer: string
  readonly audience: string
  readonly accessTokenTtlSeconds: number
  readonly refreshTokenTtlSeconds: number
  readonly idempotencyTtlSeconds: number
  readonly clockSkewSeconds: number
  readonly basePath: string
}

interface Admitted {
  readonly claims: AccessTokenClaims
  readonly rateLimit: RateLimitStatus
}

class Service implements BeneficiaryService {
  readonly #storage: Storage
  readonly #clock: Clock
  readonly #tokens: AccessTokens
  readonly #limiter: RateLimiter
  readonly #settings: Settings
  readonly #sha256: Hash
  readonly clients: ClientAdmin

  constructor(
    storage: Storage,
    clock: Clock,
    tokens: AccessTokens,
    limiter: RateLimiter,
    hash: Hash,
    settings: Settings,
  ) {
    this.#storage = storage
    this.#clock = clock
    this.#tokens = tokens
    this.#limiter = limiter
    this.#sha256 = hash
    this.#settings = settings
    this.clients = new Clients(storage, clock, hash)
  }

  ready(): Promise<void> {
    return this.#storage.ping()
  }

  async login(ctx: RequestContext, body: unknown): Promise<Result<TokenResponse>> {
    const rateLimit = await this.#limiter.take('auth', ctx.ip ?? 'unknown')
    return withRateLimit(rateLimit, undefined, async () => {
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

  async refresh(ctx: RequestContext, body: unknown): Promise<Result<RefreshResponse>> {
    const rateLimit = await this.#limiter.take('auth', ctx.ip ?? 'unknown')
    return withRateLimit(rateLimit, undefined, async () => {
      const input = parseRefreshInput(bodyOf(body))
      const session = await this.#storage.sessions.findByRefreshTokenHash(
        await this.#sha256(input.refresh_token),
      )
      const now = this.#clock.now()
      if (session === undefined || session.revoked_at !== null || now >= session.expires_at) {
        throw new InvalidTokenError('The refresh token is invalid, expired or revoked.')
      }
      const client = await this.#storage.clients.get(session.client_id)
      if (client === undefined || client.revoked_at !== null) {
        throw new InvalidTokenError('The refresh token is invalid, expired or revoked.')
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

  async logout(ctx: RequestContext, body?: unknown): Promise<Result<null>> {
    return this.#admit(ctx, undefined, 'standard', async ({ claims, rateLimit }) => {
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
              { field: 'refresh_token', message: 'does not belong to this session' },
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

  async list(ctx: RequestContext, query: QueryInput): Promise<Result<Paged<BeneficiaryListItem>>> {
    return this.#admit(ctx, 'read', 'standard', async ({ claims, rateLimit }) => {
      const params = parseListQuery(query)
      const page = await this.#storage.beneficiaries.list({
        offset: (params.page - 1) * params.perPage,
        limit: params.perPage,
        sort: params.sort,
        descending: params.descending,
        ...(params.status !== undefined && { status: params.status }),
        ...(params.createdFrom !== undefined && { createdFrom: Date.parse(params.createdFrom) }),
        ...(params.createdTo !== undefined && {
          createdBefore: Date.parse(params.createdTo) + DAY_MS,
        }),
        ...(params.search !== undefined && { search: searchTerms(params.search) }),
      })
      const { meta, links } = pageOf(
        `${this.#settings.basePath}/beneficiaries`,
        params.page,
        params.perPage,
        page.total,
        [
          ['search', params.search],
          ['status', params.status],
          ['created_from', params.createdFrom],
          ['created_to', params.createdTo],
          ['sort', params.sortParam],
        ],
      )
      return {
        value: { data: page.items.map(listItemOf), meta, links },
        rateLimit,
        clientId: claims.clientId,
      }
    })
  }

  async get(ctx: RequestContext, id: string | number): Promise<Result<BeneficiaryDetail>> {
    return this.#admit(ctx, 'read', 'standard', async ({ claims, rateLimit }) => {
      const record = await this.#find(id)
      return detailResult(record, claims, rateLimit)
    })
  }

  async create(ctx: RequestContext, body: unknown): Promise<Result<BeneficiaryCreated>> {
    return this.#admit(ctx, 'write', 'write', async ({ claims, rateLimit }) => {
      const key = ctx.idempotencyKey
      if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
        throw new ValidationError([
          { field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' },
        ])
      }
      const now = this.#clock.now()
      const fields = parseCreateInput(bodyOf(body), isoTime(now).slice(0, 10))
      const entry = this.#entry(ctx, claims, now, 'created', [
        ...changesBetween(undefined, fields),
        { field: 'status', old: null, new: 'pending' },
      ])
      const claim =
        key === undefined
          ? undefined
          : {
              clientId: claims.clientId,
              key,
              fingerprint: await this.#sha256(canonicalJson(fields)),
              expiresAt: now + this.#settings.idempotencyTtlSeconds * 1000,
              now,
            }
      const outcome = await this.#storage.beneficiaries.create(
        { ...fields, status: 'pending', created_at: now, updated_at: now },
        entry,
        claim,
      )
      if (outcome.kind === 'created') {
        const { record } = outcome
        return {
          value: createdOf(record.id, record, record.created_at),
          etag: etagOf(record.version),
          rateLimit,
          clientId: claims.clientId,
        }
      }
      if (outcome.fingerprint !== claim?.fingerprint) throw new IdempotencyKeyReusedError()
      // Same key, same body: the original 201 again. Its fields are this request's, by the fingerprint.
      return {
        value: createdOf(outcome.beneficiaryId, fields, outcome.createdAt),
        replayed: true,
        rateLimit,
        clientId: claims.clientId,
      }
    })
  }

  async update(
    ctx: RequestContext,
    id: string | number,
    body: unknown,
  ): Promise<Result<BeneficiaryDetail>> {
    return this.#admit(ctx, 'write', 'write', async ({ claims, rateLimit }) => {
      const beneficiaryId = parseId(id)
      const patch = parseUpdateInput(bodyOf(body), isoTime(this.#clock.now()).slice(0, 10))
      const record = await this.#change(ctx, claims, beneficiaryId, 'updated', (current) => {
        const next = applyPatch(current, patch)
        if (
          next.fiscal_code !== null &&
          next.date_of_birth !== null &&
          (patch.fiscal_code !== undefined || patch.date_of_birth !== undefined)
        ) {
          const problem = fiscalCodeBirthDateProblem(next.fiscal_code, next.date_of_birth)
          if (problem !== undefined) throw new ValidationError([problem])
        }
        return { next, changes: changesBetween(current, next) }
      })
      return detailResult(record, claims, rateLimit)
    })
  }

  async setStatus(
    ctx: RequestContext,
    id: string | number,
    body: unknown,
  ): Promise<Result<BeneficiaryDetail>> {
    return this.#admit(ctx, 'write', 'write', async ({ claims, rateLimit }) => {
      const beneficiaryId = parseId(id)
      const input = parseStatusInput(bodyOf(body))
      const record = await this.#change(ctx, claims, beneficiaryId, 'status_changed', (current) => {
        // Nothing moves a beneficiary back to pending, not even from pending (D14).
        if (input.status === 'pending')
          throw new InvalidTransitionError(current.status, input.status)
        if (input.status === current.status) return { next: current, changes: [] }
        if (!TRANSITIONS[current.status].includes(input.status)) {
          throw new InvalidTransitionError(current.status, input.status)
        }
        const changes: FieldChange[] = [{ field: 'status', old: current.status, new: input.status }]
        if (input.reason !== undefined)
          changes.push({ field: 'reason', old: null, new: input.reason })
        return { next: { ...current, status: input.status }, changes }
      })
      return detailResult(record, claims, rateLimit)
    })
  }

  async remove(ctx: RequestContext, id: string | number): Promise<Result<null>> {
    return this.#admit(ctx, 'write', 'write', async ({ claims, rateLimit }) => {
      let expectedVersion: number | undefined
      if (ctx.ifMatch !== undefined) {
        const current = await this.#find(id)
        if (!ifMatchAdmits(ctx.ifMatch, etagOf(current.version)))
          throw new PreconditionFailedError()
        expectedVersion = current.version
      }
      const entry = this.#entry(ctx, claims, this.#clock.now(), 'deleted', [])
      const outcome = await this.#storage.beneficiaries.remove(parseId(id), expectedVersion, entry)
      if (outcome === 'missing') throw new NotFoundError('The beneficiary was not found.')
      if (outcome === 'conflict') throw new PreconditionFailedError()
      return { value: null, rateLimit, clientId: claims.clientId }
    })
  }

  async history(
    ctx: RequestContext,
    id: string | number,
    query: QueryInput,
  ): Promise<Result<Paged<HistoryItem>>> {
    return this.#admit(ctx, 'read', 'standard', async ({ claims, rateLimit }) => {
      const beneficiaryId = parseId(id)
      const params = parseHistoryQuery(query)
      const page = await this.#storage.beneficiaries.history(
        beneficiaryId,
        (params.page - 1) * params.perPage,
        params.perPage,
      )
      if (page === undefined) throw new NotFoundError('The beneficiary was not found.')
      const path = `${this.#settings.basePath}/beneficiaries/${beneficiaryId}/history`
      const { meta, links } = pageOf(path, params.page, params.perPage, page.total)
      return {
        value: { data: page.items.map(historyItemOf), meta, links },
        rateLimit,
        clientId: claims.clientId,
      }
    })
  }

  /**
   * Authenticates (401), draws from the limit class (429), checks the scope (403), then runs `work`,
   * attaching the rate-limit state and the client to any domain error it throws.
   */
  async #admit<T>(
    ctx: RequestContext,
    scope: 'read' | 'write' | undefined,
    limitClass: LimitClass,
    work: (admitted: Admitted) => Promise<Result<T>>,
  ): Promise<Result<T>> {
    const claims = await this.#authenticate(ctx.token)
    let rateLimit: RateLimitStatus
    try {
      rateLimit = await this.#limiter.take(limitClass, claims.clientId)
    } catch (error) {
      if (isDomainError(error)) error.clientId = claims.clientId
      throw error
    }
    return withRateLimit(rateLimit, claims.clientId, () => {
      if (scope !== undefined && !claims.scopes.includes(scope))
        throw new InsufficientScopeError(scope)
      return work({ claims, rateLimit })
    })
  }

  async #authenticate(token: string | undefined): Promise<AccessTokenClaims> {
    if (token === undefined || token.length === 0)
      throw new InvalidTokenError('A bearer token is required.')
    const claims = await this.#tokens.verify(token)
    if (!(await this.#storage.sessions.isTokenActive(claims.sid, claims.jti))) {
      throw new InvalidTokenError('The token has been revoked.')
    }
    return claims
  }

  async #find(id: string | number): Promise<BeneficiaryRecord> {
    const record = await this.#storage.beneficiaries.get(parseId(id))
    if (record === undefined) throw new NotFoundError('The beneficiary was not found.')
    return record
  }

  /**
   * Reads, decides and writes with compare-and-swap on the version, so that two racing changes
   * never lose one another: a write that lost the race is decided again on the fresh record,
   * unless the caller pinned the version with If-Match (then it is a 412).
   */
  async #change(
    ctx: RequestContext,
    claims: AccessTokenClaims,
    id: number,
    action: HistoryAction,
    decide: (current: BeneficiaryRecord) => { next: BeneficiaryRecord; changes: FieldChange[] },
  ): Promise<BeneficiaryRecord> {
    for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
      const current = await this.#find(id)
      if (ctx.ifMatch !== undefined && !ifMatchAdmits(ctx.ifMatch, etagOf(current.version))) {
        throw new PreconditionFailedError()
      }
      const { next, changes } = decide(current)
      if (changes.length === 0) return current
      const now = this.#clock.now()
      // Any change moves updated_at (D11), even when the clock has not moved since the last one.
      const updated = {
        ...next,
        updated_at: Math.max(now, current.updated_at + 1),
        version: current.version + 1,
      }
      const outcome = await this.#storage.beneficiaries.update(
        current,
        updated,
        this.#entry(ctx, claims, now, action, changes),
      )
      if (outcome === 'done') return updated
      if (outcome === 'missing') throw new NotFoundError('The beneficiary was not found.')
      if (ctx.ifMatch !== undefined) throw new PreconditionFailedError()
    }
    throw new Error('the beneficiary kept changing during the update')
  }

  #entry(
    ctx: RequestContext,
    claims: AccessTokenClaims,
    at: number,
    action: HistoryAction,
    changes: readonly FieldChange[],
  ): HistoryEntry {
    return {
      at,
      action,
      client_id: claims.clientId,
      request_id: ctx.requestId ?? randomToken(12),
      changes,
    }
  }
}

class Clients implements ClientAdmin {
  readonly #storage: Storage
  readonly #clock: Clock
  readonly #sha256: Hash

  constructor(storage: Storage, clock: Clock, hash: Hash) {
    this.#storage = storage
    this.#clock = clock
    this.#sha256 = hash
  }

  async create(input: { name: string; scopes: readonly string[] }): Promise<ProvisionedClient> {
    const name = typeof input.name === 'string' ? input.name.trim() : ''
    const problems = []
    if (name.length === 0 || name.length > 100)
      problems.push({ field: 'name', message: 'must be 1 to 100 characters' })
    const scopes = [...new Set(input.scopes)]
    if (
      scopes.length === 0 ||
      !scopes.every((scope) => (SCOPES as readonly string[]).includes(scope))
    ) {
      problems.push({ field: 'scopes', message: "must be one or more of 'read' and 'write'" })
    }
    if (problems.length > 0) throw new ValidationError(problems)
    const clientId = `cl_${randomToken(12)}`
    const secret = randomToken(32)
    await this.#storage.clients.insert({
      id: clientId,
      name,
      secret_hash: await this.#sha256(secret),
      scopes,
      created_at: this.#clock.now(),
      revoked_at: null,
    })
    return { client_id: clientId, client_secret: secret, scopes }
  }

  async list(): Promise<readonly ClientInfo[]> {
    const clients = await this.#storage.clients.list()
    return clients.map((client) => ({
      client_id: client.id,
      name: client.name,
      scopes: client.scopes,
      created_at: isoTime(client.created_at),
      revoked_at: client.revoked_at === null ? null : isoTime(client.revoked_at),
    }))
  }

  revoke(clientId: string): Promise<boolean> {
    return this.#storage.clients.revoke(clientId, this.#clock.now())
  }
}

/** Runs `work`, stamping the request's rate-limit state and client on any domain error it throws. */
async function withRateLimit<T>(
  rateLimit: RateLimitStatus,
  clientId: string | undefined,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (isDomainError(error)) {
      error.rateLimit ??= rateLimit
      error.clientId ??= clientId
    }
    throw error
  }
}

/** The detail shape of `record` with its ETag, as get, update and status changes answer. */
function detailResult(
  record: BeneficiaryRecord,
  claims: AccessTokenClaims,
  rateLimit: RateLimitStatus,
): Result<BeneficiaryDetail> {
  return {
    value: detailOf(record),
    etag: etagOf(record.version),
    rateLimit,
    clientId: claims.clientId,
  }
}

/** The body itself, or what its parser returns: servers defer parsing until a request is admitted. */
function bodyOf(body: unknown): unknown {
  return typeof body === 'function' ? (body as () => unknown)() : body
}

/** An id from a path: a positive integer in range, else the resource cannot exist (D12). */
function parseId(id: string | number): number {
  const value = typeof id === 'number' ? id : ID.test(id) ? Number(id) : NaN
  if (!Number.isSafeInteger(value) || value < 1)
    throw new NotFoundError('The beneficiary was not found.')
  return value
}

function applyPatch(current: BeneficiaryRecord, patch: BeneficiaryPatch): BeneficiaryRecord {
  const next: Record<string, unknown> = { ...current }
  for (const field of WRITABLE_FIELDS) {
    if (patch[field] !== undefined) next[field] = patch[field]
  }
  return next as unknown as BeneficiaryRecord
}

/** The writable fields that differ, with old and new values (D27); `before` absent for a create. */
function changesBetween(
  before: BeneficiaryFields | undefined,
  after: BeneficiaryFields,
): FieldChange[] {
  const changes: FieldChange[] = []
  for (const field of WRITABLE_FIELDS) {
    const old = before === undefined ? emptyValue(field) : before[field]
    const value = after[field]
    if (!sameValue(old, value)) changes.push({ field, old, new: value })
  }
  return changes
}

/** Equal field values: strings and `null` as they are, `address` and `metadata` by their JSON. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  return canonicalJson(a) === canonicalJson(b)
}

function emptyValue(field: keyof BeneficiaryFields): unknown {
  return field === 'metadata' ? {} : null
}
