import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  ApiError,
  BeneficiaryClient,
  retryAfterMs,
  UnexpectedResponseError,
  type BeneficiaryClientOptions,
  type FetchFunction,
} from '../../client/index.js'

// What a real server never sends (a proxy's HTML 502, an HTTP-date Retry-After, a broken
// link) comes from a scripted fetch here; everything the server does send is tested against a
// real one in the other files of this folder.

const NOW = Date.UTC(2026, 0, 1, 9, 0, 0)
const TOKENS = { access_token: 'a', token_type: 'Bearer', expires_in: 3600, refresh_token: 'r' }
const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' }

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_TYPE, ...headers } })
}

function busy(status: number, retryAfter?: string): Response {
  const body = { error: status === 429 ? 'rate_limit_exceeded' : 'service_unavailable' }
  return json(
    status,
    { ...body, message: 'Try again later.', code: status },
    retryAfter === undefined ? {} : { 'retry-after': retryAfter },
  )
}

/** A client whose fetch answers from `script` in order, recording each request. */
function scripted(script: Response[], options: Partial<BeneficiaryClientOptions> = {}) {
  const requests: { url: string; init: RequestInit }[] = []
  const sleeps: number[] = []
  const fetch: FetchFunction = async (url, init) => {
    requests.push({ url, init })
    const next = script.shift()
    assert.ok(next !== undefined, `no answer scripted for ${url}`)
    return next
  }
  const client = new BeneficiaryClient({
    baseUrl: 'http://127.0.0.1:9/v3/',
    credentials: { clientId: 'id', clientSecret: 'secret' },
    fetch,
    now: () => NOW,
    sleep: async (ms) => void sleeps.push(ms),
    ...options,
  })
  return { client, requests, sleeps }
}

describe('retryAfterMs', () => {
  it('reads whole seconds and HTTP dates, and nothing else', () => {
    assert.equal(retryAfterMs('120', NOW), 120_000)
    assert.equal(retryAfterMs(' 3 ', NOW), 3_000)
    assert.equal(retryAfterMs('0', NOW), 0)
    assert.equal(retryAfterMs(new Date(NOW + 7_000).toUTCString(), NOW), 7_000)
    assert.equal(retryAfterMs('Thursday, 01-Jan-26 09:00:05 GMT', NOW), 5_000)
    assert.equal(retryAfterMs(new Date(NOW - 7_000).toUTCString(), NOW), 0)
    for (const value of [null, '', 'soon', '-1', '1.5', '1e3', '2026-01-01T09:00:05Z']) {
      assert.equal(retryAfterMs(value, NOW), undefined, String(value))
    }
  })
})

describe('the typed client, on answers a real server does not give', () => {
  it('refuses a malformed base address or option with a TypeError', () => {
    for (const baseUrl of [
      'not a url',
      'ftp://example.org/v3',
      'http://h/v3?x=1',
      'http://u:p@h/v3',
    ]) {
      assert.throws(() => new BeneficiaryClient({ baseUrl }), TypeError, baseUrl)
    }
    for (const maxRetries of [-1, 1.5, Number.NaN]) {
      assert.throws(() => new BeneficiaryClient({ baseUrl: 'http://h/v3', maxRetries }), TypeError)
    }
  })

  it('without credentials, a call that needs a token is a TypeError, and so is refresh before a login', async () => {
    const client = new BeneficiaryClient({ baseUrl: 'http://h/v3', fetch: () => assert.fail() })
    await assert.rejects(client.list(), TypeError)
    await assert.rejects(client.login(), TypeError)
    await assert.rejects(client.refresh(), TypeError)
  })

  it('joins the base address, the path and a query as the server reads them', async () => {
    const { client, requests } = scripted([
      json(200, TOKENS),
      json(200, { data: [], meta: {}, links: {} }),
    ])
    await client.list({ search: 'd’angelo & co', per_page: 5, status: undefined })
    assert.equal(
      requests[1]?.url,
      'http://127.0.0.1:9/v3/beneficiaries?search=d%E2%80%99angelo%20%26%20co&per_page=5',
    )
    const headers = requests[1]?.init.headers as Record<string, string>
    assert.equal(headers['authorization'], 'Bearer a')
    assert.equal(requests[0]?.init.body, '{"client_id":"id","client_secret":"secret"}')
  })

  it('an answer without the standard error body is an UnexpectedResponseError, not retried', async () => {
    const html = new Response('<html>Bad gateway</html>', {
      status: 502,
      headers: { 'content-type': 'text/html' },
    })
    const { client, requests } = scripted([json(200, TOKENS), html])
    const error = await client.get(1).catch((thrown: unknown) => thrown)
    assert.ok(error instanceof UnexpectedResponseError)
    assert.deepEqual([error.status, error.contentType, error.operation], [502, 'text/html', 'get'])
    assert.equal(requests.length, 2)
  })

  it('a success whose body is not JSON is an UnexpectedResponseError', async () => {
    const { client } = scripted([json(200, TOKENS), new Response('ok', { status: 200 })])
    await assert.rejects(client.get(1), UnexpectedResponseError)
  })

  it('waits for an HTTP-date Retry-After; a 503 without one is thrown at once', async () => {
    const later = new Date(NOW + 4_000).toUTCString()
    const { client, sleeps, requests } = scripted([
      json(200, TOKENS),
      busy(429, later),
      json(200, { status: 'ok' }),
      busy(503),
    ])
    await client.get(1)
    assert.deepEqual(sleeps, [4_000])
    const error = await client.get(1).catch((thrown: unknown) => thrown)
    assert.ok(error instanceof ApiError)
    assert.deepEqual([error.code, error.retryAfterSeconds], ['service_unavailable', undefined])
    assert.equal(requests.length, 4)
  })

  it('an abort during a wait ends the call with the abort reason', async () => {
    const controller = new AbortController()
    const { client } = scripted([json(200, TOKENS), busy(429, '30')], { sleep: undefined })
    const call = client.list({}, { signal: controller.signal })
    setImmediate(() => controller.abort(new Error('gave up')))
    await assert.rejects(call, /gave up/)
  })

  it('refuses to follow a link that is not a path on the same origin', async () => {
    const page = (next: string | null) => ({
      data: [{ id: 1 }],
      meta: {},
      links: { first: '', last: '', prev: null, next },
    })
    const { client, requests } = scripted([json(200, TOKENS), json(200, page('//evil.example/x'))])
    const seen: number[] = []
    await assert.rejects(async () => {
      for await (const item of client.listAll()) seen.push(item.id)
    }, UnexpectedResponseError)
    assert.deepEqual(seen, [1])
    assert.equal(requests.length, 2)
  })
})
