import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { request as httpsRequest } from 'node:https'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type {
  BeneficiaryService,
  ProvisionedClient,
  RateLimitOptions,
} from '../../../core/index.js'
import type { ApiResponse } from '../../../server/api-response.js'
import { createLogger } from '../../../server/logger.js'
import { startServer, type RunningServer } from '../../../server/start-server.js'
import type { TransportName } from '../../../server/transports/transport.js'
import { OpenApiResponseValidator } from '../openapi-validator.js'
import { createWorld, delegateTo, MARIO, type World } from '../server-fixtures.js'
import { skipOn } from '../../support/transports.js'

const MIB = 1024 * 1024

/** The methods the uWebSockets.js build routes (its `any` is these); it closes on any other. */
const UWS_ROUTED_METHODS: readonly string[] = [
  'GET',
  'POST',
  'HEAD',
  'PUT',
  'DELETE',
  'CONNECT',
  'OPTIONS',
  'TRACE',
  'PATCH',
]
const REQUEST_TIMEOUT_MS = 800

/** A fetch answer in the handler's terms, with the JSON body parsed. */
interface WireAnswer extends ApiResponse {
  readonly body: string | undefined
  readonly json: Record<string, unknown> | undefined
}

interface WireCall {
  readonly token?: string
  readonly body?: unknown
  readonly raw?: Uint8Array | string
  readonly headers?: Record<string, string>
}

/** One server over a world, and everything it logged. */
interface Running {
  readonly world: World
  readonly server: RunningServer
  readonly logs: string[]
}

/**
 * The HTTP suite every transport passes: every endpoint, every status of specification 7.2 the
 * server can produce, the D-tags visible on the wire, and malformed requests that must get a
 * clean 4xx while the server keeps serving. Run it with the transport's name.
 */
