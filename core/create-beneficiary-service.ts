import {
  AccessLogOperations,
  type AccessLogItem,
  type BeneficiaryExport,
} from './access-log-operations.js'
import { AccessRecorder } from './access-recorder.js'
import { AccessTokens } from './access-tokens.js'
import { Admission } from './admission.js'
import { BeneficiaryOperations } from './beneficiary-operations.js'
import {
  BulkOperations,
  ImportOperations,
  MAX_IMPORT_ROWS,
  type ImportJobReport,
  type ImportJobView,
  type ImportUpload,
  type RecordExport,
} from './bulk-operations.js'
import type {
  BeneficiaryCreated,
  BeneficiaryDetail,
  BeneficiaryListItem,
  CreateBeneficiaryBody,
  UpdateBeneficiaryBody,
} from './beneficiary.js'
import type {
  BeneficiaryService,
  ClientAdmin,
  MatchCandidateBody,
  QueryInput,
  RequestBody,
  RequestContext,
  Result,
} from './beneficiary-service.js'
import { createClientAdmin } from './client-admin.js'
import { EventFeed, type ChangeEventPage, type EventsQueryInput } from './events.js'
import { sha256, type Sha256 } from './crypto.js'
import type { SerializedJson } from './json-bytes.js'
import type { Clock } from './ports/clock.js'
import type { Storage } from './ports/storage.js'
import { RateLimiter, type RateLimitOptions } from './rate-limiter.js'
import { SessionOperations } from './session-operations.js'
import type { HistoryItem, Paged, RefreshResponse, TokenResponse } from './shapes.js'
import {
  checkSigningKeys,
  KEY_RELOAD_SECONDS,
  loadSigningKeys,
  type AccessTokenKey,
} from './signing-keys.js'
import { systemClock } from './system-clock.js'
import { MatchOperations, type MatchList } from './matching/match-operations.js'
import { DEFAULT_MATCH_RULES, type MatchRules } from './matching/match-rules.js'
import type { LoginBody, LogoutBody, RefreshBody } from './validation/auth-schemas.js'
import type { StatusBody } from './validation/beneficiary-schemas.js'
import type { HistoryQueryInput, ListQueryInput } from './validation/query-schemas.js'

export type { AccessTokenKey } from './signing-keys.js'

/** Options of `createBeneficiaryService`. Only `storage` is required. */
export interface BeneficiaryServiceOptions {
  /** Where everything is kept; the caller owns it and closes it. */
  readonly storage: Storage
  /** Where time comes from. Default: the system clock. Tests pass a `FakeClock`. */
  readonly clock?: Clock
  /**
   * Access-token keys; the first one signs, all of them verify (rotate by prepending a new key).
   * Default: keys kept in `storage.signingKeys`, one generated on first start (D3), read again
   * every `KEY_RELOAD_SECONDS` and for a token with an unknown kid, so that `rotateSigningKey`
   * reaches a running service; a replaced key verifies until no live token can carry it.
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
  /** The most rows an import job may have (D39). Default 1,000,000. */
  readonly maxImportRows?: number
  /**
   * SHA-256 of a UTF-8 string, base64url without padding: hashes secrets, refresh tokens and
   * Idempotency-Key bodies. Default: Web Crypto, which is asynchronous and so costs a trip to a
   * worker thread per call; on Node.js pass `nodeSha256` from `beneficiary-service/server`.
   */
  readonly sha256?: Sha256
  /**
   * The rules of duplicate matching (D38), from `parseMatchRules`. Default: the rule set of
   * `default-match-rules.json`.
   */
  readonly matchRules?: MatchRules
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
  const { storage } = options
  const clock = options.clock ?? systemClock
  const hash = options.sha256 ?? sha256
  const settings = Object.freeze({
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
    clockSkewSeconds: clockSkew(options.clockSkewSeconds ?? 5),
    basePath: basePath(options.basePath ?? '/v3'),
  })
  const tokenCacheSize = positiveInteger('tokenCacheSize', options.tokenCacheSize ?? 10_000)
  const limiter = new RateLimiter(options.limits ?? {}, clock)
  const window = {
    ttlSeconds: settings.accessTokenTtlSeconds,
    clockSkewSeconds: settings.clockSkewSeconds,
  }
  // Stored keys may be rotated by another process (`rotateSigningKey`): read them again.
  const reload =
    options.keys === undefined
      ? () => loadSigningKeys(storage.signingKeys, clock, window)
      : undefined
  const keys = options.keys ?? (await loadSigningKeys(storage.signingKeys, clock, window))
  checkSigningKeys(keys)
  const tokens = await AccessTokens.create(
    {
      keys,
      issuer: settings.issuer,
      audience: settings.audience,
      ttlSeconds: settings.accessTokenTtlSeconds,
      clockSkewSeconds: settings.clockSkewSeconds,
      cacheSize: tokenCacheSize,
      reload,
      reloadSeconds: KEY_RELOAD_SECONDS,
    },
    clock,
  )
  const admission = new Admission(tokens, storage.sessions, limiter)
  const recorder = new AccessRecorder(storage.accessLog, clock)
  return new Service(
    new SessionOperations(storage, clock, tokens, admission, hash, settings),
    new BeneficiaryOperations(storage.beneficiaries, clock, admission, hash, settings, recorder),
    createClientAdmin({ storage, clock, sha256: hash }),
    storage,
    new AccessLogOperations(
      storage.beneficiaries,
      storage.accessLog,
      admission,
      recorder,
      clock,
      settings,
    ),
    new EventFeed(storage.events, clock, admission),
    new MatchOperations(
      storage.matches,
      storage.beneficiaries,
      clock,
      admission,
      options.matchRules ?? DEFAULT_MATCH_RULES,
      recorder,
    ),
    new BulkOperations(storage, admission),
    new ImportOperations(storage, admission, clock, {
      maxRows: positiveInteger('maxImportRows', options.maxImportRows ?? MAX_IMPORT_ROWS),
      basePath: settings.basePath,
    }),
  )
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new TypeError(`${name} must be a positive integer`)
  return value
}

