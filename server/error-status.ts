import type { ErrorCode } from '../core/errors.js'

/**
 * The one table from a domain error code to its HTTP status. Typed over the closed `ErrorCode`
 * union, so a new code does not compile until it has a status. A uniqueness conflict arrives as
 * `validation_failed` (422 naming the field), since the specification has no 409. A storage
 * fault (`service_unavailable`) is a 503 with `Retry-After`.
 */
export const STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = Object.freeze({
  bad_request: 400,
  validation_failed: 422,
  invalid_credentials: 401,
  invalid_token: 401,
  token_expired: 401,
  insufficient_scope: 403,
  not_found: 404,
  invalid_transition: 422,
  idempotency_key_reused: 422,
  precondition_failed: 412,
  rate_limit_exceeded: 429,
  service_unavailable: 503,
  cursor_expired: 410,
})

/** Error identifiers that only the HTTP layer produces (D12, D24). */
export type HttpErrorCode =
  | 'method_not_allowed'
  | 'request_timeout'
  | 'payload_too_large'
  | 'request_header_fields_too_large'
  | 'unsupported_media_type'
  | 'internal_error'

/** Every `error` identifier a response body can carry. */
export type WireErrorCode = ErrorCode | HttpErrorCode

/** Status of each HTTP-layer error. */
export const STATUS_BY_HTTP_CODE: Readonly<Record<HttpErrorCode, number>> = Object.freeze({
  method_not_allowed: 405,
  request_timeout: 408,
  payload_too_large: 413,
  request_header_fields_too_large: 431,
  unsupported_media_type: 415,
  internal_error: 500,
})

const STATUS_OF: Readonly<Record<WireErrorCode, number>> = {
  ...STATUS_BY_CODE,
  ...STATUS_BY_HTTP_CODE,
}

/**
 * Every `error` identifier a response body can carry, in order of status: the keys of the two
 * tables above, which their types hold to the closed unions, so a new code is listed by itself.
 */
export const ERROR_CODES: readonly WireErrorCode[] = Object.freeze(
  (Object.keys(STATUS_OF) as WireErrorCode[]).sort((a, b) => STATUS_OF[a] - STATUS_OF[b]),
)

/** The HTTP status of an error identifier. */
export function statusOfCode(code: WireErrorCode): number {
  return STATUS_OF[code]
}
