import type { TSchema } from 'typebox'
import {
  BeneficiaryCreated,
  BeneficiaryDetail,
  CreateBeneficiaryBody,
  ErrorBody,
  HistoryQueryParams,
  ListQueryParams,
  LoginBody,
  PagedBeneficiaries,
  PagedHistory,
  RefreshBody,
  RefreshResponse,
  StatusBody,
  TokenResponse,
  UpdateBeneficiaryBody,
} from '../core/validation/index.js'
import { ROUTES, type Operation } from './routes.js'

/** Options of `buildOpenApiDocument`. */
export interface OpenApiOptions {
  /** Prefix of the API paths. Default `/v3`. */
  readonly basePath?: string
}

/** A JSON object of the OpenAPI document. */
type Json = Record<string, unknown>

const SCHEMAS: Readonly<Record<string, TSchema>> = {
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
}

const HEADERS: Readonly<Record<string, { description: string; schema: Json }>> = {
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
}

/** What the document says about each operation beyond its route. */
interface OperationDoc {
  readonly summary: string
  readonly success: number
  readonly response?: string
  readonly body?: string | Json
  readonly bodyRequired?: boolean
  readonly scope?: 'read' | 'write'
  readonly token?: boolean
  readonly limit?: 'auth' | 'write' | 'standard'
  readonly query?: TSchema
  readonly headers?: readonly string[]
  readonly ifMatch?: boolean
  readonly idempotencyKey?: boolean
  readonly errors: readonly number[]
}

const AUTH_ERRORS = [401, 429]
const BODY_ERRORS = [400, 408, 413, 415]
/** A storage fault: the database is locked past its busy timeout, full, read-only or failing. */
const STORAGE_ERRORS = [503]

const OPERATIONS: Readonly<Record<Operation, OperationDoc>> = {
  login: {
    summary: 'Exchange client credentials for a token set (specification 4.2, D2, D3).',
    success: 200,
    response: 'TokenResponse',
    body: 'LoginBody',
    bodyRequired: true,
    limit: 'auth',
    errors: [...BODY_ERRORS, 401, 403, 422, 429, ...STORAGE_ERRORS],
  },
  refresh: {
    summary: 'Issue a new access token for a refresh token (D4). The refresh token is not rotated.',
    success: 200,
    response: 'RefreshResponse',
    body: 'RefreshBody',
    bodyRequired: true,
    limit: 'auth',
    errors: [...BODY_ERRORS, 401, 422, 429, ...STORAGE_ERRORS],
  },
  logout: {
    summary:
      'End the login session of the bearer token: the token and its refresh token stop working (D5).',
    success: 204,
    body: {
      type: 'object',
      properties: {
        refresh_token: {
          type: 'string',
          description: 'Accepted if it belongs to the same session.',
        },
      },
    },
    token: true,
    limit: 'standard',
    errors: [...BODY_ERRORS, ...AUTH_ERRORS, 422, ...STORAGE_ERRORS],
  },
  list: {
    summary: 'One page of beneficiaries, filtered and sorted (specification 4.3, D15–D18).',
    success: 200,
    response: 'PagedBeneficiaries',
    token: true,
    scope: 'read',
    limit: 'standard',
    query: ListQueryParams,
    errors: [400, ...AUTH_ERRORS, 403, 422, ...STORAGE_ERRORS],
  },
  create: {
    summary: 'Create a beneficiary in status pending (specification 4.5, D7–D9, D22).',
    success: 201,
    response: 'BeneficiaryCreated',
    body: 'CreateBeneficiaryBody',
    bodyRequired: true,
    token: true,
    scope: 'write',
    limit: 'write',
    idempotencyKey: true,
    headers: ['Location', 'ETag', 'Idempotent-Replayed'],
    errors: [...BODY_ERRORS, ...AUTH_ERRORS, 403, 422, ...STORAGE_ERRORS],
  },
  get: {
    summary: 'One beneficiary in the detail shape (specification 4.4).',
    success: 200,
    response: 'BeneficiaryDetail',
    token: true,
    scope: 'read',
    limit: 'standard',
    headers: ['ETag'],
    errors: [...AUTH_ERRORS, 403, 404, ...STORAGE_ERRORS],
  },
  update: {
    summary: 'Partial update; null clears an optional field (D11). Honours If-Match (D23).',
    success: 200,
    response: 'BeneficiaryDetail',
    body: 'UpdateBeneficiaryBody',
    bodyRequired: true,
    token: true,
    scope: 'write',
    limit: 'write',
    ifMatch: true,
    headers: ['ETag'],
    errors: [...BODY_ERRORS, ...AUTH_ERRORS, 403, 404, 412, 422, ...STORAGE_ERRORS],
  },
  remove: {
    summary:
      'Delete for good; the history keeps only who deleted what and when (D13, D27). Honours If-Match (D23).',
    success: 204,
    token: true,
    scope: 'write',
    limit: 'write',
    ifMatch: true,
    errors: [...AUTH_ERRORS, 403, 404, 412, ...STORAGE_ERRORS],
  },
  setStatus: {
    summary: 'Move a beneficiary between statuses (D14). Honours If-Match (D23).',
    success: 200,
    response: 'BeneficiaryDetail',
    body: 'StatusBody',
    bodyRequired: true,
    token: true,
    scope: 'write',
    limit: 'write',
    ifMatch: true,
    headers: ['ETag'],
    errors: [...BODY_ERRORS, ...AUTH_ERRORS, 403, 404, 412, 422, ...STORAGE_ERRORS],
  },
  history: {
    summary: "A beneficiary's history, oldest first, paged like the list (D27).",
    success: 200,
    response: 'PagedHistory',
    token: true,
    scope: 'read',
    limit: 'standard',
    query: HistoryQueryParams,
    errors: [400, ...AUTH_ERRORS, 403, 404, 422, ...STORAGE_ERRORS],
  },
  openapi: {
    summary: 'This document.',
    success: 200,
    response: 'OpenApiDocument',
    errors: [],
  },
  health: {
    summary: 'Liveness: the process is up. No token, not rate limited.',
    success: 200,
    response: 'ProbeStatus',
    errors: [],
  },
  ready: {
    summary: 'Readiness: the database answers. No token, not rate limited.',
    success: 200,
    response: 'ProbeStatus',
    errors: [503],
  },
}

