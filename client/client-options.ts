import type { ClientOperation } from './client-routes.js'
import type { TokenReason } from './token-keeper.js'

/** The client credentials an operator provisioned (D1). Keep the secret out of source code. */
export interface ClientCredentials {
  readonly clientId: string
  readonly clientSecret: string
  /** Space-separated scopes to narrow the login to, such as `read` (D2). Default: all of the client's. */
  readonly scope?: string | undefined
}

/** A `fetch`: the global one by default; pass another to add a proxy, tracing or a test double. */
export type FetchFunction = (url: string, init: RequestInit) => Promise<Response>

/** What the client did on its own, for logs and metrics: never a token, secret or body. */
export type ClientEvent =
  | {
      readonly type: 'retry'
      readonly operation: ClientOperation
      /** 429 or 503. */
      readonly status: number
      /** 1 for the first retry. */
      readonly attempt: number
      readonly delayMs: number
    }
  | { readonly type: 'token'; readonly action: 'login' | 'refresh'; readonly reason: TokenReason }

/** Options of `BeneficiaryClient`. Only `baseUrl` is required. */
export interface BeneficiaryClientOptions {
  /** The API's base address, ending with its version segment: `http://127.0.0.1:8080/v3`. */
  readonly baseUrl: string
  /** Used to log in when a call needs a token and the client has none, or its refresh token fails. */
  readonly credentials?: ClientCredentials | undefined
  /** Default: the global `fetch`. */
  readonly fetch?: FetchFunction | undefined
  /** Milliseconds since the epoch, for token expiry and HTTP-date `Retry-After`. Default `Date.now`. */
  readonly now?: (() => number) | undefined
  /** How to wait out a `Retry-After`. Default: a timer, cut short by the call's `signal`. */
  readonly sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined
  /** Retries of one call after 429 or 503 before the error is thrown. Default 2; 0 turns them off. */
  readonly maxRetries?: number | undefined
  /** A `Retry-After` longer than this is not waited for: the error is thrown at once. Default 60. */
  readonly maxRetryDelaySeconds?: number | undefined
  /** How long before its expiry a token is renewed. Default 60 (at most half its lifetime). */
  readonly refreshMarginSeconds?: number | undefined
  /** Whether a create without an Idempotency-Key gets a random one, so that it may be retried. Default true. */
  readonly autoIdempotencyKey?: boolean | undefined
  /** Told of each retry and each login or refresh the client starts on its own. */
  readonly onEvent?: ((event: ClientEvent) => void) | undefined
}

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the request, or the wait before a retry. */
  readonly signal?: AbortSignal | undefined
  /** Sent as `X-Request-Id` (D24): 1–128 characters of A–Z a–z 0–9 . _ : - */
  readonly requestId?: string | undefined
  /**
   * Sent as `X-Purpose` (D35): why the data is read, recorded in the access log with the
   * answer. 1–200 visible ASCII characters and spaces.
   */
  readonly purpose?: string | undefined
}

/** Options of `create`. */
export interface CreateOptions extends CallOptions {
  /** Idempotency-Key (D22): the same key and body within 24 hours replays the first answer. */
  readonly idempotencyKey?: string | undefined
}

/** Options of the calls that change a beneficiary. */
export interface ConditionalOptions extends CallOptions {
  /** If-Match (D23): the ETag the change is based on, or `*`; a stale one is 412 `precondition_failed`. */
  readonly ifMatch?: string | undefined
}

/** The rate-limit state a response reported (D20). */
export interface RateLimitInfo {
  readonly limit: number
  readonly remaining: number
  /** Whole seconds until the bucket is full again. */
  readonly resetSeconds: number
}

/** A successful answer: its body in the specification's shape, and what its headers said. */
export interface ApiResult<T> {
  readonly value: T
  readonly status: number
  /** The beneficiary's strong ETag (D23), for `ifMatch`. */
  readonly etag: string | undefined
  /** True when an Idempotency-Key replayed an earlier create (D22). */
  readonly replayed: boolean
  /** The request's id (D24). */
  readonly requestId: string | undefined
  /** The path of a created beneficiary. */
  readonly location: string | undefined
  readonly rateLimit: RateLimitInfo | undefined
}
