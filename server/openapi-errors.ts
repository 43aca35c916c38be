import type { FieldProblem } from '../core/errors.js'
import type { OperationName } from '../core/operations.js'
import { ERROR_CODES, statusOfCode, type WireErrorCode } from './error-status.js'
import type { Json } from './openapi-components.js'
import type { Route } from './route.js'

/** The error statuses a route can name in its `errors`, beyond those its facts imply. */
export type ErrorStatus =
  400 | 401 | 403 | 404 | 408 | 412 | 413 | 415 | 422 | 429 | 500 | 503 | 410

/**
 * What each error identifier means, in the document's words, and the message of its example.
 * Typed over the closed union: a new code does not compile until it is described here.
 */
const CODES: Readonly<
  Record<WireErrorCode, { readonly meaning: string; readonly message: string }>
> = {
  bad_request: {
    meaning:
      'the request is malformed: a body that is not JSON, not an object, not valid UTF-8, nested deeper than 32 levels or giving a key twice in one object (the message names it), or a query string with broken percent-encoding.',
    message: 'The request body is not valid JSON.',
  },
  invalid_credentials: {
    meaning: 'unknown client or wrong secret; the answer does not say which.',
    message: 'The client credentials are invalid.',
  },
  invalid_token: {
    meaning: 'the token is missing, malformed, forged, revoked or of the wrong kind.',
    message: 'The token is missing or invalid.',
  },
  token_expired: {
    meaning: 'the access token has expired: refresh it, or log in again.',
    message: 'The access token has expired.',
  },
  insufficient_scope: {
    meaning: 'the token lacks a scope the operation needs.',
    message: "This operation needs the 'write' scope.",
  },
  not_found: {
    meaning:
      'no beneficiary has this id (any id that is not a positive integer, and a deleted one, included).',
    message: 'The beneficiary was not found.',
  },
  method_not_allowed: {
    meaning: 'the path does not answer this method; `Allow` lists the methods it answers.',
    message: 'This method is not allowed here.',
  },
  request_timeout: {
    meaning: 'the request body did not arrive in time after its headers.',
    message: 'The request body did not arrive in time.',
  },
  precondition_failed: {
    meaning: 'If-Match names a version that is no longer current; nothing was changed.',
    message: 'The resource has changed since the given ETag.',
  },
  payload_too_large: {
    meaning: 'the body is larger than 1 MiB.',
    message: 'The request body is larger than 1 MiB.',
  },
  unsupported_media_type: {
    meaning: 'a body was sent with a content type other than `application/json`.',
    message: 'The request body must be application/json.',
  },
  validation_failed: {
    meaning:
      'fields or parameters are invalid; `details` names every one, nested fields by a dotted path such as `address.country`. A fiscal code registered to another beneficiary is one of them.',
    message: 'The request has invalid fields.',
  },
  invalid_transition: {
    meaning:
      'the beneficiary cannot move to the status asked for: pending → active or inactive, active ⇄ inactive; nothing leads back to pending.',
    message: "A beneficiary cannot move from 'active' to 'pending'.",
  },
  idempotency_key_reused: {
    meaning: 'the Idempotency-Key was used within 24 hours with a different body.',
    message: 'This Idempotency-Key was already used with a different request body.',
  },
  rate_limit_exceeded: {
    meaning:
      'the bucket of the limit class is empty; `retry_after` and `Retry-After` give the whole seconds until a request is allowed again.',
    message: 'Rate limit exceeded. Retry in 30 seconds.',
  },
  request_header_fields_too_large: {
    meaning: 'the request head is over 3.5 KiB (target, names and values) or 48 fields.',
    message: 'The request headers are too large.',
  },
  internal_error: {
    meaning: 'an unexpected error, logged; the answer never shows a stack trace or SQL.',
    message: 'An unexpected error occurred.',
  },
  service_unavailable: {
    meaning:
      'the database cannot serve the request now (locked by another process past the busy timeout, disk full, read-only, an I/O error, not answering), or a list ran past its time budget on PostgreSQL and the database cancelled it. Nothing was written; `Retry-After` says when to try again.',
    message: 'The storage is unavailable at the moment. Try again later.',
  },
  cursor_expired: {
    meaning:
      'the change feed cursor is older than the events kept (the retention); start again without `after`.',
    message: 'The cursor is older than the events kept; start again without `after`.',
  },
}

