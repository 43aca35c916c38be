import type {
  BeneficiaryService,
  QueryInput,
  RequestContext,
  Result,
} from '../core/beneficiary-service.js'
import {
  BadRequestError,
  isDomainError,
  type AnyDomainError,
  type FieldProblem,
} from '../core/errors.js'
import type { ApiRequest } from './api-request.js'
import type { ApiResponse } from './api-response.js'
import { ClientIpResolver } from './client-ip.js'
import { STATUS_BY_CODE, STATUS_BY_HTTP_CODE, type HttpErrorCode } from './error-status.js'
import { isJsonContentType, parseJsonBody } from './json-body.js'
import { buildOpenApiDocument } from './openapi.js'
import { parseQueryString } from './query-string.js'
import { setRateLimitHeaders } from './rate-limit-headers.js'
import { readinessBody, type ReadinessCheck } from './readiness.js'
import { requestIdFor } from './request-id.js'
import type { Route, RouteParams, ServerOperation, ServerRoute } from './route.js'
import { RouteTable } from './route-table.js'
import { ROUTES } from './routes.js'

/** Where the handler writes its one line per request; a pino logger fits. */
export interface HandlerLogger {
  /** One line per request: request id, method, route pattern, status, duration, client id. */
  info(fields: object, message?: string): void
  /** An unexpected error or a storage fault, without its message (D25). */
  error(fields: object, message?: string): void
}

/** Options of `createHandler`. */
export interface HandlerOptions {
  /** Prefix of the API paths; must equal the service's `basePath`. Default `/v3`. */
  readonly basePath?: string
  /**
   * Trusted proxies (D21): addresses, CIDR ranges, or `loopback`, `private`, `linklocal`. Only
   * requests from them have their `X-Forwarded-For` read. Default: none.
   */
  readonly trustProxy?: readonly string[]
  /** Receives one line per request and every unexpected error. Default: no logging. */
  readonly logger?: HandlerLogger
  /** Parts `/readyz` reports as `degraded` while they fail (D31). Default: none. */
  readonly readiness?: readonly ReadinessCheck[]
}

/** A transport-neutral request handler: plain request in, plain response out. */
export type ApiHandler = (request: ApiRequest) => Promise<ApiResponse>

const JSON_TYPE = 'application/json; charset=utf-8'
const HEALTH_BODY = JSON.stringify({ status: 'ok' })
const NO_QUERY: QueryInput = Object.freeze({})
const noLogger: HandlerLogger = { info() {}, error() {} }

/**
 * Creates the handler of the /v3 API (specification sections 4–9 and DECISIONS.md) over a
 * `BeneficiaryService`. It is a thin translation: it routes, reads headers and the JSON body,
 * calls one service method, and turns its `Result` or `DomainError` into a response with the
 * headers of D6, D20, D22–D24. Every rule of the domain lives in the service.
 *
 * @example
 * const handler = createHandler(service, { logger: pino() })
 * const response = await handler({
 *   method: 'GET', path: '/healthz', query: '', headers: {}, body: undefined, remoteAddress: '127.0.0.1',
 * })
 * // { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', … }, body: '{"status":"ok"}' }
 *
 * @throws TypeError when `basePath` or a `trustProxy` entry is malformed.
 */
export function createHandler(
  service: BeneficiaryService,
  options: HandlerOptions = {},
): ApiHandler {
  const handler = new RequestHandler(service, options)
  return (request) => handler.handle(request)
}

