import type { FieldProblem } from '../core/index.js'
import type { ClientOperation } from './client-routes.js'
import type { ApiErrorBody, ApiErrorCode } from './wire-types.js'

/**
 * The server refused a request with its standard error body (specification 7.1). `code` is the
 * body's `error` identifier, so a `switch (error.code)` narrows over every identifier the server
 * can send. The message is the server's, which never holds personal data or secrets (D25).
 *
 * @example
 * try {
 *   await client.create({ first_name: 'Ada', last_name: 'Lovelace', email: 'not-an-address' })
 * } catch (error) {
 *   if (isApiError(error, 'validation_failed')) console.log(error.details) // [{ field: 'email', … }]
 *   else throw error
 * }
 */
export class ApiError extends Error {
  override readonly name = 'ApiError'
  /** The operation that was refused. */
  readonly operation: ClientOperation
  /** The HTTP status. */
  readonly status: number
  /** The body's `error` identifier. */
  readonly code: ApiErrorCode
  /** The whole standard error body, as sent. */
  readonly body: ApiErrorBody
  /** The per-field problems of a `validation_failed` (D10); empty otherwise. */
  readonly details: readonly FieldProblem[]
  /** `Retry-After` of a 429 or 503, in whole seconds, when the server sent one. */
  readonly retryAfterSeconds: number | undefined
  /** The request's id (D24): quote it when reporting a problem. */
  readonly requestId: string | undefined

  constructor(
    operation: ClientOperation,
    status: number,
    body: ApiErrorBody,
    retryAfterSeconds: number | undefined,
  ) {
    super(body.message)
    this.operation = operation
    this.status = status
    this.code = body.error
    this.body = body
    this.details = body.details ?? []
    this.retryAfterSeconds = retryAfterSeconds
    this.requestId = body.request_id
  }
}

/**
 * The server, or something between it and the client (a proxy's HTML 502), answered what the
 * API never sends: a status it does not use for the operation without the standard error body,
 * or a success whose body is not the JSON expected. Nothing of the body is kept.
 */
export class UnexpectedResponseError extends Error {
  override readonly name = 'UnexpectedResponseError'
  readonly operation: ClientOperation
  readonly status: number
  /** The `Content-Type` of the answer, if any. */
  readonly contentType: string | undefined

  constructor(operation: ClientOperation, status: number, contentType: string | undefined) {
    super(`${operation}: unexpected ${status} answer without the standard error body`)
    this.operation = operation
    this.status = status
    this.contentType = contentType
  }
}

/**
 * True when `error` is an `ApiError`, of `code` when one is given.
 *
 * @example
 * if (isApiError(error, 'precondition_failed')) await reloadAndRetry()
 */
export function isApiError<Code extends ApiErrorCode>(
  error: unknown,
  code?: Code,
): error is ApiError & { readonly code: Code } {
  return error instanceof ApiError && (code === undefined || error.code === code)
}

/** The standard error body in `value`, or `undefined` when it is not one. */
export function errorBodyOf(value: unknown): ApiErrorBody | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const body = value as Record<string, unknown>
  const standard =
    typeof body['error'] === 'string' &&
    typeof body['message'] === 'string' &&
    Number.isInteger(body['code'])
  return standard ? (value as ApiErrorBody) : undefined
}
