import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { createHandler } from '../../server/handler.js'
import { OpenApiResponseValidator } from './openapi-validator.js'
import {
  createTestHandler,
  delegateTo,
  login,
  MARIO,
  MemoryLogger,
  send,
  type Answer,
  type Call,
} from './server-fixtures.js'

const validator = new OpenApiResponseValidator()

/** `send`, plus a check of the response against the OpenAPI document. */
async function call(
  handler: Parameters<typeof send>[0],
  method: string,
  path: string,
  options: Call = {},
): Promise<Answer> {
  const answer = await send(handler, method, path, options)
  assert.deepEqual(validator.check(method, path, answer), [])
  return answer
}

function errorOf(answer: Answer): string {
  return String(answer.json?.['error'])
}

/** The headers of an answer but those that change from one request to the next. */
function steadyHeaders(answer: Answer): Record<string, string> {
  const varying = ['x-request-id', 'ratelimit', 'x-ratelimit-remaining', 'x-ratelimit-reset']
  return Object.fromEntries(
    Object.entries(answer.headers).filter(([name]) => !varying.includes(name)),
  )
}

describe('probes and routing', () => {
  it('answers /healthz and /readyz outside the base path, without a token', async () => {
    const { handler } = await createTestHandler()
    const health = await call(handler, 'GET', '/healthz')
    assert.equal(health.status, 200)
    assert.deepEqual(health.json, { status: 'ok' })
    const ready = await call(handler, 'GET', '/readyz')
    assert.equal(ready.status, 200)
    assert.equal(ready.headers['ratelimit'], undefined)
  })

  it('answers /readyz with 503 when the storage does not answer', async () => {
    const world = await createTestHandler()
    await world.storage.close()
    const ready = await call(world.handler, 'GET', '/readyz')
    assert.equal(ready.status, 503)
    assert.equal(errorOf(ready), 'service_unavailable')
  })

  it('answers GET / with where to go: the reference page when served, and the OpenAPI document', async () => {
    const { handler, service } = await createTestHandler()
    const plain = await send(handler, 'GET', '/')
    assert.equal(plain.status, 200)
    assert.deepEqual(plain.json, {
      name: 'beneficiary-service',
      openapi: '/v3/openapi.json',
      api: '/v3',
    })
    assert.equal(plain.headers['ratelimit'], undefined)
    const withDocs = createHandler(service, { docs: true, basePath: '/api/v3' })
    assert.deepEqual((await send(withDocs, 'GET', '/')).json, {
      name: 'beneficiary-service',
      docs: '/docs',
      openapi: '/api/v3/openapi.json',
      api: '/api/v3',
    })
    const refused = await send(handler, 'POST', '/')
    assert.equal(refused.status, 405)
    assert.equal(refused.headers['allow'], 'GET, HEAD')
  })

  it('D12: an unknown path is 404 with the standard error body', async () => {
    const { handler } = await createTestHandler()
    for (const path of [
      '/v3',
      '/v3/',
      '/v3/beneficiaries/',
      '/v3/beneficiaries/1/',
      '/v3/beneficiaries/1/other',
      '/v2/beneficiaries',
      '/v3/beneficiaries//status',
    ]) {
      const answer = await call(handler, 'GET', path)
      assert.equal(answer.status, 404, path)
      assert.equal(errorOf(answer), 'not_found')
      assert.equal(answer.json?.['code'], 404)
    }
  })

  it('D12: a known path with a wrong method is 405 method_not_allowed with Allow', async () => {
    const { handler } = await createTestHandler()
    const cases: [string, string, string][] = [
      ['PATCH', '/v3/beneficiaries/1', 'GET, HEAD, PUT, DELETE'],
      ['DELETE', '/v3/beneficiaries', 'GET, HEAD, POST'],
      ['GET', '/v3/auth/login', 'POST'],
      ['HEAD', '/v3/auth/login', 'POST'],
      ['PUT', '/healthz', 'GET, HEAD'],
      ['POST', '/v3/beneficiaries/1/history', 'GET, HEAD'],
    ]
    for (const [method, path, allow] of cases) {
      const answer = await call(handler, method, path)
      assert.equal(answer.status, 405, `${method} ${path}`)
      assert.equal(errorOf(answer), 'method_not_allowed')
      assert.equal(answer.headers['allow'], allow)
    }
  })

  it('D28: HEAD answers like GET on every GET route: same status and headers, same scope and limit class', async () => {
    const { handler, writer, reader } = await createTestHandler()
    const { access } = await login(handler, writer)
    const created = await call(handler, 'POST', '/v3/beneficiaries', { token: access, body: MARIO })
    const id = String(created.json?.['id'])
    for (const path of [
      '/healthz',
      '/readyz',
      '/v3/openapi.json',
      '/v3/beneficiaries',
      `/v3/beneficiaries/${id}`,
      `/v3/beneficiaries/${id}/history`,
      '/v3/beneficiaries/999',
    ]) {
      const get = await call(handler, 'GET', path, { token: access })
      const head = await call(handler, 'HEAD', path, { token: access })
      assert.equal(head.status, get.status, path)
      assert.deepEqual(steadyHeaders(head), steadyHeaders(get), path)
    }
    const anonymous = await call(handler, 'HEAD', '/v3/beneficiaries')
    assert.equal(anonymous.status, 401)
    const narrowed = await send(handler, 'POST', '/v3/auth/login', {
      body: { client_id: writer.client_id, client_secret: writer.client_secret, scope: 'write' },
    })
    const writeOnly = String(narrowed.json?.['access_token'])
    const forbidden = await call(handler, 'HEAD', `/v3/beneficiaries/${id}`, { token: writeOnly })
    assert.equal(forbidden.status, 403)
    const { access: readOnly } = await login(handler, reader)
    const limited = await call(handler, 'HEAD', '/v3/beneficiaries', { token: readOnly })
    assert.equal(limited.headers['ratelimit-policy'], '"standard";q=1000;w=60')
    assert.match(limited.headers['ratelimit'] ?? '', /^"standard";r=999;/)
  })

  it('serves the OpenAPI document at /v3/openapi.json without a token', async () => {
    const { handler } = await createTestHandler()
    const answer = await call(handler, 'GET', '/v3/openapi.json')
    assert.equal(answer.status, 200)
    assert.equal(answer.json?.['openapi'], '3.1.0')
  })

  it('honours a configured base path for routes, Location and pagination links', async () => {
    const world = await createTestHandler()
    const handler = createHandler(world.service, { basePath: '/api/v3' })
    assert.equal((await send(handler, 'GET', '/v3/beneficiaries')).status, 404)
    assert.equal((await send(handler, 'POST', '/v3/auth/login', { body: {} })).status, 404)
    const tokens = await send(handler, 'POST', '/api/v3/auth/login', {
      body: { client_id: world.writer.client_id, client_secret: world.writer.client_secret },
    })
    assert.equal(tokens.status, 200)
    const created = await send(handler, 'POST', '/api/v3/beneficiaries', {
      token: String(tokens.json?.['access_token']),
      body: { first_name: 'Ada', last_name: 'Verdi', email: 'ada@example.org' },
    })
    assert.equal(
      created.headers['location'],
      `/api/v3/beneficiaries/${String(created.json?.['id'])}`,
    )
  })

  it('refuses a malformed base path', async () => {
    const world = await createTestHandler()
    assert.throws(() => createHandler(world.service, { basePath: 'v3/' }), TypeError)
  })
})

