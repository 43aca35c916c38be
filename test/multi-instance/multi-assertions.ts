import assert from 'node:assert/strict'
import type { Reply } from '../faults/fault-support.js'

/** Asserts a 429 `rate_limit_exceeded` whose `retry_after` and `Retry-After` agree (D20). */
export function assertLimited(
  reply: Reply,
  windowSeconds: number,
  limit: number,
  where: string,
): void {
  assert.equal(reply.status, 429, `${where}: ${reply.status} ${reply.body}`)
  assert.equal(reply.json!['error'], 'rate_limit_exceeded')
  const retryAfter = reply.json!['retry_after'] as number
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `${where}: retry_after ${retryAfter}`)
  assert.ok(retryAfter <= Math.ceil(windowSeconds / limit), `${where}: retry_after ${retryAfter}`)
  assert.equal(reply.headers['retry-after'], String(retryAfter))
  assert.equal(reply.headers['x-ratelimit-remaining'], '0')
}

/** Asserts a 401 `invalid_token` with its RFC 6750 challenge (D6). */
export function assertInvalidToken(reply: Reply, where: string): void {
  assert.equal(reply.status, 401, `${where}: ${reply.status} ${reply.body}`)
  assert.equal(reply.json!['error'], 'invalid_token', where)
  assert.match(reply.headers['www-authenticate'] ?? '', /error="invalid_token"/, where)
}
