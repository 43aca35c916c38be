import type { Result } from '../core/beneficiary-service.js'
import type { AnyDomainError, FieldProblem } from '../core/errors.js'
import { SerializedJson } from '../core/json-bytes.js'
import { StreamedBody, type ApiResponse } from './api-response.js'
import { STATUS_BY_CODE } from './error-status.js'
import { setRateLimitHeaders } from './rate-limit-headers.js'

const JSON_TYPE = 'application/json; charset=utf-8'

/** The headers of every answer (D24). */
function baseHeaders(requestId: string): Record<string, string> {
  return {
    'content-type': JSON_TYPE,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'x-request-id': requestId,
  }
}

/** A response still being put together. */
export interface DraftResponse extends ApiResponse {
  readonly headers: Record<string, string>
}

/** A 200-like answer with a ready body. */
export function plain(status: number, body: string, requestId: string): DraftResponse {
  return { status, headers: baseHeaders(requestId), body }
}

/**
 * The answer to an operation that succeeded, with its ETag and rate-limit headers. A 204, and a
 * 304 Not Modified (the 200's headers, RFC 9110 15.4.5), have no body and so no Content-Type.
 */
export function success(status: number, result: Result<unknown>, requestId: string): DraftResponse {
  const headers = baseHeaders(requestId)
  if (result.etag !== undefined) headers['etag'] = result.etag
  if (result.replayed === true) headers['idempotent-replayed'] = 'true'
  if (result.rateLimit !== undefined) setRateLimitHeaders(headers, result.rateLimit)
  if (status === 204 || status === 304) {
    delete headers['content-type']
    return { status, headers, body: undefined }
  }
  const value = result.value
  if (value instanceof StreamedBody) {
    headers['content-type'] = value.contentType
    return { status, headers, body: undefined, stream: value.chunks }
  }
  return {
    status,
    headers,
    body: value instanceof SerializedJson ? value.bytes : JSON.stringify(value),
  }
}

/** An answer in the standard error body (specification 7.1, D24). */
export function httpError(
  status: number,
  error: string,
  message: string,
  requestId: string,
  details?: readonly FieldProblem[],
  retryAfter?: number,
): DraftResponse {
  const body = {
    error,
    message,
    code: status,
    ...(details !== undefined && { details }),
    ...(retryAfter !== undefined && { retry_after: retryAfter }),
    request_id: requestId,
  }
  return { status, headers: baseHeaders(requestId), body: JSON.stringify(body) }
}

/** The answer to a domain error: its status, body and headers (D6, D20, 503 Retry-After). */
export function domainError(error: AnyDomainError, requestId: string): DraftResponse {
  const status = STATUS_BY_CODE[error.code]
  let details: readonly FieldProblem[] | undefined
  let retryAfter: number | undefined
  let challenge: string | undefined
  switch (error.code) {
    case 'validation_failed':
      details = error.details
      break
    case 'rate_limit_exceeded':
      retryAfter = error.retryAfterSeconds
      break
    case 'invalid_token':
      challenge =
        'Bearer error="invalid_token", error_description="The token is missing or invalid"'
      break
    case 'token_expired':
      challenge = 'Bearer error="invalid_token", error_description="The access token has expired"'
      break
    case 'insufficient_scope':
      challenge = `Bearer error="insufficient_scope", scope="${error.requiredScope}"`
      break
    default:
  }
  const response = httpError(status, error.code, error.message, requestId, details, retryAfter)
  const headers = response.headers
  if (challenge !== undefined) headers['www-authenticate'] = challenge
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter)
  // Only the header: the body's `retry_after` belongs to the 429 (specification 8).
  if (error.code === 'service_unavailable') headers['retry-after'] = String(error.retryAfterSeconds)
  if (error.rateLimit !== undefined) setRateLimitHeaders(headers, error.rateLimit)
  return response
}