describe('authentication on the wire (D2, D6)', () => {
  it('D6: wrong credentials are 401 invalid_credentials without WWW-Authenticate', async () => {
    const { handler, writer } = await createTestHandler()
    const answer = await call(handler, 'POST', '/v3/auth/login', {
      body: { client_id: writer.client_id, client_secret: 'wrong' },
    })
    assert.equal(answer.status, 401)
    assert.equal(errorOf(answer), 'invalid_credentials')
    assert.equal(answer.headers['www-authenticate'], undefined)
  })

  it('D6: a missing or forged token is 401 invalid_token with a Bearer challenge', async () => {
    const { handler } = await createTestHandler()
    for (const headers of [
      {},
      { authorization: 'Bearer not.a.jwt' },
      { authorization: 'Basic dXNlcjpwYXNz' },
    ]) {
      const answer = await call(handler, 'GET', '/v3/beneficiaries', { headers })
      assert.equal(answer.status, 401)
      assert.equal(errorOf(answer), 'invalid_token')
      assert.match(answer.headers['www-authenticate'] ?? '', /^Bearer error="invalid_token"/)
    }
  })

  it('D6: an expired token is 401 token_expired with a Bearer invalid_token challenge', async () => {
    const { handler, writer, clock } = await createTestHandler()
    const { access } = await login(handler, writer)
    clock.advance(3700_000)
    const answer = await call(handler, 'GET', '/v3/beneficiaries', { token: access })
    assert.equal(answer.status, 401)
    assert.equal(errorOf(answer), 'token_expired')
    assert.match(answer.headers['www-authenticate'] ?? '', /^Bearer error="invalid_token"/)
  })

  it('D2: a read-only token is 403 insufficient_scope on writes, with an RFC 6750 challenge', async () => {
    const { handler, reader } = await createTestHandler()
    const { access } = await login(handler, reader)
    const answer = await call(handler, 'POST', '/v3/beneficiaries', { token: access, body: MARIO })
    assert.equal(answer.status, 403)
    assert.equal(errorOf(answer), 'insufficient_scope')
    assert.match(
      answer.headers['www-authenticate'] ?? '',
      /^Bearer error="insufficient_scope", scope="write"/,
    )
    assert.equal((await call(handler, 'GET', '/v3/beneficiaries', { token: access })).status, 200)
  })

  it('D29: a write-only token is 403 insufficient_scope on PUT and the status change, which answer with the record', async () => {
    const { handler, writer } = await createTestHandler()
    const { access } = await login(handler, writer)
    const created = await call(handler, 'POST', '/v3/beneficiaries', { token: access, body: MARIO })
    const path = `/v3/beneficiaries/${String(created.json?.['id'])}`
    const narrowed = await send(handler, 'POST', '/v3/auth/login', {
      body: { client_id: writer.client_id, client_secret: writer.client_secret, scope: 'write' },
    })
    const writeOnly = String(narrowed.json?.['access_token'])
    for (const [method, target, body] of [
      ['PUT', path, {}],
      ['PUT', path, { last_name: 'Bianchi' }],
      ['POST', `${path}/status`, { status: 'pending' }],
      ['POST', `${path}/status`, { status: 'active' }],
    ] as const) {
      const answer = await call(handler, method, target, { token: writeOnly, body })
      assert.equal(answer.status, 403, `${method} ${target}`)
      assert.equal(errorOf(answer), 'insufficient_scope')
      assert.equal(answer.json?.['first_name'], undefined)
      assert.match(answer.headers['www-authenticate'] ?? '', /scope="read"/)
    }
    const unchanged = await call(handler, 'GET', path, { token: access })
    assert.equal(unchanged.json?.['last_name'], 'Rossi')
    assert.equal(unchanged.json?.['status'], 'pending')
    assert.equal((await call(handler, 'DELETE', path, { token: writeOnly })).status, 204)
  })

  it('D4, D5: refresh answers 200 without a refresh_token; logout is 204 and ends the session', async () => {
    const { handler, writer } = await createTestHandler()
    const { access, refresh } = await login(handler, writer)
    const renewed = await call(handler, 'POST', '/v3/auth/refresh', {
      body: { refresh_token: refresh },
    })
    assert.equal(renewed.status, 200)
    assert.deepEqual(Object.keys(renewed.json ?? {}).sort(), [
      'access_token',
      'expires_in',
      'token_type',
    ])
    const out = await call(handler, 'POST', '/v3/auth/logout', { token: access })
    assert.equal(out.status, 204)
    assert.equal(out.body, undefined)
    assert.equal(out.headers['content-type'], undefined)
    const again = await call(handler, 'POST', '/v3/auth/refresh', {
      body: { refresh_token: refresh },
    })
    assert.equal(again.status, 401)
    assert.equal(errorOf(again), 'invalid_token')
    assert.match(again.headers['www-authenticate'] ?? '', /^Bearer error="invalid_token"/)
  })

  it('takes the token from a Bearer header whatever the scheme case', async () => {
    const { handler, writer } = await createTestHandler()
    const { access } = await login(handler, writer)
    const answer = await call(handler, 'GET', '/v3/beneficiaries', {
      headers: { authorization: `bearer ${access}` },
    })
    assert.equal(answer.status, 200)
  })
})

