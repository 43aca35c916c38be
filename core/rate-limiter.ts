import { RateLimitedError, type RateLimitStatus } from './errors.js'
import type { Clock } from './ports/clock.js'
import type { BucketPolicy, RateLimitStore, TakeResult } from './ports/rate-limit-store.js'
import { LocalRateLimitStore } from './token-bucket.js'

/** The three limit classes (D19). Each request draws from exactly one. */
export type LimitClass = 'auth' | 'write' | 'standard' | 'bulk'

/** Limits per class in requests per window, and the window (D19, D20). */
export interface RateLimitOptions {
  /** Login and refresh, per client IP. Default 5. */
  readonly auth?: number
  /** Creates, updates, deletes and status changes, per client. Default 10. */
  readonly write?: number
  /** Everything else that needs a token, per client. Default 100. */
  readonly standard?: number
  /** Imports and exports, per client (D39). Default 2. */
  readonly bulk?: number
  /** Window in seconds over which a bucket refills completely. Default 60. */
  readonly windowSeconds?: number
  /** Where buckets live. Default: this process's memory. */
  readonly store?: RateLimitStore
}

const DEFAULT_LIMITS: Readonly<Record<LimitClass, number>> = {
  auth: 5,
  write: 10,
  standard: 100,
  bulk: 2,
}

/** Draws requests from token buckets per (class, key) and reports what the headers need. */
export class RateLimiter {
  readonly #clock: Clock
  readonly #store: RateLimitStore
  readonly #local: LocalRateLimitStore | undefined
  readonly #policies: Readonly<Record<LimitClass, BucketPolicy>>
  readonly #windowSeconds: number

  constructor(options: RateLimitOptions, clock: Clock) {
    const windowSeconds = options.windowSeconds ?? 60
    if (!Number.isInteger(windowSeconds) || windowSeconds < 1) {
      throw new TypeError('limits.windowSeconds must be a positive integer')
    }
    const policy = (name: LimitClass): BucketPolicy => {
      const capacity = options[name] ?? DEFAULT_LIMITS[name]
      if (!Number.isInteger(capacity) || capacity < 1) {
        throw new TypeError(`limits.${name} must be a positive integer`)
      }
      return Object.freeze({ capacity, windowMs: windowSeconds * 1000 })
    }
    this.#policies = Object.freeze({
      auth: policy('auth'),
      write: policy('write'),
      standard: policy('standard'),
      bulk: policy('bulk'),
    })
    this.#windowSeconds = windowSeconds
    this.#clock = clock
    this.#store = options.store ?? new LocalRateLimitStore()
    this.#local = this.#store instanceof LocalRateLimitStore ? this.#store : undefined
  }

  /**
   * Takes one token from the bucket of (`limitClass`, `key`).
   * @throws RateLimitedError when the bucket is empty, with `retryAfterSeconds` per D20.
   */
  async take(limitClass: LimitClass, key: string): Promise<RateLimitStatus> {
    const policy = this.#policies[limitClass]
    const bucketKey = `${limitClass}:${key}`
    const now = this.#clock.now()
    // The process-local store answers synchronously; skipping its promise keeps the hot path short.
    const result = this.#local
      ? this.#local.takeSync(bucketKey, policy, now)
      : await this.#store.take(bucketKey, policy, now)
    const status = this.#status(limitClass, policy, result)
    if (!result.allowed) throw new RateLimitedError(result.retryAfterMs, status)
    return status
  }

  #status(limitClass: LimitClass, policy: BucketPolicy, result: TakeResult): RateLimitStatus {
    return {
      policy: limitClass,
      limit: policy.capacity,
      windowSeconds: this.#windowSeconds,
      remaining: Math.floor(result.tokens),
      resetSeconds: Math.ceil(result.resetMs / 1000),
    }
  }
}
