/**
 * The shape of one token bucket (D20): `capacity` tokens, refilled continuously so that an empty
 * bucket is full again after exactly `windowMs`.
 *
 * The core builds one frozen policy per limit class (D19) and passes it with every `take`; a store
 * keeps levels, never policies. A key is always taken with the policy of its class; what a store
 * does when one key is taken with two different policies is unspecified.
 */
export interface BucketPolicy {
  /**
   * The most tokens the bucket holds, and so the most takes allowed at one instant: the limit of
   * the class. A positive integer.
   */
  readonly capacity: number
  /**
   * Milliseconds an empty bucket takes to fill up: one token comes back every
   * `windowMs / capacity` milliseconds, in fractions in between. A positive integer.
   */
  readonly windowMs: number
}

/**
 * The state of a bucket right after one `take`. Durations count from the bucket's clock: the
 * latest time the store has seen for that key (see {@link RateLimitStore.take}).
 */
export interface TakeResult {
  /**
   * Whether a token was taken, so the request may proceed. When `false` nothing was taken: a
   * refused take costs the caller nothing.
   */
  readonly allowed: boolean
  /**
   * Tokens left after this take, possibly fractional: at most `capacity - 1` when allowed, below
   * 1 when refused. The core reports `Math.floor(tokens)` as the remaining quota.
   */
  readonly tokens: number
  /**
   * Whole milliseconds, rounded up, until the bucket holds one whole token; 0 when it still holds
   * one after this take. Exact: with no other take in between, a take at the bucket's clock plus
   * `retryAfterMs` is allowed and one a millisecond earlier is not. The core turns it into
   * `retry_after` and `Retry-After` (D20).
   */
  readonly retryAfterMs: number
  /**
   * Whole milliseconds, rounded up, until the bucket is full again if nothing takes from it.
   * Never 0, since a take always leaves the bucket below capacity. The core reports it, in
   * seconds, as the time the quota resets.
   */
  readonly resetMs: number
}

/**
 * Token buckets per key (D20): where the rate limiter keeps its levels. The default,
 * `LocalRateLimitStore`, keeps them in this process's memory; a store shared by several processes
 * (Redis, say) makes the limits hold across all of them. Pass one as the `limits.store` option
 * of `createBeneficiaryService`.
 *
 * Every implementation must pass `describeRateLimitStoreContract` in
 * `test/contracts/rate-limit-store.contract.ts` unchanged.
 */
export interface RateLimitStore {
  /**
   * Refills the bucket of `key` up to `now`, then takes one token from it if there is a whole one.
   * The core calls it once per limited request, with a key such as `write:<client id>` and the
   * policy of that class. A key never taken before is a full bucket.
   *
   * Atomicity: one take is one read-modify-write of one key. Concurrent takes, from one process
   * or from many, behave as if they ran one after another in some order, so N concurrent takes on
   * a bucket holding C tokens allow exactly `min(N, C)` of them. A shared store does the whole
   * take in one round trip (a Redis script, say), never as a read followed by a write.
   *
   * Whose clock: the caller's `now`, its `Clock` reading in epoch milliseconds, unless the store
   * is told to keep time itself. A store in one process uses `now` and nothing else (not
   * `Date.now()`), so a `FakeClock` drives it in tests and every refill follows the same clock
   * as token expiry. A store shared by several processes cannot trust each caller's clock: one
   * running ahead of the others would refill buckets early. It may therefore offer to count time
   * on one clock all its callers share (Redis's own `TIME`, say), ignoring `now`; it must also
   * offer the caller's clock, which the contract suite uses. Either way the clock is one per
   * bucket and never moves back (below).
   *
   * Out of order: `now` may be earlier than the latest time the bucket has seen: a request that
   * reached the store late, an instance whose clock lags another's, or a shared clock stepped
   * back. Such a take is answered as if it came at the bucket's latest time. It refills nothing,
   * may take a token that is there, and never moves the bucket's clock back, so a later take
   * cannot refill the same interval twice.
   *
   * Expiry: a full bucket is the same as an absent one, so a store may forget a bucket once it has
   * been idle for `windowMs` past its clock (a key that expires `windowMs` after its last take,
   * say), never earlier: forgetting a bucket that is not yet full would hand out tokens.
   *
   * Failures: a store that cannot answer rejects. The core does not catch it, so the request fails
   * rather than going through unlimited; report the fault as `StorageUnavailableError`, as
   * `Storage` adapters do, so that the server answers 503 with `Retry-After`. To serve on
   * per-instance buckets instead while a shared store is down (D31), wrap it in a
   * `FallbackRateLimitStore`, as the server does.
   *
   * @param key - The bucket: an opaque string chosen by the core. Distinct keys never share tokens.
   * @param policy - Capacity and refill of this bucket.
   * @param now - The caller's time in epoch milliseconds (ignored by a store that keeps time
   *   itself).
   * @returns The bucket's state right after this take.
   */
  take(key: string, policy: BucketPolicy, now: number): Promise<TakeResult>
}