describe('beneficiaries on the wire', () => {
  it('walks create, get, list, update, status, history and delete with the documented statuses', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    const created = await call(handler, 'POST', '/v3/beneficiaries', { token, body: MARIO })
    assert.equal(created.status, 201)
    const id = Number(created.json?.['id'])
    assert.equal(created.headers['location'], `/v3/beneficiaries/${id}`)
    assert.equal(created.json?.['status'], 'pending')

    const got = await call(handler, 'GET', `/v3/beneficiaries/${id}`, { token })
    assert.equal(got.status, 200)
    assert.equal(got.json?.['fiscal_code'], MARIO.fiscal_code)
    assert.ok(got.headers['etag'])

    const listed = await call(handler, 'GET', '/v3/beneficiaries', {
      token,
      query: 'search=mario+ros&per_page=5',
    })
    assert.equal(listed.status, 200)
    assert.equal((listed.json?.['data'] as unknown[]).length, 1)
    const links = listed.json?.['links'] as Record<string, unknown>
    assert.equal(links['first'], '/v3/beneficiaries?page=1&per_page=5&search=mario%20ros')

    const updated = await call(handler, 'PUT', `/v3/beneficiaries/${id}`, {
      token,
      body: { phone: null },
    })
    assert.equal(updated.status, 200)
    assert.equal(updated.json?.['phone'], null)
    assert.notEqual(updated.headers['etag'], got.headers['etag'])

    const moved = await call(handler, 'POST', `/v3/beneficiaries/${id}/status`, {
      token,
      body: { status: 'active' },
    })
    assert.equal(moved.status, 200)
    assert.equal(moved.json?.['status'], 'active')

    const history = await call(handler, 'GET', `/v3/beneficiaries/${id}/history`, { token })
    assert.equal(history.status, 200)
    const actions = (history.json?.['data'] as { action: string }[]).map((entry) => entry.action)
    assert.deepEqual(actions, ['created', 'updated', 'status_changed'])

    const removed = await call(handler, 'DELETE', `/v3/beneficiaries/${id}`, { token })
    assert.equal(removed.status, 204)
    assert.equal(removed.body, undefined)
    const gone = await call(handler, 'GET', `/v3/beneficiaries/${id}`, { token })
    assert.equal(gone.status, 404)
    assert.equal(errorOf(gone), 'not_found')
    assert.equal(
      (await call(handler, 'GET', `/v3/beneficiaries/${id}/history`, { token })).status,
      404,
    )
  })

  it('D10: invalid fields are 422 validation_failed with every problem in details', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    const answer = await call(handler, 'POST', '/v3/beneficiaries', {
      token,
      body: { first_name: '', email: 'nope', address: { country: 'XX' }, id: 4 },
    })
    assert.equal(answer.status, 422)
    assert.equal(errorOf(answer), 'validation_failed')
    const fields = (answer.json?.['details'] as { field: string }[]).map((d) => d.field)
    for (const field of ['first_name', 'last_name', 'email', 'id'])
      assert.ok(fields.includes(field), field)
  })

  it('D10: query parameters are validated and named (per_page)', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    const answer = await call(handler, 'GET', '/v3/beneficiaries', { token, query: 'per_page=101' })
    assert.equal(answer.status, 422)
    assert.deepEqual(
      (answer.json?.['details'] as { field: string }[]).map((d) => d.field),
      ['per_page'],
    )
  })

  it('D12: a query string with broken percent-encoding is 400 bad_request', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    const answer = await call(handler, 'GET', '/v3/beneficiaries', {
      token,
      query: 'search=%E0%A4%A',
    })
    assert.equal(answer.status, 400)
    assert.equal(errorOf(answer), 'bad_request')
  })

  it('D12: an id that is not a positive integer is 404', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    for (const id of ['abc', '0', '-1', '1.5', '99999999999999999999', '%31']) {
      const answer = await call(handler, 'GET', `/v3/beneficiaries/${id}`, { token })
      assert.equal(answer.status, 404, id)
    }
  })

  it('D14: asking for pending is 422 invalid_transition', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    const created = await call(handler, 'POST', '/v3/beneficiaries', { token, body: MARIO })
    const answer = await call(
      handler,
      'POST',
      `/v3/beneficiaries/${String(created.json?.['id'])}/status`,
      {
        token,
        body: { status: 'pending' },
      },
    )
    assert.equal(answer.status, 422)
    assert.equal(errorOf(answer), 'invalid_transition')
  })

  it('D22: the same Idempotency-Key and body replays the 201 with Idempotent-Replayed; another body is 422', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    const headers = { 'idempotency-key': 'order-7f3a' }
    const first = await call(handler, 'POST', '/v3/beneficiaries', { token, body: MARIO, headers })
    assert.equal(first.status, 201)
    assert.equal(first.headers['idempotent-replayed'], undefined)
    const replay = await call(handler, 'POST', '/v3/beneficiaries', { token, body: MARIO, headers })
    assert.equal(replay.status, 201)
    assert.equal(replay.headers['idempotent-replayed'], 'true')
    assert.equal(replay.json?.['id'], first.json?.['id'])
    assert.equal(replay.headers['location'], first.headers['location'])
    const reused = await call(handler, 'POST', '/v3/beneficiaries', {
      token,
      body: { ...MARIO, first_name: 'Luigi' },
      headers,
    })
    assert.equal(reused.status, 422)
    assert.equal(errorOf(reused), 'idempotency_key_reused')
  })

  it('D23: ETag and If-Match: a stale ETag is 412 precondition_failed and changes nothing', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    const created = await call(handler, 'POST', '/v3/beneficiaries', { token, body: MARIO })
    const path = `/v3/beneficiaries/${String(created.json?.['id'])}`
    const etag = (await call(handler, 'GET', path, { token })).headers['etag']!
    const fresh = await call(handler, 'PUT', path, {
      token,
      body: { first_name: 'Marco' },
      headers: { 'if-match': etag },
    })
    assert.equal(fresh.status, 200)
    for (const [method, body] of [
      ['PUT', { first_name: 'Matteo' }],
      ['DELETE', undefined],
    ] as const) {
      const stale = await call(handler, method, path, {
        token,
        body,
        headers: { 'if-match': etag },
      })
      assert.equal(stale.status, 412, method)
      assert.equal(errorOf(stale), 'precondition_failed')
    }
    const status = await call(handler, 'POST', `${path}/status`, {
      token,
      body: { status: 'active' },
      headers: { 'if-match': etag },
    })
    assert.equal(status.status, 412)
    assert.equal((await call(handler, 'GET', path, { token })).json?.['first_name'], 'Marco')
  })
})

