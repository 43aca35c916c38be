import type { TSchema } from 'typebox'
import {
  BeneficiaryCreated,
  BeneficiaryDetail,
  CreateBeneficiaryBody,
  ErrorBody,
  LoginBody,
  PagedBeneficiaries,
  PagedHistory,
  RefreshBody,
  RefreshResponse,
  StatusBody,
  TokenResponse,
  UpdateBeneficiaryBody,
} from '../core/validation/index.js'

/** A JSON object of the OpenAPI document. */
export type Json = Record<string, unknown>

/** The core's TypeBox schemas the document names, the same ones that validate requests. */
export const CORE_SCHEMAS = {
  LoginBody,
  RefreshBody,
  TokenResponse,
  RefreshResponse,
  CreateBeneficiaryBody,
  UpdateBeneficiaryBody,
  StatusBody,
  BeneficiaryCreated,
  BeneficiaryDetail,
  PagedBeneficiaries,
  PagedHistory,
  ErrorBody,
} as const satisfies Readonly<Record<string, TSchema>>

/** The schemas of the server's own answers. */
export const SERVER_SCHEMAS = {
  ProbeStatus: {
    type: 'object',
    required: ['status'],
    properties: { status: { type: 'string' } },
  },
  ReadyStatus: {
    type: 'object',
    required: ['status'],
    properties: {
      status: {
        type: 'string',
        enum: ['ready', 'degraded'],
        description:
          '`ready`: every part answers. `degraded`: the instance serves, but a part named in `degraded` does not answer (D31).',
      },
      degraded: {
        type: 'array',
        items: { type: 'string' },
        description:
          'The parts that do not answer: `rate_limits` while the shared rate-limit store (Redis) is unreachable and limits hold per instance.',
      },
    },
  },
  OpenApiDocument: { type: 'object', required: ['openapi', 'paths'] },
} as const satisfies Readonly<Record<string, Json>>

/** The name of a schema under `#/components/schemas`. */
export type SchemaName = keyof typeof CORE_SCHEMAS | keyof typeof SERVER_SCHEMAS

/** Every response header the document describes, under `#/components/headers`. */
export const HEADERS = {
  'X-Request-Id': {
    description:
      "The request's id (D24): the client's own X-Request-Id when it is 1–128 characters of A–Z a–z 0–9 . _ : -, else a new one.",
    schema: { type: 'string', maxLength: 128 },
  },
  'Cache-Control': {
    description: 'Always `no-store` (D24).',
    schema: { type: 'string', const: 'no-store' },
  },
  'X-Content-Type-Options': {
    description: 'Always `nosniff` (D24).',
    schema: { type: 'string', const: 'nosniff' },
  },
  ETag: {
    description: 'Strong validator of the beneficiary; changes with every change (D23).',
    schema: { type: 'string' },
  },
  'Idempotent-Replayed': {
    description: 'Present and `true` when an Idempotency-Key replayed an earlier create (D22).',
    schema: { type: 'string', const: 'true' },
  },
  Location: { description: 'Path of the new beneficiary.', schema: { type: 'string' } },
  'WWW-Authenticate': {
    description:
      'RFC 6750 challenge: `Bearer error="invalid_token"` on 401 (except bad login credentials), `Bearer error="insufficient_scope"` on 403 (D6).',
    schema: { type: 'string' },
  },
  'Retry-After': {
    description: 'Whole seconds until a request is allowed again (D20).',
    schema: { type: 'integer', minimum: 1 },
  },
  'RateLimit-Policy': {
    description: 'IETF draft syntax: `"<class>";q=<quota>;w=<window seconds>` (D20).',
    schema: { type: 'string' },
  },
  RateLimit: {
    description: 'IETF draft syntax: `"<class>";r=<remaining>;t=<seconds until full>` (D20).',
    schema: { type: 'string' },
  },
  'X-RateLimit-Limit': {
    description: 'Requests per window of the class (D20).',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the bucket (D20).',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Reset': {
    description: 'Seconds until the bucket is full again (D20).',
    schema: { type: 'integer' },
  },
} as const satisfies Readonly<Record<string, { description: string; schema: Json }>>

/** The name of a header under `#/components/headers`. */
export type HeaderName = keyof typeof HEADERS

/** What each error status means, in the document's words. */
export const ERROR_DESCRIPTIONS = {
  400: 'Malformed request: body not JSON, not an object, invalid UTF-8, nested deeper than 32 levels, or a broken query string (`bad_request`, D12).',
  401: '`invalid_credentials`, `invalid_token` or `token_expired` (D6).',
  403: '`insufficient_scope` (D2).',
  404: '`not_found`: no such beneficiary, or an id that is not a positive integer (D12).',
  408: '`request_timeout`: the body did not arrive in time.',
  412: '`precondition_failed`: If-Match names a version that is no longer current (D23).',
  413: '`payload_too_large`: the body is over 1 MiB (D12).',
  415: '`unsupported_media_type`: a body was sent with a content type other than JSON (D12).',
  422: '`validation_failed` with `details` (D10), `invalid_transition` (D14) or `idempotency_key_reused` (D22).',
  429: '`rate_limit_exceeded` with `retry_after` (specification 8, D20).',
  500: '`internal_error`: never a stack trace or SQL.',
  503: '`service_unavailable`: the database does not answer, or cannot serve the request now (locked by another process past the busy timeout, disk full, read-only, I/O error). Nothing was written; `Retry-After` says when to try again.',
} as const satisfies Readonly<Record<number, string>>

/** An error status the document can describe. */
export type ErrorStatus = keyof typeof ERROR_DESCRIPTIONS
