import type { Clock } from './ports/clock.js'

/** The real clock: `Date.now()`. The default when no clock is passed. */
export const systemClock: Clock = Object.freeze({ now: () => Date.now() })