describe('the rest of the decisions, as they reach the wire', () => {
  it('D7, D9: a create without the required fields or with read-only fields is 422 naming each', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    const answer = await call(handler, 'POST', '/v3/beneficiaries', {
      token,
      body: { email: 'a@example.org', status: 'active', created_at: 'x', nickname: 'Al' },
    })
    assert.equal(answer.status, 422)
    const fields = (answer.json?.['details'] as { field: string }[]).map((d) => d.field).sort()
    assert.deepEqual(fields, ['created_at', 'first_name', 'last_name', 'nickname', 'status'])
  })

  it('D11: PUT is a partial update answering 200 with the full detail shape', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    const created = await call(handler, 'POST', '/v3/beneficiaries', { token, body: MARIO })
    const path = `/v3/beneficiaries/${String(created.json?.['id'])}`
    const updated = await call(handler, 'PUT', path, { token, body: { address: null } })
    assert.equal(updated.status, 200)
    assert.equal(updated.json?.['address'], null)
    assert.equal(updated.json?.['fiscal_code'], MARIO.fiscal_code)
  })

  it('D13: deleting twice answers 204 then 404', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    const created = await call(handler, 'POST', '/v3/beneficiaries', { token, body: MARIO })
    const path = `/v3/beneficiaries/${String(created.json?.['id'])}`
    assert.equal((await call(handler, 'DELETE', path, { token })).status, 204)
    assert.equal((await call(handler, 'DELETE', path, { token })).status, 404)
  })

  it('D15, D17, D18: sort, date and paging parameters pass through; bad ones are 422 naming the parameter', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    for (const last_name of ['Bianchi', 'Verdi']) {
      await call(handler, 'POST', '/v3/beneficiaries', {
        token,
        body: { first_name: 'Ada', last_name, email: `${last_name}@example.org` },
      })
    }
    const sorted = await call(handler, 'GET', '/v3/beneficiaries', {
      token,
      query: 'sort=-last_name&per_page=1',
    })
    assert.equal((sorted.json?.['data'] as { last_name: string }[])[0]?.last_name, 'Verdi')
    assert.match(
      String((sorted.json?.['links'] as Record<string, unknown>)['next']),
      /sort=-last_name/,
    )
    const past = await call(handler, 'GET', '/v3/beneficiaries', { token, query: 'page=9' })
    assert.equal(past.status, 200)
    assert.deepEqual(past.json?.['data'], [])
    for (const [query, field] of [
      ['created_from=2026-02-30', 'created_from'],
      ['created_from=2026-03-02&created_to=2026-03-01', 'created_from'],
      ['page=0', 'page'],
      ['sort=email', 'sort'],
    ] as const) {
      const answer = await call(handler, 'GET', '/v3/beneficiaries', { token, query })
      assert.equal(answer.status, 422, query)
      assert.ok(
        (answer.json?.['details'] as { field: string }[]).some((d) => d.field === field),
        query,
      )
    }
  })

  it('D19: each request draws from one class, named in RateLimit-Policy', async () => {
    const { handler, writer } = await createTestHandler({
      limits: { auth: 5, write: 10, standard: 100 },
    })
    const tokens = await send(handler, 'POST', '/v3/auth/login', {
      body: { client_id: writer.client_id, client_secret: writer.client_secret },
    })
    assert.equal(tokens.headers['ratelimit-policy'], '"auth";q=5;w=60')
    const token = String(tokens.json?.['access_token'])
    const created = await call(handler, 'POST', '/v3/beneficiaries', { token, body: MARIO })
    assert.equal(created.headers['ratelimit-policy'], '"write";q=10;w=60')
    const path = `/v3/beneficiaries/${String(created.json?.['id'])}`
    assert.equal(
      (await call(handler, 'POST', `${path}/status`, { token, body: { status: 'active' } }))
        .headers['ratelimit-policy'],
      '"write";q=10;w=60',
    )
    assert.equal(
      (await call(handler, 'GET', `${path}/history`, { token })).headers['ratelimit-policy'],
      '"standard";q=100;w=60',
    )
    assert.equal(
      (await call(handler, 'POST', '/v3/auth/logout', { token })).headers['ratelimit-policy'],
      '"standard";q=100;w=60',
    )
  })
})

