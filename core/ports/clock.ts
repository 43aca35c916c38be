/**
 * Where the core reads the time. Every expiry (access tokens, refresh tokens, idempotency
 * records) and every token bucket follows this clock, never `Date.now()` directly, so a host
 * application's tests can move time with `FakeClock.advance(ms)` instead of sleeping.
 */
export interface Clock {
  /** The current time in epoch milliseconds. Must never go backwards within a process. */
  now(): number
}
