/** The shape of one token bucket: `capacity` tokens, refilled continuously over `windowMs`. */
export interface BucketPolicy {
  readonly capacity: number
  readonly windowMs: number
}

/** The state of a bucket right after one `take`. */
export interface TakeResult {
  /** Whether a token was taken (the request may proceed). */
  readonly allowed: boolean
  /** Tokens left, possibly fractional. */
  readonly tokens: number
  /** Milliseconds until one whole token is back (0 when `allowed` left at least one). */
  readonly retryAfterMs: number
  /** Milliseconds until the bucket is full again. */
  readonly resetMs: number
}

/**
 * Token buckets per key (D20). `take` is one atomic read-modify-write, so that a store shared by
 * several processes (Redis, say) can implement it with one script. The default is process-local.
 */
export interface RateLimitStore {
  /** Refills the bucket for `key` up to `now`, then takes one token if there is one. */
  take(key: string, policy: BucketPolicy, now: number): Promise<TakeResult>
}