describe('bodies (D8, D12)', () => {
  const cases: [string, Call, number, string][] = [
    ['malformed JSON', { raw: new TextEncoder().encode('{"first_name": ') }, 400, 'bad_request'],
    ['a JSON array', { body: [1, 2] }, 400, 'bad_request'],
    ['a JSON string', { body: 'Mario' }, 400, 'bad_request'],
    [
      'invalid UTF-8',
      { raw: Uint8Array.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d]) },
      400,
      'bad_request',
    ],
    [
      'nesting 33 deep',
      { raw: new TextEncoder().encode(`{"metadata":${'['.repeat(32)}${']'.repeat(32)}}`) },
      400,
      'bad_request',
    ],
    ['text/plain', { body: MARIO, contentType: 'text/plain' }, 415, 'unsupported_media_type'],
    [
      'form-encoded',
      {
        raw: new TextEncoder().encode('first_name=Mario'),
        contentType: 'application/x-www-form-urlencoded',
      },
      415,
      'unsupported_media_type',
    ],
    [
      'JSON in Latin-1',
      { body: MARIO, contentType: 'application/json; charset=iso-8859-1' },
      415,
      'unsupported_media_type',
    ],
    ['over 1 MiB', { bodyError: 'too_large' }, 413, 'payload_too_large'],
    ['too slow', { bodyError: 'timeout' }, 408, 'request_timeout'],
  ]
  for (const [name, options, status, error] of cases) {
    it(`D12: ${name} is ${status} ${error}`, async () => {
      const { handler, writer } = await createTestHandler()
      const { access: token } = await login(handler, writer)
      const answer = await call(handler, 'POST', '/v3/beneficiaries', { token, ...options })
      assert.equal(answer.status, status)
      assert.equal(errorOf(answer), error)
      assert.equal(answer.json?.['code'], status)
    })
  }

  it('D19: the limiter comes before any work on the body: malformed JSON without a token is 401', async () => {
    const { handler } = await createTestHandler()
    const raw = new TextEncoder().encode('{"first_name": ')
    const answer = await call(handler, 'POST', '/v3/beneficiaries', { raw })
    assert.equal(answer.status, 401)
    assert.equal(errorOf(answer), 'invalid_token')
  })

  it('D19: a malformed body from an admitted request draws from its limit before the 400', async () => {
    const { handler, writer } = await createTestHandler({ limits: { auth: 100, write: 1 } })
    const { access: token } = await login(handler, writer)
    const raw = new TextEncoder().encode('{"first_name": ')
    const first = await call(handler, 'POST', '/v3/beneficiaries', { token, raw })
    assert.equal(first.status, 400)
    assert.equal(first.headers['ratelimit'], '"write";r=0;t=60')
    const second = await call(handler, 'POST', '/v3/beneficiaries', { token, raw })
    assert.equal(second.status, 429)
  })

  it('D12: accepts application/json with a UTF-8 charset and +json types', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    for (const [i, contentType] of [
      'application/json; charset=UTF-8',
      'application/merge-patch+json',
      'Application/JSON',
    ].entries()) {
      const body = {
        first_name: 'Ada',
        last_name: `Verdi${'abc'[i]}`,
        email: `ada${i}@example.org`,
      }
      const answer = await call(handler, 'POST', '/v3/beneficiaries', { token, body, contentType })
      assert.equal(answer.status, 201, contentType)
    }
  })

  it('D12: nesting of exactly 32 levels reaches validation (422, not 400)', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    const raw = new TextEncoder().encode(`{"metadata":${'['.repeat(31)}${']'.repeat(31)}}`)
    const answer = await call(handler, 'POST', '/v3/beneficiaries', { token, raw })
    assert.equal(answer.status, 422)
  })

  it('D8: a __proto__ key cannot pollute prototypes and is refused', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    const raw = new TextEncoder().encode(
      '{"first_name":"Eve","last_name":"Nero","email":"eve@example.org","__proto__":{"polluted":true},"metadata":{"__proto__":{"admin":true}}}',
    )
    const answer = await call(handler, 'POST', '/v3/beneficiaries', { token, raw })
    assert.equal(answer.status, 422)
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined)
    assert.equal(({} as Record<string, unknown>)['admin'], undefined)
  })

  it('ignores a JSON body on an operation that takes none', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    const answer = await call(handler, 'GET', '/v3/beneficiaries', { token, body: { page: 'x' } })
    assert.equal(answer.status, 200)
  })

  it('logout with an empty or JSON body is 204; with malformed JSON it is 400', async () => {
    const { handler, writer } = await createTestHandler()
    const first = await login(handler, writer)
    assert.equal(
      (
        await call(handler, 'POST', '/v3/auth/logout', {
          token: first.access,
          raw: new Uint8Array(),
        })
      ).status,
      204,
    )
    const second = await login(handler, writer)
    const bad = await call(handler, 'POST', '/v3/auth/logout', {
      token: second.access,
      raw: new TextEncoder().encode('{'),
    })
    assert.equal(bad.status, 400)
    const ok = await call(handler, 'POST', '/v3/auth/logout', {
      token: second.access,
      body: { refresh_token: second.refresh },
    })
    assert.equal(ok.status, 204)
  })
})

