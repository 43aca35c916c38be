import type { TSchema } from 'typebox'
import {
  Address,
  BeneficiaryCreated,
  BeneficiaryDetail,
  BeneficiaryListItem,
  CreateBeneficiaryBody,
  ErrorBody,
  FieldProblemSchema,
  HistoryItem,
  LoginBody,
  Metadata,
  LogoutBody,
  PagedBeneficiaries,
  PagedHistory,
  PageLinks,
  PageMeta,
  RefreshBody,
  RefreshResponse,
  Status,
  StatusBody,
  TokenResponse,
  UpdateBeneficiaryBody,
} from '../core/validation/index.js'
import {
  AccessLogItem,
  BeneficiaryExport,
  PagedAccessLog,
} from '../core/validation/access-log-schemas.js'
import { ChangeEventPageSchema, ChangeEventSchema } from '../core/events.js'
import { ERROR_CODES } from './error-status.js'
import {
  BeneficiaryMatch,
  MatchCandidateBody,
  MatchList,
  MatchReason,
} from '../core/matching/match-schemas.js'

import { IMPORT_FILE, IMPORT_JOB, IMPORT_JOB_REPORT } from './bulk/import-schemas.js'
/** A JSON object of the OpenAPI document. */
export type Json = Record<string, unknown>

/**
 * The error identifier: the core's closed union of codes and the HTTP layer's own, derived from
 * the tables that give each its status (`error-status.ts`), so a new code appears here by itself.
 */
const ErrorCode = {
  type: 'string',
  enum: ERROR_CODES,
  description:
    'Stable, machine-readable identifier of the error; `code` carries the HTTP status and `message` a human-readable text that may change.',
} as const

/** The core's error body, its `error` narrowed to the identifiers the server can answer. */
const DocumentedErrorBody = {
  ...ErrorBody,
  properties: { ...ErrorBody.properties, error: ErrorCode },
  description:
    'The standard error body. `details` comes with `validation_failed`, `retry_after` with `rate_limit_exceeded`; `request_id` equals the `X-Request-Id` header.',
}

/**
 * The schemas under `#/components/schemas`: the core's TypeBox schemas (the same ones that
 * validate requests), and the server's own. A schema that appears inside another is written
 * there as a `$ref` to its component, found by identity (`Address` inside `BeneficiaryDetail`
 * and both request bodies is the one `Address` object).
 */
export const SCHEMAS = {
  LoginBody,
  RefreshBody,
  LogoutBody,
  TokenResponse,
  RefreshResponse,
  CreateBeneficiaryBody,
  UpdateBeneficiaryBody,
  StatusBody,
  BeneficiaryCreated,
  BeneficiaryDetail,
  BeneficiaryListItem,
  BeneficiaryStatus: Status,
  Address,
  Metadata,
  PagedBeneficiaries,
  PagedHistory,
  HistoryEntry: HistoryItem,
  PageMeta,
  PageLinks,
  ErrorBody: DocumentedErrorBody,
  ErrorCode,
  FieldProblem: FieldProblemSchema,
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
          '`ready`: every part answers. `degraded`: the instance serves, but a part named in `degraded` does not answer.',
      },
      degraded: {
        type: 'array',
        items: { type: 'string' },
        description:
          'The parts that do not answer: `rate_limits` while the shared rate-limit store (Redis) is unreachable and limits hold per instance.',
      },
    },
  },
  OpenApiDocument: {
    type: 'object',
    required: ['openapi', 'info', 'paths'],
    properties: {
      openapi: { type: 'string' },
      info: { type: 'object' },
      paths: { type: 'object' },
    },
    additionalProperties: true,
  },
  MetricsText: {
    type: 'string',
    description: 'Prometheus text exposition format 0.0.4: one sample per line.',
  },
  AccessLogEntry: AccessLogItem,
  PagedAccessLog,
  BeneficiaryExport,
  ChangeEventPage: ChangeEventPageSchema,
  ChangeEvent: ChangeEventSchema,
  MatchCandidateBody,
  MatchList,
  BeneficiaryMatch,
  MatchReason,
  ImportFile: IMPORT_FILE,
  ImportJob: IMPORT_JOB,
  ImportJobReport: IMPORT_JOB_REPORT,
} as const satisfies Readonly<Record<string, TSchema | Json>>

