import assert from 'node:assert/strict'
import type { Reply } from '../faults/fault-support.js'
import type { ServeChild } from '../faults/serve-child.js'
import type { InstanceGroup, Session } from './instance-group.js'

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

/**
 * Sends `session`'s client ten writes round-robin, each allowed with one token fewer left than
 * the last whichever instance counted it, then an eleventh to every instance at once: each is
 * a 429 (D19, D30). The client must not have written in the last minute.
 */
export async function assertWriteLimitShared(
  group: InstanceGroup,
  session: Session,
  body: (n: number) => Record<string, string>,
  where: string,
): Promise<void> {
  const remaining: number[] = []
  for (let n = 0; n < 10; n++) {
    const i = group.next()
    const reply = await group.send(i, 'POST', '/v3/beneficiaries', { session, body: body(n) })
    assert.equal(reply.status, 201, `${where}: write ${n + 1} on instance ${i}: ${reply.body}`)
    remaining.push(Number(reply.headers['x-ratelimit-remaining']))
  }
  // One bucket: each instance sees what the others took.
  assert.deepEqual(remaining, [9, 8, 7, 6, 5, 4, 3, 2, 1, 0], `${where}: one shared bucket`)
  const running = group.running
  const refused = await Promise.all(
    running.map((i) => group.send(i, 'POST', '/v3/beneficiaries', { session, body: body(10) })),
  )
  refused.forEach((reply, n) =>
    assertLimited(reply, 60, 10, `${where}: 11th write on instance ${running[n]}`),
  )
}

/**
 * Asserts that `server` logged a Redis outage once at `error`, its end once at `info`, and no
 * other error (D31).
 */
export function assertOutageLoggedOnce(server: ServeChild, where: string): void {
  const outage = server.lines.filter((line) => /does not answer/.test(String(line['msg'])))
  const recovery = server.lines.filter((line) => /answers again/.test(String(line['msg'])))
  assert.deepEqual(
    outage.map((line) => line['level']),
    [50],
    `${where}: the outage, at error`,
  )
  assert.deepEqual(
    recovery.map((line) => line['level']),
    [30],
    `${where}: its end, at info`,
  )
  assert.deepEqual(server.errors, outage, `${where}: nothing else went wrong`)
}