class RequestHandler {
  readonly #service: BeneficiaryService
  readonly #routes: RouteTable
  readonly #clientIp: ClientIpResolver
  readonly #logger: HandlerLogger
  readonly #readiness: readonly ReadinessCheck[]
  #openApi: string | undefined
  /** The server's own answers, one per operation that has no policy in the core. */
  readonly #answers: Readonly<
    Record<
      ServerOperation,
      (route: ServerRoute, requestId: string) => ApiResponse | Promise<ApiResponse>
    >
  > = {
    health: (route, requestId) => plain(route.status, HEALTH_BODY, requestId),
    ready: (route, requestId) => this.#ready(route, requestId),
    openapi: (route, requestId) => {
      this.#openApi ??= JSON.stringify(buildOpenApiDocument({ basePath: this.#routes.basePath }))
      return plain(route.status, this.#openApi, requestId)
    },
  }

  constructor(service: BeneficiaryService, options: HandlerOptions) {
    this.#service = service
    this.#routes = new RouteTable(options.basePath ?? '/v3', ROUTES)
    this.#clientIp = new ClientIpResolver(options.trustProxy ?? [])
    this.#logger = options.logger ?? noLogger
    this.#readiness = options.readiness ?? []
  }

  async handle(request: ApiRequest): Promise<ApiResponse> {
    const receivedAt = request.receivedAt ?? performance.now()
    const requestId = requestIdFor(request.headers['x-request-id'])
    const match = this.#routes.match(request.path)
    let response: ApiResponse
    let clientId: string | undefined
    if (match === undefined) {
      response = httpError(404, 'not_found', 'No resource lives at this path.', requestId)
    } else {
      const route = match.entry.routes[request.method]
      if (route === undefined) {
        const refused = httpError(
          405,
          'method_not_allowed',
          'This method is not allowed here.',
          requestId,
        )
        refused.headers['allow'] = match.entry.allow
        response = refused
      } else {
        try {
          const result = await this.#dispatch(route, match.params, request, requestId)
          response = result.response
          clientId = result.clientId
        } catch (error) {
          response = this.#failure(error, requestId, match.entry.pattern)
          if (isDomainError(error)) clientId = error.clientId
        }
      }
    }
    this.#logger.info({
      request_id: requestId,
      method: request.method,
      route: match?.entry.pattern ?? null,
      status: response.status,
      duration_ms: Math.round((performance.now() - receivedAt) * 100) / 100,
      client_id: clientId ?? null,
    })
    return response
  }

  async #dispatch(
    route: Route,
    params: RouteParams,
    request: ApiRequest,
    requestId: string,
  ): Promise<{ response: ApiResponse; clientId?: string | undefined }> {
    const body = readBody(request, route.policy?.body === true)
    if (body instanceof BodyRefusal) {
      return { response: httpError(body.status, body.code, body.message, requestId) }
    }
    if (route.kind === 'server') {
      return { response: await this.#answers[route.operation](route, requestId) }
    }
    const ctx = this.#context(request, requestId, route.policy.limitKey === 'ip')
    let query = NO_QUERY
    if (route.query !== undefined) {
      const parsed = parseQueryString(request.query)
      if (parsed === undefined) {
        const message = 'The query string has broken percent-encoding.'
        return { response: httpError(400, 'bad_request', message, requestId) }
      }
      query = parsed
    }
    const result = await route.invoke(this.#service, ctx, params, body, query)
    const response = success(route.status, result, requestId)
    if (route.status === 201) {
      response.headers['location'] = this.#routes.basePath + route.location(result.value)
    }
    return { response, clientId: result.clientId }
  }

  /**
   * `ip` only for the operations limited per client address (D21): reading the peer from the
   * socket is not free, and no other operation uses it. Called before the first `await` of a
   * request, while a transport can still read its socket.
   */
  #context(request: ApiRequest, requestId: string, withIp: boolean): RequestContext {
    const headers = request.headers
    return {
      token: bearerToken(headers['authorization']),
      ip: withIp
        ? this.#clientIp.resolve(request.remoteAddress, headers['x-forwarded-for'])
        : undefined,
      requestId,
      idempotencyKey: headers['idempotency-key'],
      ifMatch: headers['if-match'],
    }
  }

  async #ready(route: ServerRoute, requestId: string): Promise<ApiResponse> {
    try {
      await this.#service.ready()
    } catch (error) {
      this.#logger.error({ request_id: requestId, route: route.path, err: describeError(error) })
      return httpError(503, 'service_unavailable', 'The database does not answer.', requestId)
    }
    return plain(route.status, await readinessBody(this.#readiness), requestId)
  }

  #failure(error: unknown, requestId: string, pattern: string): ApiResponse {
    if (!isDomainError(error)) {
      this.#logger.error({ request_id: requestId, route: pattern, err: describeError(error) })
      return httpError(500, 'internal_error', 'An unexpected error occurred.', requestId)
    }
    // A storage fault (disk full, lock held too long) is the operator's to see, not only the client's.
    if (error.code === 'service_unavailable') {
      this.#logger.error({ request_id: requestId, route: pattern, err: describeError(error.cause) })
    }
    return domainError(error, requestId)
  }
}

/** Why a body cannot reach the service: the status and the standard body's fields (D12). */
class BodyRefusal {
  readonly status: number
  readonly code: HttpErrorCode | 'bad_request'
  readonly message: string

