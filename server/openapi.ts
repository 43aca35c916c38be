import { HEADERS, SCHEMAS, type Json } from './openapi-components.js'
import { RECORDED_OPERATIONS } from '../core/access-recorder.js'
import type { ErrorStatus } from './openapi-errors.js'
import { PARAMETER_EXAMPLES, REQUEST_EXAMPLES } from './openapi-examples.js'
import {
  defaultResponse,
  errorResponse,
  METHOD_NOT_ALLOWED,
  notModifiedResponse,
  successResponse,
} from './openapi-responses.js'
import { honoursIfNoneMatch, type Route } from './route.js'
import { ROUTES } from './routes.js'

/** Options of `buildOpenApiDocument`. */
export interface OpenApiOptions {
  /** Prefix of the API paths. Default `/v3`. */
  readonly basePath?: string
  /** The routes the server answers. Default: every route, `/metrics` included. */
  readonly routes?: readonly Route[]
}

/** What each `{name}` segment of a path template stands for. */
const PATH_PARAMETERS: Readonly<Record<string, Json>> = {
  id: {
    name: 'id',
    in: 'path',
    required: true,
    description: 'Beneficiary id. Anything but a positive integer in range is answered 404.',
    schema: { type: 'integer', minimum: 1 },
    example: PARAMETER_EXAMPLES['id'],
  },
}

/** Refusals of a body, answered before the request reaches the service. */
const BODY_ERRORS: readonly ErrorStatus[] = [400, 408, 413, 415]

const DESCRIPTION = `HTTP/JSON API for managing beneficiaries: the people registered with a client system such as a welfare or benefit programme.

Log in with client credentials (\`POST /v3/auth/login\`) and send the access token as \`Authorization: Bearer …\`. A token holds the scopes \`read\` (every GET) and \`write\` (changes); PUT and the status transition answer with the record, so their token needs \`read\` as well as \`write\`. The scope \`audit\`, granted only to a client created with it, reads a beneficiary's access log and its subject-access export; \`read\` alone does not.

Every response carries \`X-Request-Id\`, \`Cache-Control: no-store\` and \`X-Content-Type-Options: nosniff\`. Errors use one body, \`{"error", "message", "code", "details"?, "retry_after"?, "request_id"}\`, with \`code\` equal to the HTTP status and \`error\` one of the \`ErrorCode\` identifiers. HEAD is answered wherever GET is, with the same status, headers, scope and limit class and no body. An unknown path is 404; a known path with a method it does not answer is 405 \`method_not_allowed\` with an \`Allow\` header.

Requests are limited per limit class by token buckets refilled over a minute: \`auth\` per client address (login, refresh), \`write\` and \`standard\` per client. Every limited answer carries the IETF RateLimit headers; an empty bucket answers 429 with \`Retry-After\`.`

/**
 * The OpenAPI 3.1 document of the server, generated from the route table and the core's TypeBox
 * schemas (the same ones that validate requests): every path, operation, parameter, body,
 * response, error identifier and header, with examples. Paths include the base path; the
 * probes live outside it. The API reference page's own routes are left out.
 *
 * @example
 * const document = buildOpenApiDocument({ basePath: '/v3' })
 * Object.keys(document.paths) // ['/v3/auth/login', …, '/healthz', '/readyz']
 */
export function buildOpenApiDocument(options: OpenApiOptions = {}): Json & { paths: Json } {
  const basePath = options.basePath ?? '/v3'
  const paths: Record<string, Record<string, unknown>> = {}
  for (const route of options.routes ?? ROUTES) {
    if (route.kind === 'server' && route.documented === false) continue
    const template = route.versioned ? basePath + route.path : route.path
    const item = (paths[template] ??= {})
    const names = [...template.matchAll(/\{([^}]*)\}/g)].map((found) => found[1]!)
    if (names.length > 0) item['parameters'] = names.map((name) => PATH_PARAMETERS[name]!)
    const operation = operationObject(route)
    item[route.method.toLowerCase()] = operation
    if (route.method === 'GET') item['head'] = headOperation(operation)
  }
  const document = {
    openapi: '3.1.0',
    info: {
      title: 'Beneficiary service',
      version: '3.0.3',
      description: DESCRIPTION,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'The server that serves this document.' }],
    tags: [
      { name: 'auth', description: 'Log in, refresh an access token, log out.' },
      {
        name: 'beneficiaries',
        description: 'Create, list, read, update, delete beneficiaries; their status and history.',
      },
      { name: 'service', description: 'This document and the probes; no token needed.' },
    ],
    paths: withRefs(paths),
    components: {
      schemas: componentSchemas(),
      headers: HEADERS,
      responses: { MethodNotAllowed: METHOD_NOT_ALLOWED },
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'The access token from POST /auth/login or /auth/refresh.',
        },
      },
    },
  }
  // Plain JSON: no TypeBox symbols, and nothing shared with the constants it was built from.
  return JSON.parse(JSON.stringify(document)) as Json & { paths: Json }
}

