import { ApiError, errorBodyOf, UnexpectedResponseError } from './api-error.js'
import type {
  ApiResult,
  BeneficiaryClientOptions,
  CallOptions,
  ClientCredentials,
  ClientEvent,
  FetchFunction,
  RateLimitInfo,
} from './client-options.js'
import {
  CLIENT_ROUTES,
  type BodyOf,
  type ClientOperation,
  type ClientRoute,
  type ResponseOf,
} from './client-routes.js'
import { retryAfterMs } from './retry-after.js'
import { TokenKeeper } from './token-keeper.js'

/** One request as a typed call describes it. */
export interface Call {
  /** The `{id}` of the path. */
  readonly id?: number | string
  readonly query?: object | undefined
  readonly body?: unknown
  readonly headers?: Readonly<Record<string, string>>
  /** A link the server gave (`links.next`), followed instead of the route's path. */
  readonly link?: string
  /** The media type of a body sent as it is (a file to import), not as JSON. */
  readonly contentType?: string
}

/**
 * Sends the client's requests: builds each from its route, adds the access token, renews a
 * refused token once, waits out `Retry-After` on 429 and 503 for what may be sent twice, and
 * turns each answer into an `ApiResult` or an error.
 */
export class HttpExchange {
  readonly tokens: TokenKeeper
  readonly #baseUrl: string
  readonly #origin: string
  readonly #fetch: FetchFunction
  readonly #now: () => number
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>
  readonly #maxRetries: number
  readonly #maxDelayMs: number
  readonly #onEvent: (event: ClientEvent) => void
  readonly #credentials: () => ClientCredentials | undefined

  constructor(options: BeneficiaryClientOptions, credentials: () => ClientCredentials | undefined) {
    const url = parseBaseUrl(options.baseUrl)
    this.#origin = url.origin
    this.#baseUrl = url.origin + url.pathname.replace(/\/+$/, '')
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
    this.#now = options.now ?? Date.now
    this.#sleep = options.sleep ?? sleep
    this.#maxRetries = count('maxRetries', options.maxRetries ?? 2)
    this.#maxDelayMs = count('maxRetryDelaySeconds', options.maxRetryDelaySeconds ?? 60) * 1000
    this.#onEvent = options.onEvent ?? (() => {})
    this.#credentials = credentials
    const marginMs = count('refreshMarginSeconds', options.refreshMarginSeconds ?? 60) * 1000
    this.tokens = new TokenKeeper(
      {
        canLogin: () => credentials() !== undefined,
        login: async () => (await this.login({})).value,
        refresh: async (token) => (await this.refresh(token, {})).value,
        starting: (action, reason) => this.#onEvent({ type: 'token', action, reason }),
      },
      this.#now,
      marginMs,
    )
  }

  /** `POST /auth/login` with the client's credentials; the caller keeps the tokens. */
  login(options: CallOptions) {
    const credentials = this.#credentials()
    if (credentials === undefined) {
      throw new TypeError('BeneficiaryClient: no credentials to log in with')
    }
    const body: BodyOf<'login'> = {
      client_id: credentials.clientId,
      client_secret: credentials.clientSecret,
      ...(credentials.scope !== undefined && { scope: credentials.scope }),
    }
    return this.send('login', { body }, options)
  }

  /** `POST /auth/refresh` (D4); the caller keeps the token. */
  refresh(refreshToken: string, options: CallOptions) {
    return this.send('refresh', { body: { refresh_token: refreshToken } }, options)
  }

  async send<O extends ClientOperation>(
    operation: O,
    call: Call,
    options: CallOptions,
  ): Promise<ApiResult<ResponseOf<O>>> {
    const response = await this.answer(operation, call, options, 'application/json')
    return success<ResponseOf<O>>(operation, CLIENT_ROUTES[operation], response)
  }

