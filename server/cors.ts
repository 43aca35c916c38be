import { RECORDED_OPERATIONS } from '../core/access-recorder.js'
import type { ApiRequest } from './api-request.js'
import type { ApiResponse } from './api-response.js'
import { HEADERS } from './openapi-components.js'
import { plain } from './responses.js'
import { honoursIfNoneMatch, type Route } from './route.js'
import type { PathEntry } from './route-table.js'

/**
 * Response headers a browser shows a script without being told (the Fetch standard's
 * CORS-safelisted response-header names); every other header the API sends is exposed.
 */
const SAFELISTED = new Set(['cache-control', 'content-language', 'content-type', 'expires'])

/** The API's response headers a cross-origin script may read: ETag, Location, RateLimit, … */
const EXPOSED = Object.keys(HEADERS)
  .filter((name) => !SAFELISTED.has(name.toLowerCase()))
  .join(', ')

/** How long a browser may keep a preflight's answer: 10 minutes (Chromium keeps at most 2 h). */
const MAX_AGE_SECONDS = '600'

/**
 * Checks and normalises one entry of an origin list: `*` (any origin), or an origin: scheme,
 * host and port, nothing else (`https://app.example.org`, `http://127.0.0.1:5173`), written as a
 * browser sends it in `Origin` (lower case, no default port: `https://App.example.org:443`
 * becomes `https://app.example.org`).
 * @throws TypeError naming the entry when it is not one.
 */
export function corsOrigin(entry: string): string {
  if (entry === '*') return entry
  let url: URL | undefined
  try {
    url = new URL(entry)
  } catch {
    url = undefined
  }
  if (
    url === undefined ||
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.pathname !== '/' ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== '' ||
    url.password !== ''
  ) {
    throw new TypeError(
      `${JSON.stringify(entry)} is not an origin: give scheme, host and port only, such as https://app.example.org`,
    )
  }
  return url.origin
}

/**
 * Cross-origin access by browsers, per the CORS protocol of the Fetch standard: which origins'
 * scripts may call the API, answered with `Access-Control-Allow-Origin` naming the origin (the
 * API uses bearer tokens, never cookies, so no credentials mode is needed), the response
 * headers they may read, and preflights (`OPTIONS` with `Access-Control-Request-Method`)
 * answered 204 from the route table: the methods the path answers, the request headers its
 * route for the asked method reads. Every response says `Vary: Origin`. A preflight from an
 * origin not on the list is answered as without CORS (405), so the browser refuses the call.
 *
 * @example
 * const cors = new CorsPolicy(['https://app.example.org'])
 */
export class CorsPolicy {
  readonly #origins: ReadonlySet<string>
  readonly #any: boolean

  /** @throws TypeError when an entry is not an origin or `*` (see `corsOrigin`). */
  constructor(origins: readonly string[]) {
    const normalised = origins.map(corsOrigin)
    this.#any = normalised.includes('*')
    this.#origins = new Set(normalised)
  }

  /** The answer to a preflight from an allowed origin on a known path; else `undefined`. */
  preflight(
    request: ApiRequest,
    entry: PathEntry | undefined,
    requestId: string,
  ): ApiResponse | undefined {
    const asked = request.headers['access-control-request-method']
    const origin = this.#allowed(request.headers['origin'])
    if (request.method !== 'OPTIONS' || asked === undefined || origin === undefined)
      return undefined
    if (entry === undefined) return undefined
    const response = plain(204, '', requestId)
    delete response.headers['content-type']
    const route = entry.routes[asked]
    Object.assign(response.headers, {
      'access-control-allow-origin': origin,
      'access-control-allow-methods': entry.allow,
      ...(route !== undefined && { 'access-control-allow-headers': requestHeaders(route) }),
      'access-control-max-age': MAX_AGE_SECONDS,
      vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
    })
    return { ...response, body: undefined }
  }

  /** `response` with the CORS headers of an actual (not preflight) request added. */
  decorate(request: ApiRequest, response: ApiResponse): ApiResponse {
    const origin = this.#allowed(request.headers['origin'])
    const headers: Record<string, string> = { ...response.headers }
    headers['vary'] = headers['vary'] === undefined ? 'Origin' : `${headers['vary']}, Origin`
    if (origin !== undefined) {
      headers['access-control-allow-origin'] = origin
      headers['access-control-expose-headers'] = EXPOSED
    }
    return { ...response, headers }
  }

  /** What `Access-Control-Allow-Origin` says to `origin`, or `undefined` when it is not allowed. */
  #allowed(origin: string | undefined): string | undefined {
    if (origin === undefined) return undefined
    if (this.#any) return '*'
    return this.#origins.has(origin) ? origin : undefined
  }
}

/**
 * The request headers a route reads beyond the CORS-safelisted ones: its request id always; the
 * bearer token where it needs one (the metrics too); a JSON body's type; Idempotency-Key,
 * If-Match and If-None-Match where it honours them.
 */
function requestHeaders(route: Route): string {
  const names = ['X-Request-Id']
  const service = route.kind === 'service' ? route : undefined
  if (service === undefined ? route.operation === 'metrics' : service.policy.authenticated) {
    names.push('Authorization')
  }
  if (service?.policy.body === true) names.push('Content-Type')
  if (service?.idempotencyKey === true) names.push('Idempotency-Key')
  if (service?.ifMatch === true) names.push('If-Match')
  if (service !== undefined && RECORDED_OPERATIONS.has(service.operation)) names.push('X-Purpose')
  if (honoursIfNoneMatch(route)) names.push('If-None-Match')
  return names.join(', ')
}
