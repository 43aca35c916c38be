/**
 * A small typed client for the /v3 API, on `fetch`. It logs in, refreshes the access token when
 * the server says `token_expired`, waits out a 429 for as long as `Retry-After` says, and pages
 * through every beneficiary by following `links.next`.
 */
import type {
  BeneficiaryCreated,
  BeneficiaryDetail,
  BeneficiaryListItem,
  Paged,
  RefreshResponse,
  TokenResponse,
} from '../../core/index.js'

/** Options of `BeneficiaryClient`. */
export interface BeneficiaryClientOptions {
  /** Origin of the server, e.g. `http://127.0.0.1:8080`. */
  readonly origin: string
  /** Path prefix of the API. Default `/v3`. */
  readonly basePath?: string
  readonly clientId: string
  readonly clientSecret: string
  /** How to wait before retrying a 429. Default: a real timer. Tests may pass a fake clock's. */
  readonly sleep?: (ms: number) => Promise<void>
  /** Retries of one request after 429s before giving up. Default 5. */
  readonly maxRetries?: number
}

/** The standard error body (specification 7.1). */
export interface ApiErrorBody {
  readonly error: string
  readonly message: string
  readonly code: number
  readonly details?: readonly { field: string; message: string }[]
  readonly retry_after?: number
}

/** A response that was not 2xx. */
export class ApiError extends Error {
  readonly status: number
  readonly body: ApiErrorBody

  constructor(status: number, body: ApiErrorBody) {
    super(`${status} ${body.error}: ${body.message}`)
    this.name = 'ApiError'
    this.status = status
    this.body = body
  }
}

export class BeneficiaryClient {
  readonly #options: Required<BeneficiaryClientOptions>
  #accessToken: string | undefined
  #refreshToken: string | undefined
  /** How many times the client refreshed its token and waited out a 429 (for the demo). */
  readonly stats = { refreshes: 0, waits: 0 }

  constructor(options: BeneficiaryClientOptions) {
    this.#options = {
      basePath: '/v3',
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      maxRetries: 5,
      ...options,
    }
  }

  /** Exchanges the client credentials for a token set. */
  async login(): Promise<void> {
    const tokens = await this.#call<TokenResponse>('POST', '/auth/login', {
      client_id: this.#options.clientId,
      client_secret: this.#options.clientSecret,
    })
    this.#accessToken = tokens.access_token
    this.#refreshToken = tokens.refresh_token
  }

  create(input: Record<string, unknown>): Promise<BeneficiaryCreated> {
    return this.#authorized('POST', '/beneficiaries', input)
  }

  get(id: number): Promise<BeneficiaryDetail> {
    return this.#authorized('GET', `/beneficiaries/${id}`)
  }

  /** Every beneficiary matching `query`, page after page, following `links.next`. */
  async *list(query: Record<string, string> = {}): AsyncGenerator<BeneficiaryListItem> {
    let next: string | null =
      `${this.#options.basePath}/beneficiaries?${new URLSearchParams(query)}`
    while (next !== null) {
      // Links are paths that already start with the base path (D18).
      const page: Paged<BeneficiaryListItem> = await this.#authorized(
        'GET',
        next.slice(this.#options.basePath.length),
      )
      yield* page.data
      next = page.links.next
    }
  }

  async #authorized<T>(method: string, path: string, body?: unknown): Promise<T> {
    if (this.#accessToken === undefined) await this.login()
    try {
      return await this.#call<T>(method, path, body, this.#accessToken)
    } catch (error) {
      if (!(error instanceof ApiError) || error.body.error !== 'token_expired') throw error
      await this.#refresh()
      return this.#call<T>(method, path, body, this.#accessToken)
    }
  }

  async #refresh(): Promise<void> {
    this.stats.refreshes++
    const tokens = await this.#call<RefreshResponse>('POST', '/auth/refresh', {
      refresh_token: this.#refreshToken,
    })
    this.#accessToken = tokens.access_token
  }

  async #call<T>(method: string, path: string, body?: unknown, token?: string): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const response = await fetch(`${this.#options.origin}${this.#options.basePath}${path}`, {
        method,
        headers: {
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...(token !== undefined && { authorization: `Bearer ${token}` }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      })
      if (response.status === 429 && attempt < this.#options.maxRetries) {
        this.stats.waits++
        await this.#options.sleep(Number(response.headers.get('retry-after') ?? '1') * 1000)
        continue
      }
      const text = await response.text()
      const parsed: unknown = text === '' ? null : JSON.parse(text)
      if (!response.ok) throw new ApiError(response.status, parsed as ApiErrorBody)
      return parsed as T
    }
  }
}
