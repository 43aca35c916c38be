import type { BeneficiaryService, QueryInput, RequestContext } from '../core/beneficiary-service.js'
import { isDomainError } from '../core/errors.js'
import type { ApiRequest } from './api-request.js'
import type { ApiResponse } from './api-response.js'
import { bearerToken } from './bearer-token.js'
import { ClientIpResolver } from './client-ip.js'
import { CorsPolicy } from './cors.js'
import { ifNoneMatchHits } from './if-none-match-hits.js'
import { describeError } from './describe-error.js'
import { DocsPage } from './docs-page.js'
import { MetricsEndpoint, type MetricsOptions } from './metrics/metrics-endpoint.js'
import { buildOpenApiDocument } from './openapi.js'
import { parseQueryString } from './query-string.js'
import { readinessBody, type ReadinessCheck } from './readiness.js'
import { BodyRefusal, readBody, readUpload } from './request-body.js'
import { requestIdFor } from './request-id.js'
import { domainError, httpError, plain, success } from './responses.js'
import {
  honoursIfNoneMatch,
  type Route,
  type RouteParams,
  type ServerOperation,
  type ServerRoute,
} from './route.js'
import { RouteTable } from './route-table.js'
import { ROUTES } from './routes.js'
import type { RequestSpan, Tracing } from './tracing/tracing.js'

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
  /** Counts requests and answers `GET /metrics`. Default: no metrics, and `/metrics` is a 404. */
  readonly metrics?: MetricsOptions
  /** Serves the API reference page at `/docs` (needs `swagger-ui-dist`). Default: false. */
  readonly docs?: boolean
  /**
   * Origins whose browser scripts may call the API (CORS): `https://app.example.org`, …, or
   * `*` for any. Default: none, and no CORS header is sent.
   */
  readonly corsOrigins?: readonly string[]
  /**
   * OpenTelemetry tracing (`startTracing`): a span per request, named by its route template.
   * Default: none, and the requests are not wrapped at all.
   */
  readonly tracing?: Tracing
}

/** A transport-neutral request handler: plain request in, plain response out. */
export type ApiHandler = (request: ApiRequest) => Promise<ApiResponse>

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
 * @throws TypeError when `basePath`, a `trustProxy` entry or a `corsOrigins` entry is malformed.
 * @throws Error naming the package when `docs` is on and `swagger-ui-dist` is not installed.
 */
export function createHandler(
  service: BeneficiaryService,
  options: HandlerOptions = {},
): ApiHandler {
  const handler = new RequestHandler(service, options)
  // Chosen once: without tracing, a request meets no span and no wrapper.
  if (options.tracing === undefined) return (request) => handler.handle(request)
  return options.tracing.traceRequests((request, span) => handler.handle(request, span))
}

type ServerAnswer = (
  route: ServerRoute,
  requestId: string,
  request: ApiRequest,
  params: RouteParams,
) => ApiResponse | Promise<ApiResponse>

