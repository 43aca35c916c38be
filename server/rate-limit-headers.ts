import type { RateLimitStatus } from '../core/errors.js'

/**
 * Adds the rate-limit header fields of a limited response (D20): the IETF draft's
 * `RateLimit-Policy` and `RateLimit` (`"<class>";q=<quota>;w=<window>` and
 * `"<class>";r=<remaining>;t=<seconds>`), and the common `X-RateLimit-*` form, whose reset is
 * the seconds until the bucket is full.
 */
export function setRateLimitHeaders(
  headers: Record<string, string>,
  status: RateLimitStatus,
): void {
  headers['ratelimit-policy'] = `"${status.policy}";q=${status.limit};w=${status.windowSeconds}`
  headers['ratelimit'] = `"${status.policy}";r=${status.remaining};t=${status.resetSeconds}`
  headers['x-ratelimit-limit'] = String(status.limit)
  headers['x-ratelimit-remaining'] = String(status.remaining)
  headers['x-ratelimit-reset'] = String(status.resetSeconds)
}
