import { DAY_MS } from '../../core/time.js'

/** The lower bound of a date range without one: below every epoch-ms time. */
export const NO_LOWER = Number.MIN_SAFE_INTEGER
/** The upper bound of a date range without one. */
export const NO_UPPER = Number.MAX_SAFE_INTEGER

/** Whether a bound of a date filter is absent or a UTC midnight, as the core's always are (D17). */
export function isDayBound(time: number): boolean {
  return time === NO_LOWER || time === NO_UPPER || time % DAY_MS === 0
}