/** The identifiers an operation answers with, where it answers fewer than its status allows. */
const NARROWED: Partial<
  Record<OperationName, Partial<Record<ErrorStatus, readonly WireErrorCode[]>>>
> = {
  login: { 401: ['invalid_credentials'] },
  refresh: { 401: ['invalid_token', 'invalid_credentials'] },
  create: { 422: ['validation_failed', 'idempotency_key_reused'] },
  setStatus: { 422: ['validation_failed', 'invalid_transition'] },
}

/** The identifiers of a status on an operation that `NARROWED` does not name. */
const USUAL: Partial<Record<ErrorStatus, readonly WireErrorCode[]>> = {
  401: ['invalid_token', 'token_expired'],
  422: ['validation_failed'],
}

/** The `details` of each operation's example `validation_failed`: what its real answer says. */
const DETAILS: Partial<Record<OperationName, readonly FieldProblem[]>> = {
  login: [{ field: 'client_secret', message: 'is required' }],
  refresh: [{ field: 'refresh_token', message: 'is required' }],
  logout: [{ field: 'refresh_token', message: 'does not belong to this login session' }],
  list: [
    { field: 'per_page', message: 'must be at most 100' },
    { field: 'created_from', message: 'must be a real calendar date written YYYY-MM-DD' },
  ],
  history: [{ field: 'page', message: 'must be at least 1' }],
  create: [
    { field: 'email', message: 'is not a valid e-mail address' },
    {
      field: 'address.country',
      message: 'is not an assigned ISO 3166-1 alpha-2 country code',
    },
  ],
  update: [
    { field: 'phone', message: 'must be 6 to 15 digits, optionally after a +' },
    { field: 'address.street', message: 'is required' },
  ],
  setStatus: [{ field: 'status', message: 'must be one of: active, inactive, pending' }],
  events: [{ field: 'limit', message: 'must be at most 1000' }],
}

const REQUEST_ID = '6c1f0d6e-5b0e-4a43-9d4c-0b7f3f1f2a11'

/** Every identifier of a status. */
export function codesOfStatus(status: number): WireErrorCode[] {
  return ERROR_CODES.filter((code) => statusOfCode(code) === status)
}

/** The identifiers `route` answers with under `status`. */
export function codesFor(route: Route, status: number): readonly WireErrorCode[] {
  const operation = route.kind === 'service' ? route.operation : undefined
  const narrowed =
    operation === undefined ? undefined : NARROWED[operation]?.[status as ErrorStatus]
  if (narrowed !== undefined) return narrowed
  return (route.policy !== undefined && USUAL[status as ErrorStatus]) || codesOfStatus(status)
}

/** What `codes` mean, one sentence each: the description of a response that carries them. */
export function meaningOf(codes: readonly WireErrorCode[]): string {
  return codes.map((code) => `\`${code}\`: ${CODES[code].meaning}`).join(' ')
}

/**
 * The named examples of an error response of `route`, one per identifier it may carry, each an
 * answer the server really gives (its message, and for `validation_failed` the operation's own
 * fields).
 */
export function errorExamples(route: Route | undefined, codes: readonly WireErrorCode[]): Json {
  const examples: Json = {}
  for (const code of codes) {
    const status = statusOfCode(code)
    const value = {
      error: code,
      message: exampleMessage(route, code),
      code: status,
      ...(code === 'validation_failed' && {
        details: (route?.kind === 'service' && DETAILS[route.operation]) || DETAILS.create,
      }),
      ...(code === 'rate_limit_exceeded' && { retry_after: 30 }),
      request_id: REQUEST_ID,
    }
    examples[code] = { summary: `${status} ${code}`, value }
  }
  return examples
}

function exampleMessage(route: Route | undefined, code: WireErrorCode): string {
  if (route?.kind === 'server' && code === 'service_unavailable') {
    return 'The database does not answer.'
  }
  if (route?.kind !== 'service') return CODES[code].message
  if (code === 'bad_request' && route.query !== undefined) {
    return 'The query string has broken percent-encoding.'
  }
  if (code === 'invalid_token' && route.operation === 'refresh') {
    return 'The refresh token is invalid, expired or revoked.'
  }
  if (code === 'insufficient_scope') {
    return `This operation needs the '${route.policy.scopes[0] ?? 'write'}' scope.`
  }
  return CODES[code].message
}
