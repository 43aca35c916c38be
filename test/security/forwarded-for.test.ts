import assert from 'node:assert/strict'
import type { OutgoingHttpHeaders } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { http, ServeChild, type HttpAnswer } from './security-fixtures.js'
import { skipOn, TRANSPORTS } from '../support/transports.js'

// D19–D21 over real `beneficiaries serve` processes on 127.0.0.1: the auth class (login and
// refresh) allows RATE_LIMIT_AUTH requests per minute per client IP. The test process is both
// the client and, for the server started with TRUST_PROXY=127.0.0.1, the proxy in front of it.

const LIMIT = 3
const FAILED_LOGIN = { client_id: 'cl_nobody', client_secret: 'guess' }

function attempt(
  origin: string,
  headers: OutgoingHttpHeaders,
  path = 'login',
): Promise<HttpAnswer> {
  const body = path === 'login' ? FAILED_LOGIN : { refresh_token: 'not-a-refresh-token' }
  return http(origin, 'POST', `/v3/auth/${path}`, { headers, body })
}

/** Asserts that the auth bucket let the request through with `remaining` tokens left. */
function assertAdmitted(answer: HttpAnswer, remaining: number, what: string): void {
  assert.equal(answer.status, 401, `${what}: ${answer.body}`)
  assert.match(String(answer.headers['ratelimit']), new RegExp(`^"auth";r=${remaining};`), what)
}

function assertLimited(answer: HttpAnswer, what: string): void {
  assert.equal(answer.status, 429, `${what}: ${answer.body}`)
  assert.equal(answer.json?.['error'], 'rate_limit_exceeded', what)
  assert.equal(answer.headers['retry-after'], String(answer.json?.['retry_after']), what)
}

for (const transport of TRANSPORTS) {
  const skip = skipOn(transport)
  describe(`the per-IP auth limit on a real ${transport} server (D19, D20, D21)`, { skip }, () => {
    let directory: string
    let direct: ServeChild
    let proxied: ServeChild
    let directUrl: string
    let proxiedUrl: string

    before(async () => {
      directory = mkdtempSync(join(tmpdir(), `security-xff-${transport}-`))
      const env = { TRANSPORT: transport, RATE_LIMIT_AUTH: String(LIMIT) }
      direct = new ServeChild(join(directory, 'direct.sqlite'), env)
      proxied = new ServeChild(join(directory, 'proxied.sqlite'), {
        ...env,
        TRUST_PROXY: '127.0.0.1',
      })
      ;[directUrl, proxiedUrl] = await Promise.all([direct.url(), proxied.url()])
    })

    after(async () => {
      await Promise.all([direct.stop(), proxied.stop()])
      rmSync(directory, { recursive: true, force: true })
    })

    it('D21: with no trusted proxy, forged X-Forwarded-For (and Forwarded, X-Real-IP) headers all draw from the socket peer bucket', async () => {
      const forged: OutgoingHttpHeaders[] = [
        { 'x-forwarded-for': '198.51.100.1' },
        { 'x-forwarded-for': '198.51.100.2, 203.0.113.7, 10.0.0.1' },
        { 'x-forwarded-for': ['2001:db8::1', '198.51.100.3'] },
      ]
      for (const [i, headers] of forged.entries()) {
        assertAdmitted(await attempt(directUrl, headers), LIMIT - 1 - i, JSON.stringify(headers))
      }
      const escapes: OutgoingHttpHeaders[] = [
        { 'x-forwarded-for': '198.51.100.4' },
        { 'x-forwarded-for': 'unknown' },
        { 'x-forwarded-for': '127.0.0.2' },
        { forwarded: 'for=198.51.100.5;proto=https' },
        { 'x-real-ip': '198.51.100.6' },
        { 'x-client-ip': '198.51.100.7', 'true-client-ip': '198.51.100.8' },
      ]
      for (const headers of escapes) {
        assertLimited(await attempt(directUrl, headers), `login ${JSON.stringify(headers)}`)
        assertLimited(
          await attempt(directUrl, headers, 'refresh'),
          `refresh ${JSON.stringify(headers)}`,
        )
      }
    })

    it('D21: behind a trusted proxy the bucket is the right-most untrusted hop: forwarded clients get separate buckets, and prepended forged hops escape none', async () => {
      const alice = '198.51.100.7'
      const bob = '203.0.113.9'
      // Whatever a client writes is left of the hop the proxy appends: only that hop counts.
      const aliceAttempts: OutgoingHttpHeaders[] = [
        { 'x-forwarded-for': alice },
        { 'x-forwarded-for': `203.0.113.250, ${alice}` },
        { 'x-forwarded-for': `garbage, 127.0.0.1, ::1, ${alice}` },
      ]
      for (const [i, headers] of aliceAttempts.entries()) {
        assertAdmitted(await attempt(proxiedUrl, headers), LIMIT - 1 - i, JSON.stringify(headers))
      }
      const aliceEscapes: OutgoingHttpHeaders[] = [
        { 'x-forwarded-for': `10.1.2.3, ${alice}` },
        { 'x-forwarded-for': `${bob}, ${alice}` },
        { 'x-forwarded-for': `1.1.1.1, 2.2.2.2, 3.3.3.3, 4.4.4.4, ${alice}` },
        // A trusted hop after the client's (a second proxy on the loopback) is skipped.
        { 'x-forwarded-for': `9.9.9.9, ${alice}, 127.0.0.1` },
        // A forged header line before the proxy's own.
        { 'x-forwarded-for': ['192.0.2.200', alice] },
        { 'x-forwarded-for': `${alice}:51234` },
      ]
      for (const headers of aliceEscapes) {
        assertLimited(await attempt(proxiedUrl, headers), `login ${JSON.stringify(headers)}`)
      }
      assertLimited(
        await attempt(proxiedUrl, { 'x-forwarded-for': alice }, 'refresh'),
        'refresh from alice',
      )

      // Bob has his own bucket, even when he writes Alice's address on the left.
      for (let i = 0; i < LIMIT; i++) {
        const headers = { 'x-forwarded-for': `${alice}, ${bob}` }
        assertAdmitted(await attempt(proxiedUrl, headers), LIMIT - 1 - i, `bob ${i + 1}`)
      }
      assertLimited(await attempt(proxiedUrl, { 'x-forwarded-for': bob }), 'bob over the limit')

      // Another client, over IPv6, and the proxy's own requests have buckets of their own.
      assertAdmitted(
        await attempt(proxiedUrl, { 'x-forwarded-for': '2001:db8::7' }),
        LIMIT - 1,
        'an IPv6 client',
      )
      assertAdmitted(await attempt(proxiedUrl, {}), LIMIT - 1, 'the proxy itself')
    })
  })
}
