import type {
  ImportJobReport,
  ImportJobView,
  ImportUpload,
  RecordExport,
} from './bulk-operations.js'
import type { RateLimitStatus } from './errors.js'
import type { ChangeEventPage, EventsQueryInput } from './events.js'
import type { SerializedJson } from './json-bytes.js'
import type {
  ClientInfo,
  HistoryItem,
  Paged,
  ProvisionedClient,
  RefreshResponse,
  TokenResponse,
} from './shapes.js'
import type {
  BeneficiaryCreated,
  BeneficiaryDetail,
  BeneficiaryListItem,
  CreateBeneficiaryBody,
  UpdateBeneficiaryBody,
} from './beneficiary.js'
import type { AccessLogItem, BeneficiaryExport } from './access-log-operations.js'

/** Body of `POST /beneficiaries/match` (D38): the create body's fields, every one optional. */
export type MatchCandidateBody = UpdateBeneficiaryBody
import type { LoginBody, LogoutBody, RefreshBody } from './validation/auth-schemas.js'
import type { StatusBody } from './validation/beneficiary-schemas.js'
import type { HistoryQueryInput, ListQueryInput } from './validation/query-schemas.js'
import type { MatchList } from './matching/match-operations.js'

/**
 * What the caller knows about one request. Every field is optional: an in-process host passes
 * what it has; the HTTP server fills it from the headers and the socket.
 */
export interface RequestContext {
  /** The bearer token, without the `Bearer ` prefix. */
  readonly token?: string | undefined
  /** The client's IP address (after trusted-proxy resolution); the key of the `auth` limit class. */
  readonly ip?: string | undefined
  /** Recorded in history entries (D27); the server sets it from `X-Request-Id` (D24). */
  readonly requestId?: string | undefined
  /** `Idempotency-Key` of a create (D22). */
  readonly idempotencyKey?: string | undefined
  /** Raw `If-Match` value: `*`, or one or more strong ETags separated by commas (D23). */
  readonly ifMatch?: string | undefined
  /** Raw `X-Purpose` value: why the client reads, recorded in the access log (D35). */
  readonly purpose?: string | undefined
}

/**
 * Query parameters as a server received them: the first value of each name, unparsed. It fits
 * where `ListQueryInput` or `HistoryQueryInput` is asked for; unknown names are ignored.
 */
export type QueryInput = Readonly<Record<string, string | undefined>>

/**
 * A body nobody has parsed or checked yet: a function that returns the parsed JSON value. The
 * service calls it only once the request is admitted (token verified, limit drawn), so a server
 * does no work for a request that will be refused; it may throw `BadRequestError` for a body
 * that is not JSON. A host that holds an unchecked value passes `() => value`.
 */
export type UnparsedBody = () => unknown

/**
 * A request body: the operation's own type (`CreateBeneficiaryBody`, …), so that a misspelt
 * field does not compile, or an `UnparsedBody`. Either way the service validates it at run time.
 */
export type RequestBody<T = unknown> = T | UnparsedBody

/** The outcome of an operation: its value plus what the HTTP layer turns into headers. */
export interface Result<T> {
  /** The response body, in the specification's shape. */
  readonly value: T
  /** Strong ETag of the beneficiary returned (D23), or of the history page returned; quoted. */
  readonly etag?: string
  /** True when an Idempotency-Key replayed an earlier create (D22). */
  readonly replayed?: boolean
  /** State of the bucket the request drew from (D20). */
  readonly rateLimit?: RateLimitStatus
  /** The authenticated client, for logs. */
  readonly clientId?: string
}

/** Operator functions for API clients (D1). */
export interface ClientAdmin {
  /**
   * Provisions a client with a fresh secret. The secret is returned this once; only its hash is kept.
   * @throws ValidationError `validation_failed` for an empty name or unknown scopes.
   */
  create(input: { name: string; scopes: readonly string[] }): Promise<ProvisionedClient>
  /** Every client, oldest first, without secrets. */
  list(): Promise<readonly ClientInfo[]>
  /** Revokes a client: it cannot log in, and its live tokens stop working. False if unknown. */
  revoke(clientId: string): Promise<boolean>
}

/**
 * The beneficiary service: every operation of the /v3 API as a method. Each takes a
 * `RequestContext` and returns a `Result` or throws a `DomainError` (see `errors.ts`). Any
 * operation that reaches the storage may also throw `StorageUnavailableError` on a storage fault.
 *
 * Authenticated operations run in this order: verify the token (401), draw from the limit class
 * (429), check the scope (403), validate the input (400/422), then do the work.
 */