  /**
   * The successful answer of a call, its body unread (a stream, such as an export's), after the
   * same token renewal and retries as `send`.
   */
  async answer(
    operation: ClientOperation,
    call: Call,
    options: CallOptions,
    accept: string,
  ): Promise<Response> {
    const route: ClientRoute = CLIENT_ROUTES[operation]
    const url =
      call.link === undefined ? this.#url(route, call) : this.#follow(operation, call.link)
    const headers: Record<string, string> = { accept, ...call.headers }
    if (options.requestId !== undefined) headers['x-request-id'] = options.requestId
    if (options.purpose !== undefined) headers['x-purpose'] = options.purpose
    const payload =
      call.body === undefined
        ? undefined
        : call.contentType !== undefined
          ? (call.body as string | Uint8Array<ArrayBuffer>)
          : JSON.stringify(call.body)
    if (payload !== undefined) headers['content-type'] = call.contentType ?? 'application/json'
    const retryable =
      route.retry === 'always' ||
      (route.retry === 'with-idempotency-key' && headers['idempotency-key'] !== undefined)
    let retries = 0
    let renewed = false
    for (;;) {
      const token = route.authenticated ? await this.tokens.token() : undefined
      if (token !== undefined) headers['authorization'] = `Bearer ${token}`
      const response = await this.#fetch(url, {
        method: route.method,
        headers,
        ...(payload !== undefined && { body: payload }),
        ...(options.signal !== undefined && { signal: options.signal }),
      })
      if (response.ok) return response
      const waitMs = retryAfterMs(response.headers.get('retry-after'), this.#now())
      const error = await failure(operation, response, waitMs)
      // A token the server refused (expired by its clock, or revoked): renewed once, never more.
      if (token !== undefined && response.status === 401 && !renewed && isTokenRefusal(error)) {
        renewed = true
        await this.tokens.renew(token)
        continue
      }
      const busy = response.status === 429 || response.status === 503
      if (busy && retryable && retries < this.#maxRetries && waitMs !== undefined) {
        if (waitMs <= this.#maxDelayMs) {
          retries++
          const status = response.status
          this.#onEvent({ type: 'retry', operation, status, attempt: retries, delayMs: waitMs })
          await this.#sleep(waitMs, options.signal)
          continue
        }
      }
      throw error
    }
  }

  #url(route: ClientRoute, call: Call): string {
    const path = route.path.replace('{id}', () => encodeURIComponent(String(call.id)))
    return (route.versioned ? this.#baseUrl : this.#origin) + path + queryString(call.query)
  }

  // Links are paths from the origin that start with the base path (D18).
  #follow(operation: ClientOperation, link: string): string {
    if (!link.startsWith('/') || link.startsWith('//')) {
      throw new UnexpectedResponseError(operation, 200, 'a link that is not a path')
    }
    return this.#origin + link
  }
}

function parseBaseUrl(baseUrl: string): URL {
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    throw new TypeError('BeneficiaryClient: baseUrl must be an absolute http(s) URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError('BeneficiaryClient: baseUrl must be an http or https URL')
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new TypeError('BeneficiaryClient: baseUrl takes no query, fragment or user name')
  }
  return url
}

function count(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`BeneficiaryClient: ${name} must be a whole number, 0 or more`)
  }
  return value
}

function queryString(query: object | undefined): string {
  if (query === undefined) return ''
  const pairs: string[] = []
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue
    pairs.push(`${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`)
  }
  return pairs.length === 0 ? '' : `?${pairs.join('&')}`
}

function isTokenRefusal(error: Error): boolean {
  return (
    error instanceof ApiError && (error.code === 'invalid_token' || error.code === 'token_expired')
  )
}

async function success<T>(
  operation: ClientOperation,
  route: ClientRoute,
  response: Response,
): Promise<ApiResult<T>> {
  const text = await response.text()
  let value: unknown = null
  if (route.response !== undefined) {
    const contentType = response.headers.get('content-type') ?? undefined
    try {
      if (contentType?.includes('json') !== true) throw new TypeError('not JSON')
      value = JSON.parse(text)
    } catch {
      throw new UnexpectedResponseError(operation, response.status, contentType)
    }
  }
  const headers = response.headers
  return {
    value: value as T,
    status: response.status,
    etag: headers.get('etag') ?? undefined,
    replayed: headers.get('idempotent-replayed') === 'true',
    requestId: headers.get('x-request-id') ?? undefined,
    location: headers.get('location') ?? undefined,
    rateLimit: rateLimitOf(headers),
  }
}

async function failure(
  operation: ClientOperation,
  response: Response,
  waitMs: number | undefined,
): Promise<Error> {
  const contentType = response.headers.get('content-type') ?? undefined
  let body: unknown
  try {
    body = JSON.parse(await response.text())
  } catch {
    body = undefined
  }
  const standard = errorBodyOf(body)
  if (standard === undefined) {
    return new UnexpectedResponseError(operation, response.status, contentType)
  }
  const retryAfter =
    standard.retry_after ?? (waitMs === undefined ? undefined : Math.ceil(waitMs / 1000))
  return new ApiError(operation, response.status, standard, retryAfter)
}

function rateLimitOf(headers: Headers): RateLimitInfo | undefined {
  const limit = headers.get('x-ratelimit-limit')
  const remaining = headers.get('x-ratelimit-remaining')
  const reset = headers.get('x-ratelimit-reset')
  if (limit === null || remaining === null || reset === null) return undefined
  return { limit: Number(limit), remaining: Number(remaining), resetSeconds: Number(reset) }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason)
      return
    }
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