const ERROR_DESCRIPTIONS: Readonly<Record<number, string>> = {
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
}

/**
 * The OpenAPI 3.1 document of the server, generated from the route table and the core's TypeBox
 * schemas (the same ones that validate requests): every path, operation, parameter, body,
 * response, error body and header. Paths include the base path; the probes live outside it.
 *
 * @example
 * const document = buildOpenApiDocument({ basePath: '/v3' })
 * Object.keys(document.paths) // ['/v3/auth/login', …, '/healthz', '/readyz']
 */
export function buildOpenApiDocument(options: OpenApiOptions = {}): Json & { paths: Json } {
  const basePath = options.basePath ?? '/v3'
  const paths: Record<string, Record<string, unknown>> = {}
  for (const route of ROUTES) {
    const template = route.versioned ? basePath + route.path : route.path
    const item = (paths[template] ??= {})
    if (template.includes('{id}')) {
      item['parameters'] = [
        {
          name: 'id',
          in: 'path',
          required: true,
          description: 'Beneficiary id. Anything but a positive integer in range is 404 (D12).',
          schema: { type: 'integer', minimum: 1 },
        },
      ]
    }
    item[route.method.toLowerCase()] = operationObject(route.operation)
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Beneficiary service',
      version: '3.0.3',
      description:
        'HTTP/JSON API for managing beneficiaries. Every response carries X-Request-Id, Cache-Control: no-store and X-Content-Type-Options: nosniff (D24). An unknown path is 404; a known path with a method it does not answer is 405 `method_not_allowed` with an Allow header (D12). Errors use the standard body (specification 7.1).',
    },
    servers: [{ url: '/' }],
    tags: [{ name: 'auth' }, { name: 'beneficiaries' }, { name: 'service' }],
    paths,
    components: {
      schemas: {
        ...Object.fromEntries(
          Object.entries(SCHEMAS).map(([name, schema]) => [name, plainSchema(schema)]),
        ),
        ProbeStatus: {
          type: 'object',
          required: ['status'],
          properties: { status: { type: 'string' } },
        },
        OpenApiDocument: { type: 'object', required: ['openapi', 'paths'] },
      },
      headers: Object.fromEntries(
        Object.entries(HEADERS).map(([name, header]) => [name, { ...header }]),
      ),
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'Access token from POST /auth/login (specification 5).',
        },
      },
    },
  }
}

