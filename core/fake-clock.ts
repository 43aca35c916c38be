import type { Clock } from './ports/clock.js'

/**
 * A clock that moves only when told, for tests: token expiry and rate-limit refills follow it,
 * so a test advances time instead of sleeping.
 *
 * @example
 * const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'))
 * const service = await createBeneficiaryService({ storage: new MemoryStorage(), clock })
 * clock.advance(3600_000) // the access token is now expired
 */
export class FakeClock implements Clock {
  #now: number

  /** Starts at `start` epoch milliseconds (default 2026-01-01T00:00:00Z). */
  constructor(start = Date.UTC(2026, 0, 1)) {
    if (!Number.isFinite(start)) throw new TypeError('FakeClock start must be a finite number')
    this.#now = start
  }

  now(): number {
    return this.#now
  }

  /** Moves the clock forward by `ms` milliseconds (never backwards). */
  advance(ms: number): void {
    if (!(ms >= 0) || !Number.isFinite(ms)) throw new TypeError('FakeClock.advance takes ms >= 0')
    this.#now += ms
  }

  /** Moves the clock to `epochMs`, which must not be earlier than now. */
  set(epochMs: number): void {
    if (!(epochMs >= this.#now)) throw new TypeError('FakeClock.set cannot move backwards')
    this.#now = epochMs
  }
}