  constructor(code: HttpErrorCode | 'bad_request', message: string) {
    this.code = code
    this.status = code === 'bad_request' ? STATUS_BY_CODE[code] : STATUS_BY_HTTP_CODE[code]
    this.message = message
  }
}

const TOO_LARGE = new BodyRefusal('payload_too_large', 'The request body is larger than 1 MiB.')
const TIMED_OUT = new BodyRefusal('request_timeout', 'The request body did not arrive in time.')
const NOT_JSON = new BodyRefusal(
  'unsupported_media_type',
  'The request body must be application/json.',
)

function readBody(request: ApiRequest, takesBody: boolean): unknown {
  if (request.bodyError !== undefined)
    return request.bodyError === 'timeout' ? TIMED_OUT : TOO_LARGE
  const bytes = request.body
  if (bytes === undefined || bytes.byteLength === 0) return undefined
  if (!isJsonContentType(request.headers['content-type'])) return NOT_JSON
  // A JSON body on an operation that takes none (GET, DELETE) is ignored, as HTTP allows.
  if (!takesBody) return undefined
  // Parsed only once the service has admitted the request (token and limit), not before.
  return () => {
    const parsed = parseJsonBody(bytes)
    if (!parsed.ok) throw new BadRequestError(parsed.message)
    return parsed.value
  }
}

/** Why a transport refuses a request that its handler never sees. */
export type TransportRefusal = 'framing' | 'malformed' | 'timeout' | 'headers_too_large'

const REFUSALS: Readonly<Record<TransportRefusal, BodyRefusal>> = {
  framing: new BodyRefusal(
    'bad_request',
    'The request has conflicting or unsupported Content-Length or Transfer-Encoding headers.',
  ),
  malformed: new BodyRefusal('bad_request', 'The request is not well-formed HTTP/1.1.'),
  timeout: new BodyRefusal('request_timeout', 'The request did not arrive in time.'),
  headers_too_large: new BodyRefusal(
    'request_header_fields_too_large',
    'The request headers are too large.',
  ),
}

/**
 * The answer to a request a transport refuses before its handler can see it (D12): framing that
 * could smuggle a request (RFC 9112, 6.3) or malformed HTTP (400), headers over the transport's
 * limit (431), headers that did not arrive in time (408). The standard error body with a new
 * request id; nothing about such a request is trusted, so nothing of it is routed, limited or
 * logged. The transport closes the connection after it.
 */
export function refusalResponse(refusal: TransportRefusal): ApiResponse {
  const { status, code, message } = REFUSALS[refusal]
  return httpError(status, code, message, requestIdFor(undefined))
}

function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  // The scheme is case-insensitive (RFC 9110); anything but Bearer is no token at all.
  if (header.length < 8 || header.slice(0, 7).toLowerCase() !== 'bearer ') return undefined
  const token = header.slice(7).trim()
  return token === '' ? undefined : token
}

function baseHeaders(requestId: string): Record<string, string> {
  return {
    'content-type': JSON_TYPE,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'x-request-id': requestId,
  }
}

/** A response still being put together. */
interface DraftResponse extends ApiResponse {
  readonly headers: Record<string, string>
}

function plain(status: number, body: string, requestId: string): DraftResponse {
  return { status, headers: baseHeaders(requestId), body }
}

function success(status: number, result: Result<unknown>, requestId: string): DraftResponse {
  const headers = baseHeaders(requestId)
  if (result.etag !== undefined) headers['etag'] = result.etag
  if (result.replayed === true) headers['idempotent-replayed'] = 'true'
  if (result.rateLimit !== undefined) setRateLimitHeaders(headers, result.rateLimit)
  if (status === 204) {
    delete headers['content-type']
    return { status, headers, body: undefined }
  }
  return { status, headers, body: JSON.stringify(result.value) }
}

function httpError(
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

function domainError(error: AnyDomainError, requestId: string): DraftResponse {
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

/**
 * What is logged of an unexpected error: its class, code and stack frames, but not its message,
 * which may quote a value from the request or an SQL statement (D25).
 */
function describeError(error: unknown): object {
  if (!(error instanceof Error)) return { type: typeof error }
  const code = (error as { code?: unknown }).code
  const frames = (error.stack ?? '')
    .split('\n')
    .filter((line) => line.startsWith('    at '))
    .map((line) => line.trim())
  return { type: error.name, ...(typeof code === 'string' && { code }), frames }
}