describe('rate limits (D19, D20, D21)', () => {
  it('D20: every limited response carries the IETF RateLimit fields and X-RateLimit-*', async () => {
    const { handler, writer } = await createTestHandler({
      limits: { auth: 5, write: 10, standard: 100 },
    })
    const { access: token } = await login(handler, writer)
    const answer = await call(handler, 'GET', '/v3/beneficiaries', { token })
    assert.equal(answer.headers['ratelimit-policy'], '"standard";q=100;w=60')
    assert.match(answer.headers['ratelimit'] ?? '', /^"standard";r=99;t=[0-9]+$/)
    assert.equal(answer.headers['x-ratelimit-limit'], '100')
    assert.equal(answer.headers['x-ratelimit-remaining'], '99')
    assert.match(answer.headers['x-ratelimit-reset'] ?? '', /^[0-9]+$/)
    const failed = await call(handler, 'GET', '/v3/beneficiaries/999', { token })
    assert.equal(failed.status, 404)
    assert.equal(failed.headers['x-ratelimit-remaining'], '98')
  })

  it('D20: an empty bucket is 429 with retry_after and a matching Retry-After; time refills it', async () => {
    const { handler, writer, clock } = await createTestHandler({
      limits: { auth: 100, write: 2, standard: 100 },
    })
    const { access: token } = await login(handler, writer)
    for (let i = 0; i < 2; i++) {
      const body = { first_name: 'Ada', last_name: 'Verdi', email: `ada${i}@example.org` }
      assert.equal((await call(handler, 'POST', '/v3/beneficiaries', { token, body })).status, 201)
    }
    const limited = await call(handler, 'POST', '/v3/beneficiaries', { token, body: MARIO })
    assert.equal(limited.status, 429)
    assert.equal(errorOf(limited), 'rate_limit_exceeded')
    assert.equal(limited.json?.['code'], 429)
    const retryAfter = limited.json?.['retry_after']
    assert.equal(typeof retryAfter, 'number')
    assert.equal(limited.headers['retry-after'], String(retryAfter))
    assert.equal(limited.headers['x-ratelimit-remaining'], '0')
    assert.match(limited.headers['ratelimit'] ?? '', /^"write";r=0;t=[0-9]+$/)
    clock.advance(Number(retryAfter) * 1000)
    assert.equal(
      (await call(handler, 'POST', '/v3/beneficiaries', { token, body: MARIO })).status,
      201,
    )
  })

  it('D21: without trusted proxies X-Forwarded-For is ignored: the auth limit keys on the socket peer', async () => {
    const { handler, writer } = await createTestHandler({
      limits: { auth: 2, write: 10, standard: 100 },
    })
    const body = { client_id: writer.client_id, client_secret: 'wrong' }
    for (const spoof of ['198.51.100.1', '198.51.100.2']) {
      const answer = await call(handler, 'POST', '/v3/auth/login', {
        body,
        headers: { 'x-forwarded-for': spoof },
      })
      assert.equal(answer.status, 401)
    }
    const third = await call(handler, 'POST', '/v3/auth/login', {
      body,
      headers: { 'x-forwarded-for': '198.51.100.3' },
    })
    assert.equal(third.status, 429)
  })

  it('D21: behind a trusted proxy a spoofed left-most X-Forwarded-For entry does not change the auth-limit key', async () => {
    const { handler, writer } = await createTestHandler({
      limits: { auth: 2, write: 10, standard: 100 },
      trustProxy: ['10.0.0.0/8'],
    })
    const body = { client_id: writer.client_id, client_secret: 'wrong' }
    const from = (xff: string): Call => ({
      body,
      remoteAddress: '10.0.0.5',
      headers: { 'x-forwarded-for': xff },
    })
    assert.equal(
      (await call(handler, 'POST', '/v3/auth/login', from('1.1.1.1, 203.0.113.9'))).status,
      401,
    )
    assert.equal(
      (await call(handler, 'POST', '/v3/auth/login', from('2.2.2.2, 203.0.113.9, 10.0.0.7')))
        .status,
      401,
    )
    assert.equal(
      (await call(handler, 'POST', '/v3/auth/login', from('3.3.3.3, 203.0.113.9'))).status,
      429,
    )
    // Another client behind the same proxy has its own bucket.
    assert.equal((await call(handler, 'POST', '/v3/auth/login', from('203.0.113.10'))).status, 401)
  })

  it('D21: reads the peer address for login and refresh only, before its first await', async () => {
    const world = await createTestHandler()
    const { access, refresh } = await login(world.handler, world.writer)
    const reads: string[] = []
    // A transport may work the address out on demand, while its socket is still there: the
    // handler reads it in the same synchronous run that received the request, or never.
    const request = (method: string, path: string, body?: unknown) => {
      let received = true
      queueMicrotask(() => (received = false))
      return {
        method,
        path,
        query: '',
        headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : new TextEncoder().encode(JSON.stringify(body)),
        get remoteAddress(): string {
          reads.push(`${method} ${path}${received ? '' : ' (too late)'}`)
          return '192.0.2.9'
        },
      }
    }
    const get = await world.handler(request('GET', '/v3/beneficiaries'))
    assert.equal(get.status, 200)
    const body = { client_id: world.writer.client_id, client_secret: world.writer.client_secret }
    assert.equal((await world.handler(request('POST', '/v3/auth/login', body))).status, 200)
    const renewal = { refresh_token: refresh }
    assert.equal((await world.handler(request('POST', '/v3/auth/refresh', renewal))).status, 200)
    assert.deepEqual(reads, ['POST /v3/auth/login', 'POST /v3/auth/refresh'])
  })

  it('D21: health, readiness and the document are not rate limited', async () => {
    const { handler } = await createTestHandler({ limits: { auth: 1, write: 1, standard: 1 } })
    for (let i = 0; i < 5; i++) {
      for (const path of ['/healthz', '/readyz', '/v3/openapi.json']) {
        assert.equal((await call(handler, 'GET', path)).status, 200)
      }
    }
  })
})

