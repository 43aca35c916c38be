import type { BucketPolicy, RateLimitStore, TakeResult } from './ports/rate-limit-store.js'

/**
 * A bucket's level in fixed point: one token is `windowMs` units and each millisecond adds
 * `capacity` units, so refills are exact integers (10 per minute: one token back after exactly 6 s).
 */
export interface BucketState {
  readonly units: number
  readonly updatedAt: number
}

/** Refills `state` up to `now` and takes one token if there is one (D20). Pure. */
export function takeToken(
  state: BucketState | undefined,
  policy: BucketPolicy,
  now: number,
): { readonly state: BucketState; readonly result: TakeResult } {
  const full = policy.capacity * policy.windowMs
  const elapsed = state === undefined ? Infinity : Math.max(0, now - state.updatedAt)
  const refilled =
    state === undefined ? full : Math.min(full, state.units + elapsed * policy.capacity)
  const allowed = refilled >= policy.windowMs
  const units = allowed ? refilled - policy.windowMs : refilled
  return {
    // A late `now` (a delayed request, a lagging instance) must not move the clock back, or the
    // next take would refill the same interval twice.
    state: { units, updatedAt: state === undefined ? now : Math.max(state.updatedAt, now) },
    result: takeResult(allowed, units, policy),
  }
}

/**
 * What a take answers, from whether it took a token and the units (see {@link BucketState})
 * left after it. Shared by every store that keeps levels in these units, so that each answers
 * with the same rounding.
 */
export function takeResult(allowed: boolean, units: number, policy: BucketPolicy): TakeResult {
  return {
    allowed,
    tokens: units / policy.windowMs,
    retryAfterMs:
      units >= policy.windowMs ? 0 : Math.ceil((policy.windowMs - units) / policy.capacity),
    resetMs: Math.ceil((policy.capacity * policy.windowMs - units) / policy.capacity),
  }
}

const SWEEP_EVERY = 4096

/**
 * The default `RateLimitStore`: buckets in this process's memory. Buckets that have refilled
 * completely are equivalent to absent ones and are swept from time to time, so memory stays
 * proportional to the clients active within one window.
 */
export class LocalRateLimitStore implements RateLimitStore {
  readonly #buckets = new Map<string, BucketState>()
  #takesSinceSweep = 0
  #longestWindowMs = 0

  take(key: string, policy: BucketPolicy, now: number): Promise<TakeResult> {
    return Promise.resolve(this.takeSync(key, policy, now))
  }

  /** The same as `take`, without the promise (for callers in the same process). */
  takeSync(key: string, policy: BucketPolicy, now: number): TakeResult {
    this.#longestWindowMs = Math.max(this.#longestWindowMs, policy.windowMs)
    if (++this.#takesSinceSweep >= SWEEP_EVERY) this.#sweep(now)
    const { state, result } = takeToken(this.#buckets.get(key), policy, now)
    this.#buckets.set(key, state)
    return result
  }

  /** Number of buckets held (for tests and metrics). */
  get size(): number {
    return this.#buckets.size
  }

  #sweep(now: number): void {
    this.#takesSinceSweep = 0
    // A bucket idle for a whole window is full again, whatever its capacity; buckets do not
    // record their policy, so only the longest window seen is safe for all of them.
    for (const [key, state] of this.#buckets) {
      if (now - state.updatedAt >= this.#longestWindowMs) this.#buckets.delete(key)
    }
  }
}