function clockSkew(seconds: number): number {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > 30) {
    throw new TypeError('clockSkewSeconds must be an integer from 0 to 30')
  }
  return seconds
}

function basePath(path: string): string {
  const trimmed = path.replace(/\/+$/, '')
  if (trimmed !== '' && !trimmed.startsWith('/'))
    throw new TypeError("basePath must start with '/'")
  return trimmed
}

/** The service: each method is one of the role objects' operations. */
class Service implements BeneficiaryService {
  readonly #sessions: SessionOperations
  readonly #beneficiaries: BeneficiaryOperations
  readonly #storage: Storage
  readonly #accessLog: AccessLogOperations
  readonly #events: EventFeed
  readonly #matching: MatchOperations
  readonly #bulk: BulkOperations
  readonly #imports: ImportOperations
  readonly clients: ClientAdmin

  constructor(
    sessions: SessionOperations,
    beneficiaries: BeneficiaryOperations,
    clients: ClientAdmin,
    storage: Storage,
    accessLog: AccessLogOperations,
    events: EventFeed,
    matching: MatchOperations,
    bulk: BulkOperations,
    imports: ImportOperations,
  ) {
    this.#sessions = sessions
    this.#beneficiaries = beneficiaries
    this.clients = clients
    this.#storage = storage
    this.#accessLog = accessLog
    this.#events = events
    this.#matching = matching
    this.#bulk = bulk
    this.#imports = imports
  }

  ready(): Promise<void> {
    return this.#storage.ping()
  }

  login(ctx: RequestContext, body: RequestBody<LoginBody>): Promise<Result<TokenResponse>> {
    return this.#sessions.login(ctx, body)
  }

  refresh(ctx: RequestContext, body: RequestBody<RefreshBody>): Promise<Result<RefreshResponse>> {
    return this.#sessions.refresh(ctx, body)
  }

  logout(ctx: RequestContext, body?: RequestBody<LogoutBody>): Promise<Result<null>> {
    return this.#sessions.logout(ctx, body)
  }

  list(
    ctx: RequestContext,
    query: ListQueryInput = {},
  ): Promise<Result<Paged<BeneficiaryListItem>>> {
    return this.#beneficiaries.list(ctx, query)
  }

  listJson(ctx: RequestContext, query: ListQueryInput = {}): Promise<Result<SerializedJson>> {
    return this.#beneficiaries.listJson(ctx, query)
  }

  get(ctx: RequestContext, id: string | number): Promise<Result<BeneficiaryDetail>> {
    return this.#beneficiaries.get(ctx, id)
  }

  create(
    ctx: RequestContext,
    body: RequestBody<CreateBeneficiaryBody>,
  ): Promise<Result<BeneficiaryCreated>> {
    return this.#changed(this.#beneficiaries.create(ctx, body))
  }

  update(
    ctx: RequestContext,
    id: string | number,
    body: RequestBody<UpdateBeneficiaryBody>,
  ): Promise<Result<BeneficiaryDetail>> {
    return this.#changed(this.#beneficiaries.update(ctx, id, body))
  }

  setStatus(
    ctx: RequestContext,
    id: string | number,
    body: RequestBody<StatusBody>,
  ): Promise<Result<BeneficiaryDetail>> {
    return this.#changed(this.#beneficiaries.setStatus(ctx, id, body))
  }

  remove(ctx: RequestContext, id: string | number): Promise<Result<null>> {
    return this.#changed(this.#beneficiaries.remove(ctx, id))
  }

  history(
    ctx: RequestContext,
    id: string | number,
    query: HistoryQueryInput = {},
  ): Promise<Result<Paged<HistoryItem>>> {
    return this.#beneficiaries.history(ctx, id, query)
  }

  accessLog(
    ctx: RequestContext,
    id: string | number,
    query: HistoryQueryInput = {},
  ): Promise<Result<Paged<AccessLogItem>>> {
    return this.#accessLog.accessLog(ctx, id, query)
  }

  export(ctx: RequestContext, id: string | number): Promise<Result<BeneficiaryExport>> {
    return this.#accessLog.export(ctx, id)
  }

  events(ctx: RequestContext, query: EventsQueryInput = {}): Promise<Result<ChangeEventPage>> {
    return this.#events.read(ctx, query)
  }

  /** A change done: long polls of the change feed in this process look at once (D33). */
  async #changed<T>(result: Promise<Result<T>>): Promise<Result<T>> {
    const done = await result
    this.#events.notify()
    return done
  }

  match(ctx: RequestContext, body: RequestBody<MatchCandidateBody>): Promise<Result<MatchList>> {
    return this.#matching.match(ctx, body)
  }

  matches(ctx: RequestContext, id: string | number): Promise<Result<MatchList>> {
    return this.#matching.matchesOf(ctx, id)
  }

  exportRecords(ctx: RequestContext, query: QueryInput = {}): Promise<Result<RecordExport>> {
    return this.#bulk.exportRecords(ctx, query)
  }

  startImport(
    ctx: RequestContext,
    body: RequestBody<ImportUpload>,
  ): Promise<Result<ImportJobView>> {
    return this.#imports.startImport(ctx, body)
  }

  getImport(
    ctx: RequestContext,
    id: string,
    query: QueryInput = {},
  ): Promise<Result<ImportJobReport>> {
    return this.#imports.getImport(ctx, id, query)
  }
}