describe('headers (D24)', () => {
  it('D24: every response carries X-Request-Id, no-store, nosniff and a UTF-8 JSON type', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    const answers = [
      await call(handler, 'GET', '/healthz'),
      await call(handler, 'GET', '/nowhere'),
      await call(handler, 'GET', '/v3/beneficiaries', { token }),
      await call(handler, 'POST', '/v3/auth/login', { body: {} }),
    ]
    for (const answer of answers) {
      assert.match(answer.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/)
      assert.equal(answer.headers['cache-control'], 'no-store')
      assert.equal(answer.headers['x-content-type-options'], 'nosniff')
      assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8')
    }
  })

  it("D24: a sane client X-Request-Id is echoed in the header and the error body's request_id", async () => {
    const { handler } = await createTestHandler()
    const answer = await call(handler, 'GET', '/v3/beneficiaries', {
      headers: { 'x-request-id': 'trace-42:a_b.c' },
    })
    assert.equal(answer.headers['x-request-id'], 'trace-42:a_b.c')
    assert.equal(answer.json?.['request_id'], 'trace-42:a_b.c')
  })

  it('D24: an insane X-Request-Id is replaced by a new one', async () => {
    const { handler } = await createTestHandler()
    for (const id of ['', 'x'.repeat(129), 'has space', 'new\nline', 'quote"s', 'ünï']) {
      const answer = await call(handler, 'GET', '/healthz', { headers: { 'x-request-id': id } })
      assert.notEqual(answer.headers['x-request-id'], id)
      assert.match(answer.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/)
    }
  })

  it('D27: history entries record the request id that made the change', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    const created = await call(handler, 'POST', '/v3/beneficiaries', {
      token,
      body: MARIO,
      headers: { 'x-request-id': 'create-1' },
    })
    const history = await call(
      handler,
      'GET',
      `/v3/beneficiaries/${String(created.json?.['id'])}/history`,
      { token },
    )
    const [entry] = history.json?.['data'] as { request_id: string; client_id: string }[]
    assert.equal(entry?.request_id, 'create-1')
    assert.equal(entry?.client_id, writer.client_id)
  })
})

