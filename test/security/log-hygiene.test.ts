import assert from 'node:assert/strict'
import type { OutgoingHttpHeaders } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { connect } from 'node:net'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { openSqliteStorage } from '../../adapters/sqlite/index.js'
import { nodeSha256 } from '../../server/node-sha256.js'
import { http, ServeChild, within, type HttpCall, type HttpAnswer } from './security-fixtures.js'
import {
  findLeaks,
  SENTINEL_BASIC_CREDENTIALS,
  SENTINEL_BEARER_TOKEN,
  SENTINEL_BENEFICIARY,
  SENTINEL_CLIENT_SECRET,
  SENTINEL_IDEMPOTENCY_KEY,
  SENTINEL_JWT_SECRET,
  SENTINEL_REASON,
  SENTINEL_REFRESH_TOKEN,
  SENTINEL_UPDATE,
  SENTINEL_WRONG_SECRET,
} from './sentinels.js'
import { skipOn, TRANSPORTS } from '../support/transports.js'

// D25: a real `beneficiaries serve` process, logging as much as it can (LOG_LEVEL=trace), is
// walked through every route with the sentinel secrets and personal values: successes,
// validation failures, bad tokens, a failure of the database (a 500), rate limiting and logout.
// Nothing it writes, on standard output or standard error, may hold any of them, any token it
// issued, or an Authorization header.

const WRITER = { client_id: 'cl_snTnLwriter0001', client_secret: SENTINEL_CLIENT_SECRET }
const READER = {
  client_id: 'cl_snTnLreader0001',
  client_secret: `${SENTINEL_CLIENT_SECRET}-reader`,
}
const WRITE_LIMIT = 30
const AUTH_LIMIT = 30

/** The statuses a walk must have produced, so that the log it checks covers each kind of answer. */
const EXPECTED_STATUSES = [200, 201, 204, 400, 401, 403, 404, 405, 412, 413, 415, 422, 429, 500]

