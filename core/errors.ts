/**
 * The domain error family. Every failure the core reports to a caller is one of these classes;
 * `code` is a stable identifier from a closed union, so a `switch (error.code)` narrows and must
 * cover every case. Messages never contain tokens, secrets or personal data: context goes into
 * typed fields.
 *
 * Only `server/` knows HTTP: it maps `code` to a status with one table.
 */

/** Every stable error code the core can produce. */
export type ErrorCode =
  | 'bad_request'
  | 'validation_failed'
  | 'invalid_credentials'
  | 'invalid_token'
  | 'token_expired'
  | 'insufficient_scope'
  | 'not_found'
  | 'invalid_transition'
  | 'idempotency_key_reused'
  | 'precondition_failed'
  | 'rate_limit_exceeded'
  | 'service_unavailable'
  | 'cursor_expired'

/** One problem with one field, as it appears in the `details` array of the error body (D10). */
export interface FieldProblem {
  /** Dotted path of the field (`address.country`) or the query parameter name (`per_page`). */
  readonly field: string
  /** Human-readable text. Never repeats the offending value. */
  readonly message: string
}

/** What a limited request needs to tell its caller about its bucket (D20). */
export interface RateLimitStatus {
  /** Limit class the request drew from: `auth`, `write` or `standard`. */
  readonly policy: string
  /** Capacity of the bucket: requests per window. */
  readonly limit: number
  /** Window in seconds over which the bucket refills completely. */
  readonly windowSeconds: number
  /** Whole tokens left after this request. */
  readonly remaining: number
  /** Whole seconds until the bucket is full again. */
  readonly resetSeconds: number
}

/** What a domain error tells the HTTP layer about the request beyond its own fields. */
export interface ErrorContext {
  /** Rate-limit state of the request, when it got as far as the limiter. */
  readonly rateLimit?: RateLimitStatus | undefined
  /** The authenticated client, when the request got as far as authentication (for logs). */
  readonly clientId?: string | undefined
}

/** Options every domain error takes: the `cause`, and the request's context when known. */
export interface DomainErrorOptions extends ErrorContext {
  readonly cause?: unknown
}

/**
 * Base class of every error the core throws on purpose. Its fields never change once it is
 * thrown: the request's context is attached by {@link DomainError.withContext}, which makes a
 * frozen copy.
 */
export abstract class DomainError extends Error {
  abstract readonly code: ErrorCode
  /** Rate-limit state of the request, when it got as far as the limiter. */
  readonly rateLimit: RateLimitStatus | undefined
  /** The authenticated client, when the request got as far as authentication (for logs). */
  readonly clientId: string | undefined

  constructor(message: string, options?: DomainErrorOptions) {
    // A domain error is an answer, not a bug: its stack trace would tell nothing and cost more
    // than the request (14 % of the CPU under a flood of bad tokens). V8 reads this limit when
    // the error is constructed; other engines ignore it.
    const errors = Error as { stackTraceLimit?: number | undefined }
    const limit = errors.stackTraceLimit
    errors.stackTraceLimit = 0
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    errors.stackTraceLimit = limit
    this.name = new.target.name
    this.rateLimit = options?.rateLimit
    this.clientId = options?.clientId
  }

  /**
   * This error with `context` filled in where it has none of its own: a frozen copy of the same
   * class, or this error itself when the context adds nothing.
   */
  withContext(context: ErrorContext): this {
    const rateLimit = this.rateLimit ?? context.rateLimit
    const clientId = this.clientId ?? context.clientId
    if (rateLimit === this.rateLimit && clientId === this.clientId) return this
    const copy = Object.create(Object.getPrototypeOf(this) as object) as this
    Object.defineProperties(copy, Object.getOwnPropertyDescriptors(this))
    Object.defineProperties(copy, {
      rateLimit: { value: rateLimit },
      clientId: { value: clientId },
    })
    return Object.freeze(copy)
  }
}

/** The request as a whole is malformed (D12): not an object, not JSON, too deep. */
export class BadRequestError extends DomainError {
  readonly code = 'bad_request'
}

/** One or more fields or query parameters are invalid (D7–D10, D17, D18). */
export class ValidationError extends DomainError {
  readonly code = 'validation_failed'
  readonly details: readonly FieldProblem[]

  constructor(
    details: readonly FieldProblem[],
    message = 'The request has invalid fields.',
    options?: DomainErrorOptions,
  ) {
    super(message, options)
    this.details = details
  }
}

/**
 * A value that must be unique is already taken (D8: `fiscal_code`). Adapters throw it when the
 * database's uniqueness constraint refuses a write; on the wire it is a 422 naming the field.
 */
export class ConflictError extends ValidationError {
  readonly field: string

  constructor(field: string, options?: { cause?: unknown }) {
    super([{ field, message: 'is already registered to another beneficiary' }], undefined, options)
    this.field = field
  }
}