/** The name of a schema under `#/components/schemas`. */
export type SchemaName = keyof typeof SCHEMAS

/** A response header the document describes, under `#/components/headers`. */
export interface HeaderComponent {
  readonly description: string
  /** Whether every response that lists the header carries it (a use may say otherwise). */
  readonly required: boolean
  readonly schema: Json
  readonly example: string | number
}

/** Every response header the document describes, under `#/components/headers`. */
export const HEADERS = {
  'X-Request-Id': {
    description:
      "The request's id: the client's own X-Request-Id when it is 1–128 characters of A–Z a–z 0–9 . _ : -, else a new one. Also in every error body as `request_id`, and in the server's log line.",
    required: true,
    schema: { type: 'string', maxLength: 128 },
    example: 'ffcfc001-4b50-4a9f-b7d7-b054c0503397',
  },
  'Cache-Control': {
    description: 'Always `no-store`: answers carry personal data or tokens.',
    required: true,
    schema: { type: 'string', const: 'no-store' },
    example: 'no-store',
  },
  'X-Content-Type-Options': {
    description: 'Always `nosniff`.',
    required: true,
    schema: { type: 'string', const: 'nosniff' },
    example: 'nosniff',
  },
  ETag: {
    description:
      'Strong validator of the beneficiary, changing with every change (send it back in If-Match), or of its history, changing with every new entry. An idempotent replay carries the ETag of the create it replays.',
    required: true,
    schema: { type: 'string' },
    example: '"v1"',
  },
  'Idempotent-Replayed': {
    description: 'Present, and `true`, when an Idempotency-Key replayed an earlier create.',
    required: false,
    schema: { type: 'string', const: 'true' },
    example: 'true',
  },
  Location: {
    description: 'Path of the new beneficiary.',
    required: true,
    schema: { type: 'string' },
    example: '/v3/beneficiaries/1',
  },
  'WWW-Authenticate': {
    description:
      'RFC 6750 challenge: `Bearer error="invalid_token"` with a 401 about a token, `Bearer error="insufficient_scope", scope="…"` with a 403.',
    required: true,
    schema: { type: 'string' },
    example: 'Bearer error="invalid_token", error_description="The token is missing or invalid"',
  },
  'Retry-After': {
    description: 'Whole seconds until a request may succeed again.',
    required: true,
    schema: { type: 'integer', minimum: 1 },
    example: 30,
  },
  'RateLimit-Policy': {
    description:
      'The limit class the request drew from, IETF draft syntax: `"<class>";q=<quota>;w=<window seconds>`.',
    required: true,
    schema: { type: 'string' },
    example: '"write";q=10;w=60',
  },
  RateLimit: {
    description:
      'What is left of the bucket, IETF draft syntax: `"<class>";r=<remaining>;t=<seconds until full>`.',
    required: true,
    schema: { type: 'string' },
    example: '"write";r=9;t=6',
  },
  'X-RateLimit-Limit': {
    description: 'Requests per window of the limit class.',
    required: true,
    schema: { type: 'integer', minimum: 1 },
    example: 10,
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the bucket.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
    example: 9,
  },
  'X-RateLimit-Reset': {
    description: 'Seconds until the bucket is full again.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
    example: 6,
  },
  Allow: {
    description: 'The methods the path answers.',
    required: true,
    schema: { type: 'string' },
    example: 'GET, HEAD, POST',
  },
} as const satisfies Readonly<Record<string, HeaderComponent>>

/** The name of a header under `#/components/headers`. */
export type HeaderName = keyof typeof HEADERS