class RequestHandler {
  readonly #service: BeneficiaryService
  readonly #routes: RouteTable
  readonly #clientIp: ClientIpResolver
  readonly #logger: HandlerLogger
  readonly #readiness: readonly ReadinessCheck[]
  readonly #metrics: MetricsEndpoint | undefined
  readonly #docs: DocsPage | undefined
  readonly #cors: CorsPolicy | undefined
  /** The routes this handler answers: the table less the metrics and docs it was not given. */
  readonly #served: readonly Route[]
  /** The body of `GET /`: where the reference page and the OpenAPI document are. */
  readonly #index: string
  #openApi: string | undefined
  /** The server's own answers, one per operation that has no policy in the core. */
  readonly #answers: Readonly<Record<ServerOperation, ServerAnswer>> = {
    health: (route, requestId) => plain(route.status, HEALTH_BODY, requestId),
    ready: (route, requestId) => this.#ready(route, requestId),
    openapi: (route, requestId) => {
      const basePath = this.#routes.basePath
      this.#openApi ??= JSON.stringify(buildOpenApiDocument({ basePath, routes: this.#served }))
      return plain(route.status, this.#openApi, requestId)
    },
    metrics: (route, requestId, request) => this.#scrape(route, requestId, request),
    docs: (route, requestId, _request, [name]) =>
      this.#docs?.answer(name, plain(route.status, '', requestId)) ??
      httpError(404, 'not_found', 'No resource lives at this path.', requestId),
    index: (route, requestId) => plain(route.status, this.#index, requestId),
  }

  constructor(service: BeneficiaryService, options: HandlerOptions) {
    this.#service = service
    this.#metrics = options.metrics === undefined ? undefined : new MetricsEndpoint(options.metrics)
    const basePath = options.basePath ?? '/v3'
    this.#docs = options.docs === true ? new DocsPage(`${basePath}/openapi.json`) : undefined
    this.#served = ROUTES.filter(
      (route) =>
        (route.operation !== 'metrics' || this.#metrics !== undefined) &&
        (route.operation !== 'docs' || this.#docs !== undefined),
    )
    this.#routes = new RouteTable(basePath, this.#served)
    this.#index = JSON.stringify({
      name: 'beneficiary-service',
      ...(this.#docs !== undefined && { docs: '/docs' }),
      openapi: `${basePath}/openapi.json`,
      api: basePath === '' ? '/' : basePath,
    })
    this.#clientIp = new ClientIpResolver(options.trustProxy ?? [])
    this.#logger = options.logger ?? noLogger
    this.#readiness = options.readiness ?? []
    const origins = options.corsOrigins ?? []
    this.#cors = origins.length === 0 ? undefined : new CorsPolicy(origins)
  }

  async handle(request: ApiRequest, span?: RequestSpan): Promise<ApiResponse> {
    const receivedAt = request.receivedAt ?? performance.now()
    const requestId = requestIdFor(request.headers['x-request-id'])
    const match = this.#routes.match(request.path)
    if (span !== undefined && match !== undefined) span.route(match.entry.template)
    let response: ApiResponse
    let clientId: string | undefined
    let failure: unknown
    const preflight = this.#cors?.preflight(request, match?.entry, requestId)
    if (preflight !== undefined) {
      response = preflight
    } else if (match === undefined) {
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
          failure = error
          response = this.#failure(error, requestId, match.entry.pattern)
          if (isDomainError(error)) clientId = error.clientId
        }
      }
    }
    if (this.#cors !== undefined && preflight === undefined) {
      response = this.#cors.decorate(request, response)
    }
    const ms = performance.now() - receivedAt
    this.#logger.info({
      request_id: requestId,
      method: request.method,
      route: match?.entry.pattern ?? null,
      status: response.status,
      duration_ms: Math.round(ms * 100) / 100,
      client_id: clientId ?? null,
    })
    this.#metrics?.collector.observeRequest(
      match?.entry,
      request.method,
      response.status,
      ms / 1000,
      failure,
    )
    return response
  }

  async #dispatch(
    route: Route,
    params: RouteParams,
    request: ApiRequest,
    requestId: string,
  ): Promise<{ response: ApiResponse; clientId?: string | undefined }> {
    const uploads = route.kind === 'service' ? route.uploads : undefined
    const body =
      uploads === undefined
        ? readBody(request, route.policy?.body === true)
        : readUpload(request, uploads)
    if (body instanceof BodyRefusal) {
      return { response: httpError(body.status, body.code, body.message, requestId) }
    }
    if (route.kind === 'server') {
      return { response: await this.#answers[route.operation](route, requestId, request, params) }
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
    // Only once the token, the limit and the record have been checked (RFC 9110 13.2.1).
    const unchanged =
      result.etag !== undefined &&
      honoursIfNoneMatch(route) &&
      ifNoneMatchHits(request.headers['if-none-match'], result.etag)
    const response = success(unchanged ? 304 : route.status, result, requestId)
    if (route.status === 201 || route.status === 202) {
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
      purpose: headers['x-purpose'],
    }
  }

  async #ready(route: ServerRoute, requestId: string): Promise<ApiResponse> {
    try {
      await this.#service.ready()
    } catch (error) {
      this.#logger.error({ request_id: requestId, route: route.path, err: describeError(error) })
      this.#metrics?.collector.observeProbeFailure(error)
      return httpError(503, 'service_unavailable', 'The database does not answer.', requestId)
    }
    return plain(route.status, await readinessBody(this.#readiness), requestId)
  }

  /** `GET /metrics`, a route only when the handler was given metrics. */
  async #scrape(route: ServerRoute, requestId: string, request: ApiRequest): Promise<ApiResponse> {
    const metrics = this.#metrics
    if (metrics === undefined || !metrics.admits(request.headers['authorization'])) {
      const message = "The metrics need the operator's token."
      const refused = httpError(401, 'invalid_token', message, requestId)
      refused.headers['www-authenticate'] = 'Bearer realm="metrics", error="invalid_token"'
      return refused
    }
    const response = plain(route.status, await metrics.collector.scrape(), requestId)
    response.headers['content-type'] = metrics.collector.contentType
    return response
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