function operationObject(route: Route): Json {
  const policy = route.policy
  const parameters: Json[] = [
    headerParameter(
      'X-Request-Id',
      'Your own request id, echoed back in `X-Request-Id` when it is 1–128 characters of A–Z a–z 0–9 . _ : -.',
    ),
  ]
  const service = route.kind === 'service' ? route : undefined
  for (const [name, schema] of Object.entries(service?.query?.properties ?? {})) {
    const example = PARAMETER_EXAMPLES[name]
    parameters.push({
      name,
      in: 'query',
      required: false,
      schema,
      ...(example !== undefined && { example }),
    })
  }
  if (service !== undefined && RECORDED_OPERATIONS.has(service.operation)) {
    parameters.push(
      headerParameter(
        'X-Purpose',
        'Why you read the data, recorded with the answer in the access log: 1–200 visible ASCII characters and spaces; anything else is 422 `validation_failed` naming `X-Purpose`.',
      ),
    )
  }
  if (service?.idempotencyKey === true) {
    parameters.push(
      headerParameter(
        'Idempotency-Key',
        'At most 255 visible ASCII characters. The same key with the same body within 24 hours replays the original 201 and creates nothing; with another body it is 422 `idempotency_key_reused`.',
      ),
    )
  }
  if (service?.ifMatch === true) {
    parameters.push(
      headerParameter(
        'If-Match',
        'The ETag of the version you last read, or `*`; a stale one is 412 `precondition_failed` and changes nothing.',
      ),
    )
  }
  const conditional = honoursIfNoneMatch(route)
  if (conditional) {
    parameters.push(
      headerParameter(
        'If-None-Match',
        '`*`, or one or more ETags separated by commas: when one matches the current ETag (weak comparison, RFC 9110 13.1.2), or `*` is given, the answer is 304 with no body.',
      ),
    )
  }
  const responses: Record<string, Json> = { [String(route.status)]: successResponse(route) }
  if (conditional) responses['304'] = notModifiedResponse(route)
  for (const status of [...errorStatuses(route), 500]) {
    responses[String(status)] = errorResponse(route, status)
  }
  responses['405'] = { $ref: '#/components/responses/MethodNotAllowed' }
  responses['default'] = defaultResponse(Object.keys(responses))
  const body = service?.requestBody
  return {
    operationId: route.operation,
    tags: [route.tag],
    summary: route.summary,
    // OpenAPI 3.1 lets a bearer requirement list the scopes (roles) it needs.
    security: policy?.authenticated === true ? [{ bearerAuth: policy.scopes }] : [],
    ...(policy !== undefined && policy.scopes.length > 0 && { 'x-required-scopes': policy.scopes }),
    ...(policy !== undefined && { 'x-rate-limit-class': policy.limitClass }),
    parameters,
    ...(body !== undefined &&
      service !== undefined && {
        requestBody: {
          required: body.required,
          content: Object.fromEntries(
            (service.uploads ?? ['application/json']).map((type) => [
              type,
              {
                schema: typeof body.schema === 'string' ? SCHEMAS[body.schema] : body.schema,
                examples: REQUEST_EXAMPLES[service.operation],
              },
            ]),
          ),
        },
      }),
    responses,
  }
}

/** HEAD beside a GET: the same operation, status and headers, never a body. */
function headOperation(get: Json): Json {
  const responses: Record<string, Json> = {}
  for (const [status, response] of Object.entries(get['responses'] as Record<string, Json>)) {
    const resolved = status === '405' ? METHOD_NOT_ALLOWED : response
    responses[status] = Object.fromEntries(
      Object.entries(resolved).filter(([key]) => key !== 'content'),
    )
  }
  return {
    ...get,
    operationId: `${String(get['operationId'])}Head`,
    summary: `${String(get['summary'])} HEAD: the same answer without its body.`,
    responses,
  }
}

/** The error statuses of a route: those its policy and its facts imply, then its own. */
function errorStatuses(route: Route): readonly ErrorStatus[] {
  if (route.kind === 'server') return route.errors
  const policy = route.policy
  return [
    ...(policy.body ? BODY_ERRORS : []),
    ...(route.query !== undefined ? ([400] as const) : []),
    ...(policy.authenticated ? ([401] as const) : []),
    ...(policy.scopes.length > 0 ? ([403] as const) : []),
    ...(route.ifMatch ? ([412] as const) : []),
    429,
    503,
    ...route.errors,
    // X-Purpose (D35) is validated wherever it is read.
    ...(RECORDED_OPERATIONS.has(route.operation) && !route.errors.includes(422)
      ? ([422] as const)
      : []),
  ]
}

function headerParameter(name: string, description: string): Json {
  return { name, in: 'header', required: false, description, schema: { type: 'string' } }
}

/** Every component schema, the components inside it written as references. */
function componentSchemas(): Json {
  return Object.fromEntries(
    Object.entries(SCHEMAS).map(([name, schema]) => [name, withRefs(schema, schema)]),
  )
}

/** The component of each schema object, found by identity. */
const COMPONENT_OF: ReadonlyMap<object, string> = new Map(
  Object.entries(SCHEMAS).map(([name, schema]) => [schema as object, name]),
)

/**
 * A copy of `value` where every schema that is a component (but `self`, the component being
 * written) is a `$ref` to it: one `Address`, not one copy per body that holds it.
 */
function withRefs(value: unknown, self?: object): unknown {
  if (Array.isArray(value)) return value.map((item) => withRefs(item))
  if (value === null || typeof value !== 'object') return value
  const name = COMPONENT_OF.get(value)
  if (name !== undefined && value !== self) return { $ref: `#/components/schemas/${name}` }
  const copy: Json = {}
  for (const [key, item] of Object.entries(value)) copy[key] = withRefs(item)
  return copy
}