describe('unexpected failures', () => {
  it('a plain Error becomes a logged 500 with a generic body, never its message or stack', async () => {
    const world = await createTestHandler()
    const failing = delegateTo(world.service, {
      listJson: () =>
        Promise.reject(
          new Error('SELECT * FROM beneficiaries WHERE fiscal_code = RSSMRA85T10A562S'),
        ),
    })
    const logger = new MemoryLogger()
    const handler = createHandler(failing, { logger })
    const answer = await call(handler, 'GET', '/v3/beneficiaries')
    assert.equal(answer.status, 500)
    assert.equal(errorOf(answer), 'internal_error')
    assert.equal(answer.json?.['code'], 500)
    assert.ok(!answer.body?.includes('SELECT'))
    assert.ok(!answer.body?.includes('at '))
    const logged = logger.lines.join('\n')
    assert.ok(logged.includes('"level":50'))
    assert.ok(!logged.includes('RSSMRA85T10A562S'))
  })

  it('logs one line per request with id, method, route pattern, status, duration and client id', async () => {
    const logger = new MemoryLogger()
    const { handler, writer } = await createTestHandler({ logger })
    const { access: token } = await login(handler, writer)
    await call(handler, 'GET', '/v3/beneficiaries/12345', {
      token,
      headers: { 'x-request-id': 'abc' },
    })
    const entry = logger.entries.at(-1)!
    assert.deepEqual(Object.keys(entry).sort(), [
      'client_id',
      'duration_ms',
      'level',
      'method',
      'request_id',
      'route',
      'status',
    ])
    assert.equal(entry['route'], '/v3/beneficiaries/:id')
    assert.equal(entry['request_id'], 'abc')
    assert.equal(entry['status'], 404)
    assert.equal(typeof entry['duration_ms'], 'number')
    assert.ok(!logger.lines.join('\n').includes('12345'))
    const login200 = logger.entries.find((e) => e['route'] === '/v3/auth/login')
    assert.equal(login200?.['client_id'], writer.client_id)
  })
})

after(() => {
  // Every status of specification 7.2 the server can produce was checked against the document.
  const statuses = new Set([...validator.seen].map((key) => key.split(' ')[2]))
  for (const status of [
    '200',
    '201',
    '204',
    '400',
    '401',
    '403',
    '404',
    '412',
    '413',
    '415',
    '422',
    '429',
    '500',
  ]) {
    assert.ok(statuses.has(status), `status ${status} was never validated against the document`)
  }
})