function operationObject(operation: Operation): Json {
  const doc = OPERATIONS[operation]
  const limited = doc.limit !== undefined
  const common = ['X-Request-Id', 'Cache-Control', 'X-Content-Type-Options']
  const rateHeaders = limited
    ? [
        'RateLimit-Policy',
        'RateLimit',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
      ]
    : []
  const parameters: Json[] = [
    headerParameter('X-Request-Id', 'Echoed back when sane (D24).', false),
  ]
  if (doc.query !== undefined) {
    const properties = (doc.query as unknown as { properties: Record<string, TSchema> }).properties
    for (const [name, schema] of Object.entries(properties)) {
      parameters.push({ name, in: 'query', required: false, schema: plainSchema(schema) })
    }
  }
  if (doc.idempotencyKey === true) {
    parameters.push(
      headerParameter(
        'Idempotency-Key',
        'At most 255 visible ASCII characters; the same key and body within 24 hours replays the original 201 (D22).',
        false,
      ),
    )
  }
  if (doc.ifMatch === true) {
    parameters.push(headerParameter('If-Match', 'A strong ETag, or `*` (D23).', false))
  }
  const responses: Record<string, Json> = {
    [String(doc.success)]: {
      description: doc.success === 204 ? 'Done, no content.' : 'Success.',
      headers: headerRefs([...common, ...rateHeaders, ...(doc.headers ?? [])]),
      ...(doc.response !== undefined && {
        content: {
          'application/json': { schema: { $ref: `#/components/schemas/${doc.response}` } },
        },
      }),
    },
  }
  for (const status of [...doc.errors, 500]) {
    const extra = [
      ...(status === 401 || status === 403 ? ['WWW-Authenticate'] : []),
      ...(status === 429 || (status === 503 && operation !== 'ready') ? ['Retry-After'] : []),
      ...(limited && status !== 400 && status !== 408 && status !== 413 && status !== 415
        ? rateHeaders
        : []),
    ]
    responses[String(status)] = {
      description:
        operation === 'ready'
          ? '`service_unavailable`: the database does not answer.'
          : (ERROR_DESCRIPTIONS[status] ?? 'Error.'),
      headers: headerRefs([...common, ...extra]),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
    }
  }
  responses['default'] = {
    description:
      'Any other error (such as 413 or 415 on an operation that takes no body), in the standard body.',
    headers: headerRefs(common),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
  }
  const body = doc.body
  return {
    operationId: operation,
    tags: [operationTag(operation)],
    summary: doc.summary,
    ...(doc.token === true ? { security: [{ bearerAuth: [] }] } : { security: [] }),
    ...(doc.scope !== undefined && { 'x-required-scope': doc.scope }),
    ...(limited && { 'x-rate-limit-class': doc.limit }),
    parameters,
    ...(body !== undefined && {
      requestBody: {
        required: doc.bodyRequired === true,
        content: {
          'application/json': {
            schema: typeof body === 'string' ? { $ref: `#/components/schemas/${body}` } : body,
          },
        },
      },
    }),
    responses,
  }
}

function operationTag(operation: Operation): string {
  if (operation === 'login' || operation === 'refresh' || operation === 'logout') return 'auth'
  if (operation === 'openapi' || operation === 'health' || operation === 'ready') return 'service'
  return 'beneficiaries'
}

function headerParameter(name: string, description: string, required: boolean): Json {
  return { name, in: 'header', required, description, schema: { type: 'string' } }
}

function headerRefs(names: readonly string[]): Json {
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]))
}

/** The schema as plain JSON: TypeBox schemas are JSON Schema already; this drops nothing but symbols. */
function plainSchema(schema: TSchema): Json {
  return JSON.parse(JSON.stringify(schema)) as Json
}