export function transportSuite(transport: TransportName): void {
  const validator = new OpenApiResponseValidator()
  const servers: Running[] = []
  const secrets = new Set<string>()
  const values = new Set<string>()

  async function start(
    options: {
      limits?: RateLimitOptions
      trustProxy?: readonly string[]
      wrap?: (service: BeneficiaryService) => BeneficiaryService
    } = {},
  ): Promise<Running> {
    const world = await createWorld(options.limits === undefined ? {} : { limits: options.limits })
    const logs: string[] = []
    const server = await startServer({
      service: options.wrap?.(world.service) ?? world.service,
      transport,
      host: '127.0.0.1',
      port: 0,
      logger: createLogger({ destination: { write: (line: string) => void logs.push(line) } }),
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      headersTimeoutMs: REQUEST_TIMEOUT_MS,
      ...(options.trustProxy !== undefined && { trustProxy: options.trustProxy }),
    })
    secrets.add(world.writer.client_secret).add(world.reader.client_secret)
    const running = { world, server, logs }
    servers.push(running)
    return running
  }

  async function wire(
    running: Running,
    method: string,
    path: string,
    call: WireCall = {},
  ): Promise<WireAnswer> {
    const headers: Record<string, string> = { ...call.headers }
    if (call.token !== undefined) headers['authorization'] = `Bearer ${call.token}`
    let body: string | Uint8Array | undefined = typeof call.raw === 'string' ? call.raw : call.raw
    if (call.body !== undefined) body = JSON.stringify(call.body)
    if (body !== undefined) headers['content-type'] ??= 'application/json'
    const response = await fetch(running.server.url + path, {
      method,
      headers,
      ...(body !== undefined && { body }),
    })
    const text = await response.text()
    const answer: WireAnswer = {
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body: text === '' && response.status === 204 ? undefined : text,
      json: response.headers.get('content-type')?.startsWith('application/json')
        ? (JSON.parse(text) as Record<string, unknown>)
        : undefined,
    }
    const problems = validator.check(method, path.split('?')[0]!, answer)
    assert.deepEqual(problems, [], `${method} ${path}`)
    for (const key of ['access_token', 'refresh_token']) {
      const token = answer.json?.[key]
      if (typeof token === 'string') secrets.add(token)
    }
    return answer
  }

  async function login(
    running: Running,
    client: ProvisionedClient = running.world.writer,
  ): Promise<string> {
    const answer = await wire(running, 'POST', '/v3/auth/login', {
      body: { client_id: client.client_id, client_secret: client.client_secret },
    })
    assert.equal(answer.status, 200)
    return String(answer.json?.['access_token'])
  }

  describe(`the ${transport} transport over HTTP`, { skip: skipOn(transport) }, () => {
    let main: Running
    let token: string

    before(async () => {
      main = await start()
      token = await login(main)
      collectValues(MARIO, values)
    })

    after(async () => {
      for (const running of servers) await running.server.close(1_000)
      // D25: nothing logged in the whole run holds a secret, a token or a beneficiary value.
      const logged = servers.flatMap((running) => running.logs).join('\n')
      assert.ok(logged.includes('"route":"/v3/beneficiaries/:id"'), 'the run was logged')
      for (const secret of secrets)
        assert.ok(!logged.includes(secret), 'a secret or token reached the log')
      for (const value of values)
        assert.ok(!logged.includes(value), `the value ${value} reached the log`)
      assert.ok(!/authorization/i.test(logged))
    })

    it('walks every endpoint with the statuses of the specification', async () => {
      const created = await wire(main, 'POST', '/v3/beneficiaries', { token, body: MARIO })
      assert.equal(created.status, 201)
      const id = Number(created.json?.['id'])
      assert.equal(created.headers['location'], `/v3/beneficiaries/${id}`)
      const got = await wire(main, 'GET', `/v3/beneficiaries/${id}`, { token })
      assert.equal(got.status, 200)
      assert.match(got.headers['etag'] ?? '', /^"/)
      const listed = await wire(
        main,
        'GET',
        '/v3/beneficiaries?search=ros&status=pending&per_page=10',
        { token },
      )
      assert.equal(listed.status, 200)
      assert.equal((listed.json?.['meta'] as Record<string, unknown>)['total_count'], 1)
      const updated = await wire(main, 'PUT', `/v3/beneficiaries/${id}`, {
        token,
        body: { phone: '+39 02 1234567' },
      })
      assert.equal(updated.status, 200)
      const moved = await wire(main, 'POST', `/v3/beneficiaries/${id}/status`, {
        token,
        body: { status: 'active', reason: 'documents checked' },
      })
      assert.equal(moved.status, 200)
      const history = await wire(main, 'GET', `/v3/beneficiaries/${id}/history`, { token })
      assert.equal(history.status, 200)
      assert.equal((history.json?.['data'] as unknown[]).length, 3)
      const removed = await wire(main, 'DELETE', `/v3/beneficiaries/${id}`, { token })
      assert.equal(removed.status, 204)
      assert.equal(removed.body, undefined)
      assert.equal((await wire(main, 'GET', `/v3/beneficiaries/${id}`, { token })).status, 404)
      const document = await wire(main, 'GET', '/v3/openapi.json')
      assert.equal(document.json?.['openapi'], '3.1.0')
      assert.deepEqual((await wire(main, 'GET', '/healthz')).json, { status: 'ok' })
      assert.equal((await wire(main, 'GET', '/readyz')).status, 200)
    })

    it('D4, D5: refresh and logout over the wire', async () => {
      const writer = main.world.writer
      const tokens = await wire(main, 'POST', '/v3/auth/login', {
        body: { client_id: writer.client_id, client_secret: writer.client_secret },
      })
      const refresh = String(tokens.json?.['refresh_token'])
      const renewed = await wire(main, 'POST', '/v3/auth/refresh', {
        body: { refresh_token: refresh },
      })
      assert.equal(renewed.status, 200)
      const out = await wire(main, 'POST', '/v3/auth/logout', {
        token: String(renewed.json?.['access_token']),
      })
      assert.equal(out.status, 204)
      assert.equal(
        (await wire(main, 'POST', '/v3/auth/refresh', { body: { refresh_token: refresh } })).status,
        401,
      )
    })

    it('D2, D6: 401 and 403 carry their WWW-Authenticate challenges; bad credentials do not', async () => {
      const missing = await wire(main, 'GET', '/v3/beneficiaries')
      assert.equal(missing.status, 401)
      assert.match(missing.headers['www-authenticate'] ?? '', /^Bearer error="invalid_token"/)
      const bad = await wire(main, 'POST', '/v3/auth/login', {
        body: { client_id: 'nobody', client_secret: 'x' },
      })
      assert.equal(bad.status, 401)
      assert.equal(bad.json?.['error'], 'invalid_credentials')
      assert.equal(bad.headers['www-authenticate'], undefined)
      const readOnly = await login(main, main.world.reader)
      const forbidden = await wire(main, 'DELETE', '/v3/beneficiaries/1', { token: readOnly })
      assert.equal(forbidden.status, 403)
      assert.match(forbidden.headers['www-authenticate'] ?? '', /insufficient_scope/)
      main.world.clock.advance(3700_000)
      const expired = await wire(main, 'GET', '/v3/beneficiaries', { token: readOnly })
      assert.equal(expired.json?.['error'], 'token_expired')
      token = await login(main)
    })

    it('D29: a write-only token is 403 on PUT and the status change, which answer with the record', async () => {
      const created = await wire(main, 'POST', '/v3/beneficiaries', { token, body: MARIO })
      const path = `/v3/beneficiaries/${String(created.json?.['id'])}`
      const narrowed = await wire(main, 'POST', '/v3/auth/login', {
        body: {
          client_id: main.world.writer.client_id,
          client_secret: main.world.writer.client_secret,
          scope: 'write',
        },
      })
      const writeOnly = String(narrowed.json?.['access_token'])
      const put = await wire(main, 'PUT', path, { token: writeOnly, body: {} })
      assert.equal(put.status, 403)
      assert.equal(put.json?.['error'], 'insufficient_scope')
      const moved = await wire(main, 'POST', `${path}/status`, {
        token: writeOnly,
        body: { status: 'active' },
      })
      assert.equal(moved.status, 403)
      assert.equal((await wire(main, 'GET', path, { token })).json?.['status'], 'pending')
      assert.equal((await wire(main, 'DELETE', path, { token: writeOnly })).status, 204)
    })

    it('D8, D10: a name without a letter or with invisible characters, and an unsound e-mail, are 422 naming each field', async () => {
      const refused = await wire(main, 'POST', '/v3/beneficiaries', {
        token,
        body: { first_name: '\u200b', last_name: 'Ro\u202essi', email: 'a@b.co<script>' },
      })
      assert.equal(refused.status, 422)
      assert.deepEqual(
        (refused.json?.['details'] as { field: string }[]).map((d) => d.field).sort(),
        ['email', 'first_name', 'last_name'],
      )
    })

    it('D8, D10: invisible and formatting characters are 422 in every free-text field, each named, and nothing changes', async () => {
      const body = {
        ...MARIO,
        fiscal_code: undefined,
        address: { ...MARIO.address, street: 'Via\u202eRoma 1', city: 'Pi\u200bsa' },
        metadata: { notes: 'first\ufeffcontact', ['tag\u{e0041}']: 'x' },
      }
      const refused = await wire(main, 'POST', '/v3/beneficiaries', { token, body })
      assert.equal(refused.status, 422)
      assert.deepEqual(
        (refused.json?.['details'] as { field: string }[]).map((d) => d.field).sort(),
        ['address.city', 'address.street', 'metadata', 'metadata.notes'],
      )
      const created = await wire(main, 'POST', '/v3/beneficiaries', {
        token,
        body: { first_name: 'Reason', last_name: 'Check', email: 'reason@example.org' },
      })
      const path = `/v3/beneficiaries/${String(created.json?.['id'])}`
      const status = await wire(main, 'POST', `${path}/status`, {
        token,
        body: { status: 'active', reason: 'moved\uffff' },
      })
      assert.equal(status.status, 422)
      assert.deepEqual(status.json?.['details'], [
        { field: 'reason', message: 'must not contain invisible or formatting characters' },
      ])
      assert.equal((await wire(main, 'GET', path, { token })).json?.['status'], 'pending')
    })

    it('D12: a body with a key given twice is 400 bad_request naming the key, and nothing is created', async () => {
      const before = await wire(main, 'GET', '/v3/beneficiaries?per_page=1', { token })
      const refused = await wire(main, 'POST', '/v3/beneficiaries', {
        token,
        raw: '{"first_name":"A","last_name":"B","email":"twice@example.org","first_name":"C"}',
      })
      assert.equal(refused.status, 400)
      assert.equal(refused.json?.['error'], 'bad_request')
      assert.match(String(refused.json?.['message']), /"first_name"/)
      const nested = await wire(main, 'POST', '/v3/beneficiaries', {
        token,
        raw: '{"first_name":"A","last_name":"B","email":"t@example.org","metadata":{"k":1,"k":2}}',
      })
      assert.equal(nested.status, 400)
      assert.match(String(nested.json?.['message']), /"metadata\.k"/)
      const after = await wire(main, 'GET', '/v3/beneficiaries?per_page=1', { token })
      assert.equal(
        (after.json?.['meta'] as { total_count: number }).total_count,
        (before.json?.['meta'] as { total_count: number }).total_count,
      )
    })

    it('names in any script reach the client byte for byte, in the detail and in the list', async () => {
      const body = { first_name: 'Łucja Zoë', last_name: '李 Ødegård', email: 'lz@example.org' }
      const created = await wire(main, 'POST', '/v3/beneficiaries', { token, body })
      assert.equal(created.status, 201)
      const path = `/v3/beneficiaries/${String(created.json?.['id'])}`
      const response = await fetch(main.server.url + path, {
        headers: { authorization: `Bearer ${token}` },
      })
      const bytes = Buffer.from(await response.arrayBuffer())
      assert.equal(response.headers.get('content-length'), String(bytes.byteLength))
      const detail = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>
      assert.deepEqual(
        [detail['first_name'], detail['last_name']],
        [body.first_name, body.last_name],
      )
      const listed = await wire(main, 'GET', '/v3/beneficiaries?search=zoe', { token })
      const items = listed.json?.['data'] as { first_name: string; last_name: string }[]
      assert.deepEqual(
        items.map((item) => [item.first_name, item.last_name]),
        [[body.first_name, body.last_name]],
      )
    })

    it('D12: 404 for unknown paths and 405 with Allow for wrong methods', async () => {
      const unknown = await wire(main, 'GET', '/v3/nothing-here')
      assert.equal(unknown.status, 404)
      const wrong = await wire(main, 'PATCH', '/v3/beneficiaries/1', { token, body: {} })
      assert.equal(wrong.status, 405)
      assert.equal(wrong.headers['allow'], 'GET, HEAD, PUT, DELETE')
    })

    it('D12: every method on a known path is 405 with Allow in the standard body; over uws, the methods its build routes', async () => {
      for (const method of [...UWS_ROUTED_METHODS, 'PROPFIND', 'FOO', 'get', 'M-SEARCH', 'X']) {
        if (['GET', 'HEAD', 'PUT', 'DELETE'].includes(method)) continue
        const text = `${method} /v3/beneficiaries/1 HTTP/1.1\r\nHost: localhost\r\n\r\n`
        const answer = await rawExchange(main, text, { waitForClose: false })
        if (transport === 'uws' && !UWS_ROUTED_METHODS.includes(method)) {
          // uWebSockets.js 20.30 routes nine methods and closes the connection on any other.
          assert.equal(answer, '', method)
          continue
        }
        assertRefusal(answer, 405, 'method_not_allowed', method)
        assert.match(answer, /\r\nallow: GET, HEAD, PUT, DELETE\r\n/i, method)
      }
      const elsewhere = await rawExchange(main, 'FOO /v3/nothing HTTP/1.1\r\nHost: x\r\n\r\n', {
        waitForClose: true,
      })
      if (transport === 'node') assertRefusal(elsewhere, 404, 'not_found')
      assert.equal((await wire(main, 'GET', '/healthz')).status, 200)
    })

    it('D22, D23: Idempotent-Replayed, ETag and a 412 for a stale If-Match', async () => {
      const headers = { 'idempotency-key': `key-${transport}` }
      const body = { first_name: 'Ada', last_name: 'Verdi', email: 'ada.verdi@example.org' }
      const first = await wire(main, 'POST', '/v3/beneficiaries', { token, body, headers })
      const again = await wire(main, 'POST', '/v3/beneficiaries', { token, body, headers })
      assert.equal(again.status, 201)
      assert.equal(again.headers['idempotent-replayed'], 'true')
      assert.equal(again.json?.['id'], first.json?.['id'])
      assert.match(first.headers['etag'] ?? '', /^"/)
      assert.equal(
        again.headers['etag'],
        first.headers['etag'],
        'a replay has the ETag of the original',
      )
      const path = `/v3/beneficiaries/${String(first.json?.['id'])}`
      const etag = (await wire(main, 'GET', path, { token })).headers['etag']!
      assert.equal(
        (
          await wire(main, 'PUT', path, {
            token,
            body: { last_name: 'Bianchi' },
            headers: { 'if-match': etag },
          })
        ).status,
        200,
      )
      const stale = await wire(main, 'DELETE', path, { token, headers: { 'if-match': etag } })
      assert.equal(stale.status, 412)
      assert.equal(stale.json?.['error'], 'precondition_failed')
    })

    it('D10, D12: wrong types are 422, bad JSON 400, a non-JSON type 415, invalid UTF-8 400', async () => {
      const typed = await wire(main, 'POST', '/v3/beneficiaries', {
        token,
        body: { first_name: 5, last_name: ['x'], email: true },
      })
      assert.equal(typed.status, 422)
      assert.deepEqual(
        (typed.json?.['details'] as { field: string }[]).map((d) => d.field).sort(),
        ['email', 'first_name', 'last_name'],
      )
      assert.equal(
        (await wire(main, 'POST', '/v3/beneficiaries', { token, raw: '{"first_name":' })).status,
        400,
      )
      assert.equal(
        (
          await wire(main, 'POST', '/v3/beneficiaries', {
            token,
            raw: 'x',
            headers: { 'content-type': 'text/plain' },
          })
        ).status,
        415,
      )
      const invalid = Uint8Array.from([
        0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d,
      ])
      assert.equal(
        (await wire(main, 'POST', '/v3/beneficiaries', { token, raw: invalid })).status,
        400,
      )
      assert.equal((await wire(main, 'GET', '/healthz')).status, 200)
    })

    it('D12: a body over 1 MiB is 413 payload_too_large; exactly 1 MiB is read', async () => {
      const padding = (size: number): string => {
        const head =
          '{"first_name":"Ada","last_name":"Verdi","email":"a@example.org","metadata":{"notes":"'
        return head + 'x'.repeat(size - head.length - 3) + '"}}'
      }
      const atCap = await wire(main, 'POST', '/v3/beneficiaries', { token, raw: padding(MIB) })
      assert.equal(atCap.status, 422, 'a 1 MiB body reaches validation')
      const over = await rawExchange(
        main,
        postHead('/v3/beneficiaries', token, MIB + 1) + 'x'.repeat(64 * 1024),
        { waitForClose: false },
      )
      assert.match(over, /^HTTP\/1\.1 413 /)
      assert.match(over, /"error":"payload_too_large"/)
      assert.equal((await wire(main, 'GET', '/healthz')).status, 200)
    })

    it('D12: a chunked body that grows past 1 MiB is 413 without being kept', async () => {
      const head =
        `POST /v3/beneficiaries HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n` +
        'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n'
      const chunk = 'y'.repeat(256 * 1024)
      const chunks = Array.from(
        { length: 5 },
        () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`,
      ).join('')
      const answer = await rawExchange(main, head + chunks, { waitForClose: false })
      assert.match(answer, /^HTTP\/1\.1 413 /)
      assert.equal((await wire(main, 'GET', '/healthz')).status, 200)
    })

    it('a stalled or dripping body is answered 408 request_timeout in the standard body, and the connection closed', async () => {
      const started = performance.now()
      const stalled = await rawExchange(
        main,
        postHead('/v3/beneficiaries', token, 100) + '{"first_',
        { waitForClose: true },
      )
      assertRefusal(stalled, 408, 'request_timeout')
      assert.ok(performance.now() - started < REQUEST_TIMEOUT_MS + 1_500, 'answered in time')
      const drip = ['{', '"', 'a', '"', ':', '1']
      const dripping = await rawExchange(main, postHead('/v3/beneficiaries', token, 100), {
        waitForClose: true,
        drip: drip.map((text) => ({ afterMs: 200, text })),
      })
      assertRefusal(dripping, 408, 'request_timeout')
      assert.equal((await wire(main, 'GET', '/healthz')).status, 200)
    })

    it(
      'by default a stalled body is answered 408 within 5 s, before uWebSockets.js would close it silently (8–12 s)',
      { timeout: 15_000 },
      async () => {
        const world = await createWorld()
        const server = await startServer({ service: world.service, transport, port: 0 })
        try {
          const started = performance.now()
          const answer = await rawExchange(
            { server },
            postHead('/v3/beneficiaries', 'x', 10) + '{',
            {
              waitForClose: true,
            },
          )
          assertRefusal(answer, 408, 'request_timeout')
          const elapsed = performance.now() - started
          assert.ok(elapsed > 4_500 && elapsed < 7_000, `answered after ${Math.round(elapsed)} ms`)
        } finally {
          await server.close(1_000)
        }
      },
    )

    it('headers that do not arrive in time: node:http answers 408 in the standard body (uWebSockets.js closes without an answer, 8–12 s)', async () => {
      if (transport === 'uws') return
      const answer = await rawExchange(main, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n', {
        waitForClose: true,
      })
      assertRefusal(answer, 408, 'request_timeout')
    })

    it('up to 48 header fields and 3.5 KiB of head are served; more than 3.5 KiB is 431 in the standard body', async () => {
      const headers: Record<string, string> = {}
      // With Host, Authorization, Content-Type-less GET: fetch adds a few of its own.
      for (let i = 0; i < 38; i++) headers[`x-filler-${i}`] = 'f'.repeat(40)
      assert.equal((await wire(main, 'GET', '/v3/beneficiaries', { token, headers })).status, 200)
      const fields = Array.from({ length: 47 }, (_, i) => `X-F${i}: v\r\n`).join('')
      const most = await rawExchange(
        main,
        `GET /healthz HTTP/1.1\r\nHost: localhost\r\n${fields}Connection: close\r\n\r\n`.replace(
          'X-F46: v\r\n',
          '',
        ),
        { waitForClose: true },
      )
      assert.match(most, /^HTTP\/1\.1 200 /, '48 fields')
      for (const size of [3_600, 8 * 1024, 64 * 1024]) {
        const big = `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'h'.repeat(size)}\r\n\r\n`
        assertRefusal(
          await rawExchange(main, big, { waitForClose: true }),
          431,
          'request_header_fields_too_large',
        )
      }
      assert.equal((await wire(main, 'GET', '/healthz')).status, 200)
    })

    it('a 100 KiB Authorization on a kept-alive connection: node:http answers 431; uWebSockets.js resets the connection (a limit of the build)', async () => {
      const answers = await rawExchange(main, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n', {
        waitForClose: true,
        drip: [
          {
            afterMs: 50,
            text: `GET /v3/beneficiaries HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${'a'.repeat(100 * 1024)}\r\n\r\n`,
          },
        ],
      })
      assert.match(answers, /^HTTP\/1\.1 200 /)
      const second = answers.slice(answers.indexOf('HTTP/1.1', 8))
      if (transport === 'node' || second.startsWith('HTTP/1.1')) {
        assertRefusal(second, 431, 'request_header_fields_too_large')
      }
      assert.equal((await wire(main, 'GET', '/healthz')).status, 200)
    })

    it('more than 48 header fields: node:http answers 431; uWebSockets.js hands nothing over (closed after its idle timeout)', async () => {
      const fields = Array.from({ length: 60 }, (_, i) => `X-F${i}: v\r\n`).join('')
      const answer = await rawExchange(
        main,
        `GET /healthz HTTP/1.1\r\nHost: localhost\r\n${fields}\r\n`,
        { waitForClose: true, giveUpAfterMs: 1_000 },
      )
      if (transport === 'node') assertRefusal(answer, 431, 'request_header_fields_too_large')
      else assert.equal(answer, '', 'the uWS build neither answers nor hands the request over')
      assert.equal((await wire(main, 'GET', '/healthz')).status, 200)
    })

    it('framing that could smuggle a request is 400 bad_request, the connection closed and nothing done (RFC 9112, 6.3)', async () => {
      const smuggler = await start()
      const writer = await login(smuggler)
      const count = async (): Promise<number> =>
        (await smuggler.world.service.list({ token: writer }, {})).value.meta.total_count
      const body = JSON.stringify({
        first_name: 'Sam',
        last_name: 'Smuggle',
        email: 'sam@example.org',
      })
      const head =
        `POST /v3/beneficiaries HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${writer}\r\n` +
        'Content-Type: application/json\r\n'
      const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`
      const cases: [string, string, 'always' | 'or-closed'][] = [
        [
          'two Content-Length',
          `${head}Content-Length: ${body.length}\r\nContent-Length: ${body.length + 5}\r\n\r\n${body}`,
          'always',
        ],
        [
          'two equal Content-Length',
          `${head}Content-Length: ${body.length}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
          'always',
        ],
        [
          'chunked, identity',
          `${head}Transfer-Encoding: chunked, identity\r\n\r\n${chunked}`,
          'always',
        ],
        ['gzip', `${head}Transfer-Encoding: gzip\r\n\r\n${chunked}`, 'always'],
        [
          'two Transfer-Encoding',
          `${head}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n${chunked}`,
          'always',
        ],
        // The uWS build closes these itself, before the transport sees them.
        [
          'Transfer-Encoding and Content-Length',
          `${head}Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n${chunked}`,
          'or-closed',
        ],
        ['a signed length', `${head}Content-Length: +${body.length}\r\n\r\n${body}`, 'or-closed'],
      ]
      for (const [label, text, expected] of cases) {
        const answer = await rawExchange(smuggler, text, { waitForClose: true })
        if (expected === 'always' || transport === 'node' || answer !== '') {
          assertRefusal(answer, 400, 'bad_request', label)
          assert.match(answer, /\r\nconnection: close\r\n/i, label)
        }
        assert.equal(await count(), 0, `${label}: nothing created`)
      }
      assert.equal((await wire(smuggler, 'GET', '/healthz')).status, 200)
    })

    it('D28: serves several requests on one keep-alive connection, HEAD without a body', async () => {
      const answers = await keepAliveExchange(main, [
        'GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: first\r\n\r\n',
        'HEAD /healthz HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: second\r\n\r\n',
        `GET /v3/beneficiaries HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\nX-Request-Id: third\r\n\r\n`,
      ])
      assert.deepEqual(
        answers.map((answer) => answer.slice(9, 12)),
        ['200', '200', '200'],
      )
      assert.deepEqual(
        answers.map((answer) => /x-request-id: ([a-z]+)/i.exec(answer)?.[1]),
        ['first', 'second', 'third'],
      )
      assert.ok(answers[1]!.endsWith('\r\n\r\n'), 'HEAD is answered without a body')
    })

    it('serves pipelined reads in order, or (uws, in one read) closes without an answer', async () => {
      const one = 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: first\r\n\r\n'
      const two =
        'GET /readyz HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: second\r\nConnection: close\r\n\r\n'
      const answer = await rawExchange(main, one + two, { waitForClose: true })
      const ids = [...answer.matchAll(/x-request-id: ([a-z]+)/gi)].map((m) => m[1])
      // This uWS build closes a connection whose request arrives before the previous answer.
      assert.deepEqual(ids, transport === 'uws' && ids.length === 0 ? [] : ['first', 'second'])
      if (transport === 'node') assert.equal(ids.length, 2)
    })

    it('a create pipelined with a GET in one read is answered, or not carried out at all', async () => {
      // Creates begun and not yet finished: the test waits for none, not for a fixed time.
      let creating = 0
      let settled: () => void = () => {}
      const pipelined = await start({
        wrap: (service) =>
          delegateTo(service, {
            create: async (ctx, body) => {
              creating++
              try {
                return await service.create(ctx, body)
              } finally {
                if (--creating === 0) settled()
              }
            },
          }),
      })
      const noCreateInFlight = () =>
        creating === 0 ? Promise.resolve() : new Promise<void>((resolve) => (settled = resolve))
      const writer = await login(pipelined)
      const count = async (): Promise<number> =>
        (await pipelined.world.service.list({ token: writer }, {})).value.meta.total_count
      const body = JSON.stringify({
        first_name: 'Pia',
        last_name: 'Pipe',
        email: 'pia@example.org',
      })
      const create =
        `POST /v3/beneficiaries HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${writer}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nX-Request-Id: create\r\n\r\n${body}`
      const read = `GET /v3/beneficiaries HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${writer}\r\nX-Request-Id: read\r\nConnection: close\r\n\r\n`
      for (let round = 1; round <= 5; round++) {
        const before = await count()
        const answer = await rawExchange(pipelined, create + read, { waitForClose: true })
        const created = /^HTTP\/1\.1 201 /.test(answer)
        await noCreateInFlight()
        assert.equal(
          await count(),
          before + (created ? 1 : 0),
          `round ${round}: ${answer.slice(0, 60)}`,
        )
        if (transport === 'node') {
          assert.ok(created, 'node:http answers pipelined requests')
          assert.deepEqual(
            [...answer.matchAll(/x-request-id: ([a-z]+)/gi)].map((m) => m[1]),
            ['create', 'read'],
          )
        }
      }
    })

    it('a request pipelined behind a write in a later read waits for its answer and is answered too', async () => {
      let release: () => void = () => {}
      const gate = new Promise<void>((resolve) => (release = resolve))
      let entered: () => void = () => {}
      const inside = new Promise<void>((resolve) => (entered = resolve))
      const slow = await start({
        wrap: (service) =>
          delegateTo(service, {
            create: async (ctx, body) => {
              entered()
              await gate
              return service.create(ctx, body)
            },
          }),
      })
      const writer = await login(slow)
      const body = JSON.stringify({
        first_name: 'Lea',
        last_name: 'Later',
        email: 'lea@example.org',
      })
      const socket = connect(slow.server.port, '127.0.0.1')
      let received = ''
      socket.setEncoding('latin1')
      socket.on('data', (chunk: string) => (received += chunk))
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
      socket.on('error', () => {})
      await new Promise<void>((resolve) => socket.on('connect', () => resolve()))
      socket.write(
        `POST /v3/beneficiaries HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${writer}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nX-Request-Id: write\r\n\r\n${body}`,
      )
      await inside
      // Released once the read has left this socket for the server's, on loopback at once.
      await new Promise<void>((resolve) =>
        socket.write(
          `GET /v3/beneficiaries HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${writer}\r\nX-Request-Id: after\r\nConnection: close\r\n\r\n`,
          () => resolve(),
        ),
      )
      await new Promise((resolve) => setImmediate(resolve))
      release()
      await closed
      assert.deepEqual(
        [...received.matchAll(/HTTP\/1\.1 (\d+) [^]*?x-request-id: ([a-z]+)/gi)].map((m) => [
          m[1],
          m[2],
        ]),
        [
          ['201', 'write'],
          ['200', 'after'],
        ],
      )
    })

    it('D24: headers on the wire: X-Request-Id, no-store, nosniff, UTF-8 JSON', async () => {
      const answer = await wire(main, 'GET', '/v3/beneficiaries', {
        token,
        headers: { 'x-request-id': 'wire-1' },
      })
      assert.equal(answer.headers['x-request-id'], 'wire-1')
      assert.equal(answer.headers['cache-control'], 'no-store')
      assert.equal(answer.headers['x-content-type-options'], 'nosniff')
      assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8')
      const fresh = await wire(main, 'GET', '/nowhere', { headers: { 'x-request-id': 'bad id!' } })
      assert.match(fresh.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/)
      assert.equal(fresh.json?.['request_id'], fresh.headers['x-request-id'])
    })

    it('D20: 429 with Retry-After and the RateLimit fields once a bucket is empty', async () => {
      const limited = await start({ limits: { auth: 100, write: 1, standard: 100 } })
      const writer = await login(limited)
      const body = { first_name: 'Ada', last_name: 'Verdi', email: 'ada@example.org' }
      assert.equal(
        (await wire(limited, 'POST', '/v3/beneficiaries', { token: writer, body })).status,
        201,
      )
      const refused = await wire(limited, 'POST', '/v3/beneficiaries', { token: writer, body })
      assert.equal(refused.status, 429)
      assert.equal(refused.headers['retry-after'], String(refused.json?.['retry_after']))
      assert.equal(refused.headers['ratelimit-policy'], '"write";q=1;w=60')
      assert.match(refused.headers['ratelimit'] ?? '', /^"write";r=0;t=[0-9]+$/)
      assert.equal(refused.headers['x-ratelimit-limit'], '1')
    })

    it('D21: without trusted proxies a spoofed X-Forwarded-For does not change the auth-limit key', async () => {
      const limited = await start({ limits: { auth: 2, write: 10, standard: 100 } })
      const body = { client_id: limited.world.writer.client_id, client_secret: 'wrong' }
      const statuses: number[] = []
      for (const spoof of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
        statuses.push(
          (
            await wire(limited, 'POST', '/v3/auth/login', {
              body,
              headers: { 'x-forwarded-for': spoof },
            })
          ).status,
        )
      }
      assert.deepEqual(statuses, [401, 401, 429])
    })

    it('D21: behind a trusted proxy the client is the first untrusted hop from the right, whatever the left-most entry says', async () => {
      const limited = await start({
        limits: { auth: 1, write: 10, standard: 100 },
        trustProxy: ['127.0.0.1'],
      })
      const body = { client_id: limited.world.writer.client_id, client_secret: 'wrong' }
      const from = (xff: string): WireCall => ({ body, headers: { 'x-forwarded-for': xff } })
      assert.equal(
        (await wire(limited, 'POST', '/v3/auth/login', from('1.1.1.1, 203.0.113.9'))).status,
        401,
      )
      assert.equal(
        (await wire(limited, 'POST', '/v3/auth/login', from('2.2.2.2, 203.0.113.9'))).status,
        429,
      )
      assert.equal(
        (await wire(limited, 'POST', '/v3/auth/login', from('203.0.113.10'))).status,
        401,
      )
    })

    it('a service that throws a plain Error gives a 500 with the generic body', async () => {
      const failing = await start({
        wrap: (service) =>
          delegateTo(service, {
            get: () => Promise.reject(new Error('SQLITE_CORRUPT: row 7 Mario')),
          }),
      })
      const writer = await login(failing)
      const answer = await wire(failing, 'GET', '/v3/beneficiaries/7', { token: writer })
      assert.equal(answer.status, 500)
      assert.equal(answer.json?.['error'], 'internal_error')
      assert.ok(!answer.body?.includes('SQLITE'))
      assert.ok(!failing.logs.join('').includes('SQLITE_CORRUPT'))
    })

    it('close() lets a request in flight finish, then refuses connections', async () => {
      let release: () => void = () => {}
      const gate = new Promise<void>((resolve) => (release = resolve))
      let entered: () => void = () => {}
      const inside = new Promise<void>((resolve) => (entered = resolve))
      const slow = await start({
        wrap: (service) =>
          delegateTo(service, {
            ready: async () => {
              entered()
              await gate
              await service.ready()
            },
          }),
      })
      const pending = fetch(`${slow.server.url}/readyz`)
      await inside
      const closing = slow.server.close(5_000)
      release()
      const response = await pending
      assert.equal(response.status, 200)
      await response.text()
      await closing
      await assert.rejects(fetch(`${slow.server.url}/healthz`))
    })

    it(
      'close() ends a request still running once its grace is over',
      { timeout: 10_000 },
      async () => {
        let entered: () => void = () => {}
        const inside = new Promise<void>((resolve) => (entered = resolve))
        const stuck = await start({
          wrap: (service) =>
            delegateTo(service, {
              ready: () => {
                entered()
                return new Promise<never>(() => {})
              },
            }),
        })
        const pending = fetch(`${stuck.server.url}/readyz`)
        await inside
        await stuck.server.close(50)
        await assert.rejects(pending, 'the connection of the stuck request was closed')
      },
    )
  })

  describe(`shutting the ${transport} transport down`, { skip: skipOn(transport) }, () => {
    it('close() does not wait for a client that left in the middle of its body', async () => {
      const world = await createWorld()
      const server = await startServer({ service: world.service, transport, port: 0 })
      const socket = connect(server.port, '127.0.0.1')
      await new Promise<void>((resolve) => socket.on('connect', resolve))
      socket.write(postHead('/v3/beneficiaries', 'x', 100) + '{"first')
      // An answered request on another connection shows the server has seen the first one.
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200)
      socket.destroy()
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200)
      const started = performance.now()
      await server.close(5_000)
      assert.ok(performance.now() - started < 2_500, 'close() waited for a departed client')
    })
  })

  describe(`the ${transport} transport over HTTPS (D26)`, { skip: skipOn(transport) }, () => {
    let directory: string
    let server: RunningServer

    before(async () => {
      directory = mkdtempSync(join(tmpdir(), 'beneficiaries-tls-'))
      const cert = join(directory, 'cert.pem')
      const key = join(directory, 'key.pem')
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-subj',
          '/CN=localhost',
          '-days',
          '1',
          '-keyout',
          key,
          '-out',
          cert,
        ],
        { stdio: 'ignore' },
      )
      const world = await createWorld()
      server = await startServer({
        service: world.service,
        transport,
        host: '127.0.0.1',
        port: 0,
        tls: { cert, key },
      })
    })

    after(async () => {
      await server.close(1_000)
      rmSync(directory, { recursive: true, force: true })
    })

    it('D26: serves HTTPS with the given certificate and key', async () => {
      assert.match(server.url, /^https:\/\//)
      const ca = readFileSync(join(directory, 'cert.pem'))
      const { status, body } = await new Promise<{ status: number; body: string }>(
        (resolve, reject) => {
          const req = httpsRequest(
            `${server.url}/healthz`,
            { ca, servername: 'localhost', checkServerIdentity: () => undefined },
            (res) => {
              let text = ''
              res.setEncoding('utf8')
              res.on('data', (chunk: string) => (text += chunk))
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
            },
          )
          req.on('error', reject)
          req.end()
        },
      )
      assert.equal(status, 200)
      assert.deepEqual(JSON.parse(body), { status: 'ok' })
    })

    it('D26: refuses plain HTTP on the HTTPS port', async () => {
      const answer = await rawExchange(
        { server },
        'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n',
        { waitForClose: true },
      )
      assert.doesNotMatch(answer, /^HTTP\/1\.1 200/)
    })
  })
}

function postHead(path: string, token: string, length: number): string {
  return (
    `POST ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`
  )
}

/**
 * Asserts that `answer` (raw text from the socket) starts with a `status` response in the
 * standard error body (specification 7.1, D24) whose `error` is `error`.
 */
function assertRefusal(answer: string, status: number, error: string, label = ''): void {
  assert.match(answer, new RegExp(`^HTTP/1\\.1 ${status} `), `${label} ${answer.slice(0, 80)}`)
  const end = answer.indexOf('\r\n\r\n')
  const head = `${answer.slice(0, end)}\r\n`
  assert.match(head, /\r\ncontent-type: application\/json; charset=utf-8\r\n/i, label)
  const id = /\r\nx-request-id: ([^\r]+)\r\n/i.exec(head)?.[1]
  const length = Number(/\r\ncontent-length: ([0-9]+)\r\n/i.exec(head)?.[1])
  const body = JSON.parse(answer.slice(end + 4, end + 4 + length)) as Record<string, unknown>
  assert.deepEqual(Object.keys(body).sort(), ['code', 'error', 'message', 'request_id'], label)
  assert.equal(body['error'], error, label)
  assert.equal(body['code'], status, label)
  assert.equal(body['request_id'], id, label)
}

/**
 * Writes `text` on a fresh socket and collects what comes back: until the server closes the
 * connection (`waitForClose`), or until a complete response head and body have arrived. With
 * `giveUpAfterMs`, whatever arrived by then is the answer; `drip` writes more, each piece after
 * a pause.
 */
function rawExchange(
  running: Pick<Running, 'server'>,
  text: string,
  options: {
    waitForClose: boolean
    giveUpAfterMs?: number
    drip?: readonly { afterMs: number; text: string }[]
  },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(running.server.port, '127.0.0.1')
    let received = ''
    let settled = false
    const finish = (): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve(received)
    }
    const timer = setTimeout(() => {
      if (options.giveUpAfterMs !== undefined) finish()
      else reject(new Error(`no answer in time: ${JSON.stringify(received.slice(0, 80))}`))
    }, options.giveUpAfterMs ?? 10_000)
    socket.setEncoding('latin1')
    socket.on('connect', () => {
      socket.write(text)
      void (async () => {
        for (const piece of options.drip ?? []) {
          await new Promise((resolve) => setTimeout(resolve, piece.afterMs))
          if (settled || socket.destroyed) return
          socket.write(piece.text)
        }
      })()
    })
    socket.on('data', (chunk: string) => {
      received += chunk
      if (!options.waitForClose && isComplete(received)) finish()
    })
    socket.on('close', finish)
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // A server may reset a connection it refused; what it answered first still counts.
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') finish()
      else reject(error)
    })
  })
}

/** Sends each request on one connection after the previous answer has fully arrived. */
function keepAliveExchange(
  running: Pick<Running, 'server'>,
  requests: readonly string[],
): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(running.server.port, '127.0.0.1')
    const answers: string[] = []
    let received = ''
    socket.setEncoding('latin1')
    socket.setTimeout(10_000, () => reject(new Error('no answer in time')))
    socket.on('connect', () => socket.write(requests[0]!))
    socket.on('data', (chunk: string) => {
      received += chunk
      const head = requests[answers.length]!.startsWith('HEAD')
      if (!(head ? received.includes('\r\n\r\n') : isComplete(received))) return
      answers.push(received)
      received = ''
      if (answers.length === requests.length) {
        socket.destroy()
        resolve(answers)
      } else {
        socket.write(requests[answers.length]!)
      }
    })
    socket.on('error', reject)
    socket.on('close', () => reject(new Error(`closed after ${answers.length} answers`)))
  })
}

function isComplete(received: string): boolean {
  const end = received.indexOf('\r\n\r\n')
  if (end === -1) return false
  const length = /content-length: ([0-9]+)/i.exec(received.slice(0, end))
  return length !== null && received.length >= end + 4 + Number(length[1])
}

function collectValues(value: unknown, into: Set<string>): void {
  if (typeof value === 'string') {
    // Short or purely numeric values could match a pid or a timestamp by chance.
    if (value.length >= 4 && !/^[0-9 +]+$/.test(value)) into.add(value)
  } else if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) collectValues(item, into)
  }
}