/** Login with an unknown client or a wrong secret (D6). The message never says which. */
export class InvalidCredentialsError extends DomainError {
  readonly code = 'invalid_credentials'

  constructor(options?: { cause?: unknown }) {
    super('The client credentials are invalid.', options)
  }
}

/** A token that is missing, malformed, forged, revoked or of the wrong kind (D6). */
export class InvalidTokenError extends DomainError {
  readonly code = 'invalid_token'

  constructor(message = 'The token is missing or invalid.', options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** An access token past its `exp` (D6). */
export class TokenExpiredError extends DomainError {
  readonly code = 'token_expired'

  constructor(options?: { cause?: unknown }) {
    super('The access token has expired.', options)
  }
}

/** The token lacks the scope the operation needs (D2). */
export class InsufficientScopeError extends DomainError {
  readonly code = 'insufficient_scope'
  readonly requiredScope: string

  constructor(requiredScope: string) {
    super(`This operation needs the '${requiredScope}' scope.`)
    this.requiredScope = requiredScope
  }
}

/** The resource does not exist, or the id is not a positive integer in range (D12, D13). */
export class NotFoundError extends DomainError {
  readonly code = 'not_found'

  constructor(message = 'The resource was not found.') {
    super(message)
  }
}

/** A status change the state machine does not allow (D14). */
export class InvalidTransitionError extends DomainError {
  readonly code = 'invalid_transition'
  readonly from: string
  readonly to: string

  constructor(from: string, to: string) {
    super(`A beneficiary cannot move from '${from}' to '${to}'.`)
    this.from = from
    this.to = to
  }
}

/** The same Idempotency-Key was used with a different body (D22). */
export class IdempotencyKeyReusedError extends DomainError {
  readonly code = 'idempotency_key_reused'

  constructor() {
    super('This Idempotency-Key was already used with a different request body.')
  }
}

/** If-Match named a version that is no longer current (D23). */
export class PreconditionFailedError extends DomainError {
  readonly code = 'precondition_failed'

  constructor() {
    super('The resource has changed since the given ETag.')
  }
}

/** The bucket of the request's limit class is empty (D20). */
export class RateLimitedError extends DomainError {
  readonly code = 'rate_limit_exceeded'
  /** Milliseconds until one token is back. */
  readonly retryAfterMs: number
  /** Whole seconds until one token is back, at least 1 (D20). */
  readonly retryAfterSeconds: number

  constructor(retryAfterMs: number, rateLimit: RateLimitStatus) {
    const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000))
    super(`Rate limit exceeded. Retry in ${seconds} second${seconds === 1 ? '' : 's'}.`, {
      rateLimit,
    })
    this.retryAfterMs = retryAfterMs
    this.retryAfterSeconds = seconds
  }
}

/** Why the storage could not serve a request: a condition of the machine, not of the request. */
export type StorageFailureReason = 'busy' | 'disk_full' | 'read_only' | 'io_error' | 'cannot_open'

/**
 * The storage cannot serve the request now: its database stayed locked by another process past
 * the busy timeout (`busy`), the disk is full, the file or its filesystem is read-only, a read
 * or write failed, or a file could not be opened. Adapters throw it in place of the driver's
 * error, which stays the `cause`; a write that fails with it wrote nothing. On the wire it is a
 * 503 with `Retry-After`.
 */
export class StorageUnavailableError extends DomainError {
  readonly code = 'service_unavailable'
  readonly reason: StorageFailureReason
  /** Whole seconds after which a retry may succeed: 1 for a lock, 5 for the rest. */
  readonly retryAfterSeconds: number

  constructor(reason: StorageFailureReason, options?: { cause?: unknown }) {
    super('The storage is unavailable at the moment. Try again later.', options)
    this.reason = reason
    this.retryAfterSeconds = reason === 'busy' ? 1 : 5
  }
}

/**
 * The change feed's cursor is older than the events kept (D33): the consumer has to start again
 * from the oldest event kept, or from a full read of the records.
 */
export class CursorExpiredError extends DomainError {
  readonly code = 'cursor_expired'

  constructor() {
    super('The cursor is older than the events kept; start again without `after`.')
  }
}

/** The union of every domain error: a `switch` on `code` narrows to one class. */
export type AnyDomainError =
  | BadRequestError
  | ValidationError
  | ConflictError
  | InvalidCredentialsError
  | InvalidTokenError
  | TokenExpiredError
  | InsufficientScopeError
  | NotFoundError
  | InvalidTransitionError
  | IdempotencyKeyReusedError
  | PreconditionFailedError
  | RateLimitedError
  | StorageUnavailableError
  | CursorExpiredError

/** True for errors the core threw on purpose (as opposed to bugs and driver failures). */
export function isDomainError(error: unknown): error is AnyDomainError {
  return error instanceof DomainError
}