export interface BeneficiaryService {
  /**
   * Exchanges client credentials for a token set (specification 4.2, D2, D3).
   * @throws RateLimitedError, BadRequestError, ValidationError, InvalidCredentialsError, InsufficientScopeError
   */
  login(ctx: RequestContext, body: RequestBody<LoginBody>): Promise<Result<TokenResponse>>
  /**
   * Issues a new access token for a refresh token (D4).
   * @throws RateLimitedError, BadRequestError, ValidationError, InvalidTokenError, InvalidCredentialsError
   */
  refresh(ctx: RequestContext, body: RequestBody<RefreshBody>): Promise<Result<RefreshResponse>>
  /**
   * Ends the token's login session (D5): the access token and the session's refresh token stop working.
   * @throws InvalidTokenError, TokenExpiredError, RateLimitedError
   */
  logout(ctx: RequestContext, body?: RequestBody<LogoutBody>): Promise<Result<null>>
  /**
   * One page of beneficiaries (specification 4.3, D15–D18). `page` and `per_page` may be numbers
   * or strings of digits; without a query, the first page of 20.
   * @throws InvalidTokenError, TokenExpiredError, RateLimitedError, InsufficientScopeError, ValidationError
   */
  list(ctx: RequestContext, query?: ListQueryInput): Promise<Result<Paged<BeneficiaryListItem>>>
  /**
   * `list`'s answer already serialised, for a server: the UTF-8 bytes of `JSON.stringify` of the
   * value `list` would return, written from the store's summaries without the items' objects and
   * the text (`writeListItems`). The HTTP server sends it as it is.
   * @throws the errors of `list`
   */
  listJson(ctx: RequestContext, query?: ListQueryInput): Promise<Result<SerializedJson>>
  /**
   * One beneficiary in the detail shape, with its ETag.
   * @throws NotFoundError and the authentication errors of `list`
   */
  get(ctx: RequestContext, id: string | number): Promise<Result<BeneficiaryDetail>>
  /**
   * Creates a beneficiary in status `pending` (specification 4.5, D7–D9, D22).
   * @throws ValidationError, ConflictError (`fiscal_code`), IdempotencyKeyReusedError, BadRequestError
   */
  create(
    ctx: RequestContext,
    body: RequestBody<CreateBeneficiaryBody>,
  ): Promise<Result<BeneficiaryCreated>>
  /**
   * Partial update (D11), honouring If-Match (D23).
   * @throws NotFoundError, ValidationError, ConflictError, PreconditionFailedError, BadRequestError
   */
  update(
    ctx: RequestContext,
    id: string | number,
    body: RequestBody<UpdateBeneficiaryBody>,
  ): Promise<Result<BeneficiaryDetail>>
  /**
   * Deletes for good (D13), honouring If-Match (D23).
   * @throws NotFoundError, PreconditionFailedError
   */
  remove(ctx: RequestContext, id: string | number): Promise<Result<null>>
  /**
   * Moves a beneficiary between statuses (D14), honouring If-Match (D23).
   * @throws NotFoundError, ValidationError, InvalidTransitionError, PreconditionFailedError
   */
  setStatus(
    ctx: RequestContext,
    id: string | number,
    body: RequestBody<StatusBody>,
  ): Promise<Result<BeneficiaryDetail>>
  /**
   * The beneficiary's history, oldest first, paged like the list (D27), with an ETag that
   * changes with every new entry.
   * @throws NotFoundError, ValidationError
   */
  history(
    ctx: RequestContext,
    id: string | number,
    query?: HistoryQueryInput,
  ): Promise<Result<Paged<HistoryItem>>>
  /**
   * The beneficiary's access log (D35), oldest first, paged like the history; scope `audit`.
   * @throws NotFoundError, ValidationError, InsufficientScopeError
   */
  accessLog(
    ctx: RequestContext,
    id: string | number,
    query?: HistoryQueryInput,
  ): Promise<Result<Paged<AccessLogItem>>>
  /**
   * Everything held about the beneficiary (D36): the record, its whole history and its whole
   * access log; scope `audit`. Recorded in the access log as `export`.
   * @throws NotFoundError, ValidationError, InsufficientScopeError
   */
  export(ctx: RequestContext, id: string | number): Promise<Result<BeneficiaryExport>>
  /**
   * The change feed (D33): the events after a cursor, oldest first, and where to resume.
   * @throws ValidationError, CursorExpiredError and the authentication errors of `list`
   */
  events(ctx: RequestContext, query?: EventsQueryInput): Promise<Result<ChangeEventPage>>
  /**
   * The existing records that may be the same person as `body`, a candidate in the create
   * body's shape with every field optional (at least a fiscal code, an e-mail address, a phone
   * number or both names): at most 20, best first, each with its score and the rules that fired
   * (D38). Changes nothing.
   * @throws ValidationError, BadRequestError and the authentication errors of `list`
   */
  match(ctx: RequestContext, body: RequestBody<MatchCandidateBody>): Promise<Result<MatchList>>
  /**
   * As `match`, for the stored record `id`, which the answer leaves out (D38).
   * @throws NotFoundError and the authentication errors of `list`
   */
  matches(ctx: RequestContext, id: string | number): Promise<Result<MatchList>>
  /**
   * Admits an export of every record of one snapshot (D39): scope `read`, limit class `bulk`,
   * `format` (`ndjson`, `csv`) and the list's filters validated. The records are read as the
   * answer's `pages` is iterated.
   * @throws ValidationError, NotFoundError when the storage has no exports
   */
  exportRecords(ctx: RequestContext, query?: QueryInput): Promise<Result<RecordExport>>
  /**
   * Stores an import job for a CSV or NDJSON file (D39): scope `write`, limit class `bulk`; a
   * worker runs it (see `ImportWorker` in the server).
   * @throws ValidationError (more rows than allowed), NotFoundError when the storage keeps no jobs
   */
  startImport(ctx: RequestContext, body: RequestBody<ImportUpload>): Promise<Result<ImportJobView>>
  /**
   * One of the caller's import jobs with a page of its report (D39).
   * @throws NotFoundError, ValidationError
   */
  getImport(ctx: RequestContext, id: string, query?: QueryInput): Promise<Result<ImportJobReport>>
  /** Operator functions for clients (D1). Not reachable over HTTP. */
  readonly clients: ClientAdmin
  /** Resolves when the storage answers (readiness). */
  ready(): Promise<void>
}