for (const transport of TRANSPORTS) {
  describe(`the log of a real ${transport} server (D25)`, { skip: skipOn(transport) }, () => {
    let directory: string
    let server: ServeChild | undefined
    let origin: string
    /** Every token and secret the run was given, to look for besides the sentinels. */
    const issued: string[] = [READER.client_secret]
    const statuses = new Set<number>()
    let requests = 0

    before(async () => {
      directory = mkdtempSync(join(tmpdir(), `security-logs-${transport}-`))
      const db = join(directory, 'logged.sqlite')
      const storage = await openSqliteStorage({ path: db })
      for (const [client, scopes] of [
        [WRITER, ['read', 'write']],
        [READER, ['read']],
      ] as const) {
        await storage.clients.insert({
          id: client.client_id,
          name: 'Sentinel desk',
          secret_hash: nodeSha256(client.client_secret),
          scopes,
          created_at: Date.now(),
          revoked_at: null,
        })
      }
      // A database failure on demand: a create whose metadata says `explode` aborts with an error
      // message that quotes personal values, as a driver's message may (a 500, logged).
      storage.database.exec(`CREATE TRIGGER snTnL_explode BEFORE INSERT ON beneficiaries
        WHEN json_extract(NEW.metadata, '$.explode') = 1
        BEGIN SELECT RAISE(ABORT, 'cannot store ' || NEW.fiscal_code || ' ' || NEW.email); END`)
      await storage.close()
      server = new ServeChild(db, {
        TRANSPORT: transport,
        LOG_LEVEL: 'trace',
        JWT_SECRET: SENTINEL_JWT_SECRET,
        RATE_LIMIT_AUTH: String(AUTH_LIMIT),
        RATE_LIMIT_WRITE: String(WRITE_LIMIT),
      })
      origin = await server.url()
    })

    after(async () => {
      server?.kill()
      await server?.exited
      rmSync(directory, { recursive: true, force: true })
    })

    async function call(
      method: string,
      path: string,
      request: HttpCall = {},
      expected?: number,
    ): Promise<HttpAnswer> {
      const answer = await http(origin, method, path, request)
      requests++
      statuses.add(answer.status)
      if (expected !== undefined) assert.equal(answer.status, expected, `${method} ${path}`)
      return answer
    }

    async function login(client: typeof WRITER, body: object = {}): Promise<[string, string]> {
      const answer = await call('POST', '/v3/auth/login', { body: { ...client, ...body } }, 200)
      const tokens: [string, string] = [
        String(answer.json?.['access_token']),
        String(answer.json?.['refresh_token']),
      ]
      issued.push(...tokens)
      return tokens
    }

    it('D25: no secret, token, Authorization header or beneficiary value reaches the log, whatever the request', async () => {
      await call('GET', '/healthz', {}, 200)
      await call('GET', '/readyz', {}, 200)
      await call('GET', '/v3/openapi.json', {}, 200)

      // Logins and refreshes, failed and successful.
      const wrong = { ...WRITER, client_secret: SENTINEL_WRONG_SECRET }
      await call('POST', '/v3/auth/login', { body: wrong }, 401)
      await call(
        'POST',
        '/v3/auth/login',
        { body: { ...WRITER, client_id: 'cl_snTnLnobody' } },
        401,
      )
      const brokenJson = `{"client_id":"${WRITER.client_id}","client_secret":"${SENTINEL_CLIENT_SECRET}"`
      await call('POST', '/v3/auth/login', { raw: brokenJson, headers: json() }, 400)
      await call('POST', '/v3/auth/login', { raw: brokenJson, headers: form() }, 415)
      await call('POST', '/v3/auth/login', { body: { ...WRITER, scope: 'read write admin' } }, 403)
      await call('POST', '/v3/auth/login', { body: { client_secret: SENTINEL_CLIENT_SECRET } }, 422)
      const [access, refresh] = await login(WRITER)
      const [readOnly] = await login(READER)
      const [, otherRefresh] = await login(WRITER, { scope: 'read' })
      await call(
        'POST',
        '/v3/auth/refresh',
        { body: { refresh_token: SENTINEL_REFRESH_TOKEN } },
        401,
      )
      await call('POST', '/v3/auth/refresh', { body: { refresh_token: refresh, ...wrong } }, 401)
      const renewed = await call(
        'POST',
        '/v3/auth/refresh',
        { body: { refresh_token: refresh } },
        200,
      )
      issued.push(String(renewed.json?.['access_token']))

      // Tokens that are not accepted, and one in the query string.
      const list = '/v3/beneficiaries'
      await call('GET', list, { token: SENTINEL_BEARER_TOKEN }, 401)
      await call(
        'GET',
        list,
        { headers: { authorization: `Basic ${SENTINEL_BASIC_CREDENTIALS}` } },
        401,
      )
      await call('GET', `${list}?access_token=${access}`, {}, 401)
      await call('GET', list, { headers: { authorization: `Bearer ${access}, ${refresh}` } }, 401)
      await call('POST', list, { token: readOnly, body: SENTINEL_BENEFICIARY }, 403)

      // Beneficiaries: every route, with the sentinel values in bodies, paths and queries.
      // First a create that the database refuses (nothing is stored), then the real one.
      const explode = { ...SENTINEL_BENEFICIARY.metadata, explode: true }
      const failed = await call(
        'POST',
        list,
        { token: access, body: { ...SENTINEL_BENEFICIARY, metadata: explode } },
        500,
      )
      const idempotent = { token: access, headers: { 'idempotency-key': SENTINEL_IDEMPOTENCY_KEY } }
      const created = await call('POST', list, { ...idempotent, body: SENTINEL_BENEFICIARY }, 201)
      await call('POST', list, { ...idempotent, body: SENTINEL_BENEFICIARY }, 201)
      const changed = { ...SENTINEL_BENEFICIARY, phone: SENTINEL_UPDATE.phone }
      await call('POST', list, { ...idempotent, body: changed }, 422)
      await call('POST', list, { token: access, body: SENTINEL_BENEFICIARY }, 422)
      const invalid = {
        ...SENTINEL_BENEFICIARY,
        email: `not an address ${SENTINEL_BENEFICIARY.email}`,
        fiscal_code: `${SENTINEL_BENEFICIARY.fiscal_code.slice(0, 15)}X`,
        [`snTnL_${SENTINEL_BENEFICIARY.last_name}`]: SENTINEL_BENEFICIARY.first_name,
      }
      await call('POST', list, { token: access, body: invalid }, 422)
      await call('POST', list, { token: access, raw: JSON.stringify(SENTINEL_BENEFICIARY) }, 415)
      // A body announced larger than 1 MiB: refused (413) before the rest of it is sent.
      assert.equal(await announceHugeBody(origin, list, access), 413)
      requests++
      statuses.add(413)
      const path = `${list}/${String(created.json?.['id'])}`
      const detail = await call('GET', path, { token: access }, 200)
      await call('GET', `${list}/${SENTINEL_BENEFICIARY.fiscal_code}`, { token: access }, 404)
      await call(
        'GET',
        `/v3/${encodeURIComponent(SENTINEL_BENEFICIARY.email)}`,
        { token: access },
        404,
      )
      await call('PATCH', path, { token: access, body: SENTINEL_UPDATE }, 405)
      const search = new URLSearchParams({
        search: `${SENTINEL_BENEFICIARY.first_name} ${SENTINEL_BENEFICIARY.last_name}`,
        status: 'pending',
        created_from: '2020-01-01',
      })
      const found = await call('GET', `${list}?${search.toString()}`, { token: access }, 200)
      assert.equal((found.json?.['meta'] as { total_count: number }).total_count, 1)
      await call(
        'GET',
        `${list}?per_page=${SENTINEL_BENEFICIARY.address.postal_code}`,
        { token: access },
        422,
      )
      const etag = String(detail.headers['etag'])
      await call(
        'PUT',
        path,
        { token: access, body: SENTINEL_UPDATE, headers: { 'if-match': etag } },
        200,
      )
      await call(
        'PUT',
        path,
        { token: access, body: SENTINEL_UPDATE, headers: { 'if-match': etag } },
        412,
      )
      const active = { status: 'active', reason: SENTINEL_REASON }
      await call('POST', `${path}/status`, { token: access, body: active }, 200)
      await call(
        'POST',
        `${path}/status`,
        { token: access, body: { ...active, status: 'pending' } },
        422,
      )
      await call('GET', `${path}/history`, { token: access }, 200)
      await call('DELETE', path, { token: access }, 204)

      // Logout: another session's refresh token is refused, then the session ends.
      await call(
        'POST',
        '/v3/auth/logout',
        { token: access, body: { refresh_token: otherRefresh } },
        422,
      )
      await call(
        'POST',
        '/v3/auth/logout',
        { token: access, body: { refresh_token: refresh } },
        204,
      )
      await call('GET', list, { token: access }, 401)

      // Rate limits: writes of one client, then logins from this address, until refused.
      const [writer] = await login(WRITER)
      // Bounded well past the limit: the bucket refills a little while this runs.
      for (let i = 0; i < 3 * WRITE_LIMIT && !statuses.has(429); i++) {
        await call('POST', list, { token: writer, body: invalid })
      }
      assert.ok(statuses.has(429), 'the write limit was reached')
      let loginLimited = false
      for (let i = 0; i < 3 * AUTH_LIMIT && !loginLimited; i++) {
        loginLimited = (await call('POST', '/v3/auth/login', { body: wrong })).status === 429
      }
      assert.ok(loginLimited, 'the auth limit was reached')

      const serve = server!
      assert.equal(await serve.stop(), 0)
      const output = `${serve.stdout}\n${serve.stderr}`
      assert.deepEqual(findLeaks(output, issued), [])

      // The log was really written, one line per request, the 500 with its error line.
      const lines = serve.lines
      const logged = lines.filter((line) => typeof line['status'] === 'number')
      assert.equal(logged.length, requests)
      assert.deepEqual(
        EXPECTED_STATUSES.filter((status) => !statuses.has(status)),
        [],
        'every kind of answer was produced',
      )
      const failedId = failed.json?.['request_id']
      const errorLine = lines.find(
        (line) => line['level'] === 50 && line['request_id'] === failedId,
      )
      assert.ok(
        errorLine !== undefined && typeof errorLine['err'] === 'object',
        'the 500 was logged',
      )
    })
  })
}

/**
 * Sends the head of a POST announcing a 2 MiB JSON body and its first kilobyte (sentinel values),
 * then waits for the status line: the server answers without waiting for the rest.
 */
function announceHugeBody(origin: string, path: string, token: string): Promise<number> {
  const { port } = new URL(origin)
  const start = `{"notes":"${SENTINEL_REASON.repeat(25)}`
  const head = [
    `POST ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    `Authorization: Bearer ${token}`,
    'Content-Type: application/json',
    `Content-Length: ${2 << 20}`,
  ].join('\r\n')
  const socket = connect(Number(port), '127.0.0.1')
  const answered = new Promise<number>((resolve, reject) => {
    let text = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      text += chunk
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(text)
      if (status !== null) resolve(Number(status[1]))
    })
    socket.on('error', reject)
    socket.on('close', () => reject(new Error(`closed without an answer: ${text}`)))
  })
  socket.write(`${head}\r\n\r\n${start}`)
  return within(answered, 10_000, 'the 413').finally(() => socket.destroy())
}

function json(): OutgoingHttpHeaders {
  return { 'content-type': 'application/json' }
}

function form(): OutgoingHttpHeaders {
  return { 'content-type': 'application/x-www-form-urlencoded' }
}
