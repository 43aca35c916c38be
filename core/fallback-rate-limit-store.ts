import type { Clock } from './ports/clock.js'
import type { BucketPolicy, RateLimitStore, TakeResult } from './ports/rate-limit-store.js'
import { systemClock } from './system-clock.js'
import { LocalRateLimitStore } from './token-bucket.js'

/** Options of {@link FallbackRateLimitStore}. Only `primary` is required. */
export interface FallbackRateLimitStoreOptions {
  /** The shared store (Redis, say): every take goes to it while it answers. */
  readonly primary: RateLimitStore
  /**
   * Where takes go while the primary fails. Default: a new `LocalRateLimitStore`, so buckets
   * are this instance's own for the length of the outage.
   */
  readonly fallback?: RateLimitStore
  /**
   * A cheap question to the primary (a Redis `PING`) that resolves when it answers and rejects
   * when it does not; `checkPrimary()` asks it. Without one, only a take finds out that the
   * primary answers again.
   */
  readonly probe?: () => Promise<void>
  /**
   * While the primary is down, at most one take per interval tries it again (and may wait for
   * its timeout); the others go straight to the fallback. Default 1000 ms.
   */
  readonly retryIntervalMs?: number
  /** Times the retry interval and the outage. Default: the system clock. */
  readonly clock?: Clock
  /** Called once when the primary stops answering, with its failure. */
  readonly onOutage?: (error: unknown) => void
  /** Called once when the primary answers again, with how long it did not. */
  readonly onRecovery?: (outage: { readonly durationMs: number }) => void
}

interface Outage {
  readonly since: number
  nextTry: number
}

/**
 * A `RateLimitStore` that keeps serving when its shared store does not answer (D31): a take
 * the primary cannot answer is answered by the fallback (by default, buckets in this process's
 * memory), so a request is never refused, nor failed, because the limiter's store is down.
 * While down, the limits hold per instance instead of across instances: with N instances a
 * client may get up to N times its limit, plus one fresh bucket on each when the outage starts.
 *
 * The outage is reported once when it starts (`onOutage`) and once when it ends
 * (`onRecovery`); in between `degraded` is `true`. It ends by itself: at most one take per
 * `retryIntervalMs` tries the primary again, and `checkPrimary()` asks the `probe`. Only a try
 * that started during the outage can end it, so a late answer to a take sent before the outage
 * does not.
 *
 * @example
 * const limits = new FallbackRateLimitStore({
 *   primary: redisStore,
 *   probe: () => redisStore.ping(),
 *   onOutage: () => logger.error('Redis does not answer: limits are per instance'),
 *   onRecovery: () => logger.info('Redis answers again: limits are shared'),
 * })
 * const service = await createBeneficiaryService({ storage, limits: { store: limits } })
 */
export class FallbackRateLimitStore implements RateLimitStore {
  readonly #primary: RateLimitStore
  readonly #fallback: RateLimitStore
  readonly #probe: (() => Promise<void>) | undefined
  readonly #retryIntervalMs: number
  readonly #clock: Clock
  readonly #onOutage: (error: unknown) => void
  readonly #onRecovery: (outage: { readonly durationMs: number }) => void
  #outage: Outage | undefined

  /** @throws TypeError when `retryIntervalMs` is not a positive integer. */
  constructor(options: FallbackRateLimitStoreOptions) {
    const retryIntervalMs = options.retryIntervalMs ?? 1000
    if (!Number.isSafeInteger(retryIntervalMs) || retryIntervalMs < 1) {
      throw new TypeError('retryIntervalMs must be a positive integer')
    }
    this.#primary = options.primary
    this.#fallback = options.fallback ?? new LocalRateLimitStore()
    this.#probe = options.probe
    this.#retryIntervalMs = retryIntervalMs
    this.#clock = options.clock ?? systemClock
    this.#onOutage = options.onOutage ?? (() => undefined)
    this.#onRecovery = options.onRecovery ?? (() => undefined)
  }

  /** Whether takes are answered by the fallback because the primary does not answer. */
  get degraded(): boolean {
    return this.#outage !== undefined
  }

  async take(key: string, policy: BucketPolicy, now: number): Promise<TakeResult> {
    const outage = this.#outage
    if (outage !== undefined) {
      const at = this.#clock.now()
      if (at < outage.nextTry) return this.#fallback.take(key, policy, now)
      outage.nextTry = at + this.#retryIntervalMs
    }
    let result: TakeResult
    try {
      result = await this.#primary.take(key, policy, now)
    } catch (error) {
      this.#failed(error)
      return this.#fallback.take(key, policy, now)
    }
    this.#answered(outage)
    return result
  }

  /**
   * Asks the `probe` whether the primary answers, starting or ending the outage accordingly.
   * Without a probe, tells what the takes found. Never rejects.
   * @returns `true` when the primary answers (the store is not degraded).
   */
  async checkPrimary(): Promise<boolean> {
    if (this.#probe !== undefined) {
      const outage = this.#outage
      try {
        await this.#probe()
        this.#answered(outage)
      } catch (error) {
        this.#failed(error)
      }
    }
    return this.#outage === undefined
  }

  #failed(error: unknown): void {
    if (this.#outage !== undefined) return
    const now = this.#clock.now()
    this.#outage = { since: now, nextTry: now + this.#retryIntervalMs }
    this.#onOutage(error)
  }

  /** `startedDuring`: the outage current when the try that answered began. */
  #answered(startedDuring: Outage | undefined): void {
    const outage = this.#outage
    if (outage === undefined || outage !== startedDuring) return
    this.#outage = undefined
    this.#onRecovery({ durationMs: Math.max(0, this.#clock.now() - outage.since) })
  }
}
