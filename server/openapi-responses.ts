import { HEADERS, type HeaderName, type Json } from './openapi-components.js'
import { codesFor, codesOfStatus, errorExamples, meaningOf } from './openapi-errors.js'
import { SUCCESS_EXAMPLES } from './openapi-examples.js'
import type { Route } from './route.js'

// The responses of each operation, with the headers each really carries: read from the handler
// (`server/handler.ts`) and the core's admission, which checks a token (401), then takes from
// the limit class (429), then checks the scopes (403), then does the work. Rate-limit headers
// come with every answer given after the limiter, and with none before it.

/** Headers every answer carries. */
const COMMON: readonly HeaderName[] = ['X-Request-Id', 'Cache-Control', 'X-Content-Type-Options']
const RATE: readonly HeaderName[] = [
  'RateLimit-Policy',
  'RateLimit',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
]

/**
 * A header of a response: `true` when it comes as its component says (every answer, unless
 * the component says otherwise), or the words saying when it comes, for a header that only
 * some answers of the response carry.
 */
type HeaderUse = readonly [HeaderName, true | string]

/** Statuses any request may meet before it reaches an operation, in the `default` response. */
const REFUSALS = [400, 408, 413, 415, 431] as const

const SCHEMA_REF = (name: string): Json => ({ $ref: `#/components/schemas/${name}` })

/** The success response of `route`. */
export function successResponse(route: Route): Json {
  const uses: HeaderUse[] = COMMON.map((name) => [name, true])
  if (route.policy !== undefined) uses.push(...RATE.map((name): HeaderUse => [name, true]))
  if (route.kind === 'service') {
    if (route.status === 201 || route.status === 202) uses.push(['Location', true])
    if (route.etag) uses.push(['ETag', true])
    if (route.idempotencyKey) uses.push(['Idempotent-Replayed', true])
  }
  const operation = route.operation
  const examples =
    operation === 'docs' || operation === 'index' ? undefined : SUCCESS_EXAMPLES[operation]
  return {
    description: route.status === 204 ? 'Done, no content.' : 'Success.',
    headers: headerObjects(uses),
    ...(route.response !== undefined && {
      content: {
        [route.mediaType ?? 'application/json']: {
          schema: SCHEMA_REF(route.response),
          examples,
        },
      },
    }),
  }
}

/** The 304 of a route that honours If-None-Match: the success's headers, less its body. */
export function notModifiedResponse(route: Route): Json {
  const uses: HeaderUse[] = COMMON.map((name) => [name, true])
  if (route.policy !== undefined) uses.push(...RATE.map((name): HeaderUse => [name, true]))
  uses.push(['ETag', true])
  return {
    description:
      'Not Modified: If-None-Match names the current ETag, or is `*`. No body; the token, its scope and the limit were checked first, and a missing beneficiary is still 404.',
    headers: headerObjects(uses),
  }
}

/** The response of `route` with an error `status`, its identifiers, examples and headers. */
export function errorResponse(route: Route, status: number): Json {
  const codes = codesFor(route, status)
  const policy = route.policy
  let description = meaningOf(codes)
  if (route.kind === 'server' && route.errorDescription !== undefined) {
    description = route.errorDescription
  } else if (status === 403 && policy !== undefined && policy.scopes.length > 0) {
    description += ` ${scopeSentence(policy.scopes)}`
  }
  return {
    description: capitalised(description),
    headers: headerObjects(errorHeaders(route, status, codes)),
    content: {
      'application/json': {
        schema: SCHEMA_REF('ErrorBody'),
        examples: errorExamples(route, codes),
      },
    },
  }
}

/** The `default` response of an operation: the refusals it does not list, in the standard body. */
export function defaultResponse(listed: readonly string[]): Json {
  const codes = REFUSALS.filter((status) => !listed.includes(String(status))).flatMap(codesOfStatus)
  return {
    description: `Any other error, in the standard body, such as a refusal before the request reaches the operation. ${capitalised(meaningOf(codes))}`,
    headers: headerObjects(COMMON.map((name) => [name, true])),
    content: {
      'application/json': {
        schema: SCHEMA_REF('ErrorBody'),
        examples: errorExamples(undefined, codes),
      },
    },
  }
}

/** The 405 every path answers for a method it does not serve, under `#/components/responses`. */
export const METHOD_NOT_ALLOWED: Json = {
  description: `Not this operation's method: a request with a method the path does not answer (such as PATCH). ${capitalised(meaningOf(['method_not_allowed']))}`,
  headers: headerObjects([...COMMON.map((name): HeaderUse => [name, true]), ['Allow', true]]),
  content: {
    'application/json': {
      schema: SCHEMA_REF('ErrorBody'),
      examples: errorExamples(undefined, ['method_not_allowed']),
    },
  },
}

function errorHeaders(route: Route, status: number, codes: readonly string[]): HeaderUse[] {
  const uses: HeaderUse[] = COMMON.map((name) => [name, true])
  const policy = route.policy
  if (policy === undefined) {
    // The metrics' operator token is a bearer token too: its 401 says so.
    if (status === 401 && route.operation === 'metrics') uses.push(['WWW-Authenticate', true])
    return uses
  }
  if (status === 401 || status === 403) {
    if (status === 403 || policy.authenticated) uses.push(['WWW-Authenticate', true])
    else if (codes.includes('invalid_token')) {
      uses.push(['WWW-Authenticate', 'With `invalid_token`; not with `invalid_credentials`.'])
    }
  }
  if (status === 429 || status === 503) uses.push(['Retry-After', true])
  const rate = rateHeaders(route, status)
  if (rate !== false) uses.push(...RATE.map((name): HeaderUse => [name, rate]))
  return uses
}

/** Whether an error answer of a limited route carries the rate-limit headers, and when. */
function rateHeaders(route: Route, status: number): true | string | false {
  const policy = route.policy!
  switch (status) {
    case 401:
      // The token is checked before the limiter; login and refresh are limited first.
      return !policy.authenticated
    case 400:
      // A broken query string is refused before the service; a broken body once admitted.
      return route.kind === 'service' && route.query === undefined && policy.body
    case 403:
    case 404:
    case 412:
    case 422:
    case 429:
      return true
    case 503:
      return 'When the request got past the token check: a storage fault while checking the token comes before the limiter.'
    default:
      // 408, 413 and 415 refuse a body before the service; a 500 never carries them.
      return false
  }
}

function headerObjects(uses: readonly HeaderUse[]): Json {
  const headers: Json = {}
  for (const [name, use] of uses) {
    const component = HEADERS[name]
    headers[name] =
      use === true || !component.required
        ? { $ref: `#/components/headers/${name}` }
        : { ...component, required: false, description: `${component.description} ${use}` }
  }
  return headers
}

/** The 403 of an operation, naming the scopes its token needs. */
function scopeSentence(scopes: readonly string[]): string {
  const names = scopes.map((scope) => `\`${scope}\``).join(' and ')
  const why = scopes.length > 1 ? ', since the answer carries the record' : ''
  return `The token must hold ${names}${why}.`
}

function capitalised(text: string): string {
  return text.startsWith('`') ? text : text.charAt(0).toUpperCase() + text.slice(1)
}
