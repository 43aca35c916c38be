import {
  CORE_SCHEMAS,
  ERROR_DESCRIPTIONS,
  HEADERS,
  SERVER_SCHEMAS,
  type ErrorStatus,
  type HeaderName,
  type Json,
} from './openapi-components.js'
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
    description: 'Beneficiary id. Anything but a positive integer in range is 404 (D12).',
    schema: { type: 'integer', minimum: 1 },
  },
}

const COMMON_HEADERS: readonly HeaderName[] = [
  'X-Request-Id',
  'Cache-Control',
  'X-Content-Type-Options',
]
const RATE_HEADERS: readonly HeaderName[] = [
  'RateLimit-Policy',
  'RateLimit',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
]
/** Refusals of a body, answered before the request reaches the limiter. */
const BODY_ERRORS: readonly ErrorStatus[] = [400, 408, 413, 415]
const ERROR_CONTENT = {
  'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } },
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
  for (const route of options.routes ?? ROUTES) {
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
      description:
        'HTTP/JSON API for managing beneficiaries. Every response carries X-Request-Id, Cache-Control: no-store and X-Content-Type-Options: nosniff (D24). HEAD is answered wherever GET is, with the same status, headers, scope and limit class and no body (D28). An unknown path is 404; a known path with a method it does not answer is 405 `method_not_allowed` with an Allow header (D12). PUT and the status transition answer with the record, so their token needs `read` as well as `write` (D29). Errors use the standard body (specification 7.1).',
    },
    servers: [{ url: '/' }],
    tags: [{ name: 'auth' }, { name: 'beneficiaries' }, { name: 'service' }],
    paths,
    components: {
      schemas: { ...CORE_SCHEMAS, ...SERVER_SCHEMAS },
      headers: HEADERS,
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
  // Plain JSON: no TypeBox symbols, and nothing shared with the constants it was built from.
  return JSON.parse(JSON.stringify(document)) as Json & { paths: Json }
}

function operationObject(route: Route): Json {
  const policy = route.policy
  const rateHeaders = policy === undefined ? [] : RATE_HEADERS
  const parameters: Json[] = [
    headerParameter('X-Request-Id', 'Echoed back when sane (D24).', false),
  ]
  const service = route.kind === 'service' ? route : undefined
  for (const [name, schema] of Object.entries(service?.query?.properties ?? {})) {
    parameters.push({ name, in: 'query', required: false, schema })
  }
  if (service?.idempotencyKey === true) {
    parameters.push(
      headerParameter(
        'Idempotency-Key',
        'At most 255 visible ASCII characters; the same key and body within 24 hours replays the original 201 (D22).',
        false,
      ),
    )
  }
  if (service?.ifMatch === true) {
    parameters.push(headerParameter('If-Match', 'A strong ETag, or `*` (D23).', false))
  }
  const conditional = honoursIfNoneMatch(route)
  if (conditional) {
    parameters.push(
      headerParameter(
        'If-None-Match',
        '`*`, or one or more ETags separated by commas: when one matches the current ETag (weak comparison, RFC 9110 13.1.2), or `*` is given, the answer is 304 with no body.',
        false,
      ),
    )
  }
  const responses: Record<string, Json> = {
    [String(route.status)]: {
      description: route.status === 204 ? 'Done, no content.' : 'Success.',
      headers: headerRefs([...COMMON_HEADERS, ...rateHeaders, ...successHeaders(route)]),
      ...(route.response !== undefined && {
        content: {
          [(route.kind === 'server' ? route.mediaType : undefined) ?? 'application/json']: {
            schema: { $ref: `#/components/schemas/${route.response}` },
          },
        },
      }),
    },
  }
  if (conditional) {
    responses['304'] = {
      description:
        'Not Modified: If-None-Match names the current ETag, or is `*`. No body; the token, its scope and the limit were checked first, and a missing beneficiary is still 404.',
      headers: headerRefs([...COMMON_HEADERS, ...rateHeaders, 'ETag']),
    }
  }
  for (const status of [...errorStatuses(route), 500] as const) {
    const extra: HeaderName[] = [
      ...(status === 401 || status === 403 ? (['WWW-Authenticate'] as const) : []),
      // A storage fault says when to try again; the readiness probe's 503 does not.
      ...(status === 429 || (status === 503 && service !== undefined)
        ? (['Retry-After'] as const)
        : []),
      ...(BODY_ERRORS.includes(status) ? [] : rateHeaders),
    ]
    responses[String(status)] = {
      description:
        (route.kind === 'server' ? route.errorDescription : undefined) ??
        (status === 403 && policy !== undefined
          ? scopeDescription(policy.scopes)
          : ERROR_DESCRIPTIONS[status]),
      headers: headerRefs([...COMMON_HEADERS, ...extra]),
      content: ERROR_CONTENT,
    }
  }
  responses['default'] = {
    description:
      'Any other error (such as 413 or 415 on an operation that takes no body), in the standard body.',
    headers: headerRefs(COMMON_HEADERS),
    content: ERROR_CONTENT,
  }
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
    ...(body !== undefined && {
      requestBody: {
        required: body.required,
        content: {
          'application/json': {
            schema:
              typeof body.schema === 'string'
                ? { $ref: `#/components/schemas/${body.schema}` }
                : body.schema,
          },
        },
      },
    }),
    responses,
  }
}

/** HEAD beside a GET (D28): the same operation, status and headers, never a body. */
function headOperation(get: Json): Json {
  const responses: Record<string, Json> = {}
  for (const [status, response] of Object.entries(get['responses'] as Record<string, Json>)) {
    responses[status] = Object.fromEntries(
      Object.entries(response).filter(([key]) => key !== 'content'),
    )
  }
  return {
    ...get,
    operationId: `${String(get['operationId'])}Head`,
    summary: `${String(get['summary'])} HEAD: the same answer without its body (D28).`,
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
  ]
}

/** The 403 of an operation, naming the scopes its token needs (D2, D29). */
function scopeDescription(scopes: readonly string[]): string {
  const names = scopes.map((scope) => `\`${scope}\``).join(' and ')
  const why = scopes.length > 1 ? ', since the answer carries the record (D29)' : ''
  return `${ERROR_DESCRIPTIONS[403]} The token must hold ${names}${why}.`
}

/** The headers a success may carry beyond the common and rate-limit ones. */
function successHeaders(route: Route): HeaderName[] {
  if (route.kind === 'server') return []
  return [
    ...(route.status === 201 ? (['Location'] as const) : []),
    ...(route.etag ? (['ETag'] as const) : []),
    ...(route.idempotencyKey ? (['Idempotent-Replayed'] as const) : []),
  ]
}

function headerParameter(name: string, description: string, required: boolean): Json {
  return { name, in: 'header', required, description, schema: { type: 'string' } }
}

function headerRefs(names: readonly HeaderName[]): Json {
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]))
}
