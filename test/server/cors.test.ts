import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { corsOrigin } from '../../server/cors.js'
import { readServeConfig } from '../../server/cli/serve-config.js'
import { Settings } from '../../server/cli/settings.js'
import { UsageError } from '../../server/cli/cli-error.js'
import { createHandler } from '../../server/handler.js'
import { HEADERS } from '../../server/openapi-components.js'
import { ROUTES } from '../../server/routes.js'
import { RouteTable } from '../../server/route-table.js'
import { cli } from '../support/cli-in-process.js'
import { createWorld, login, MARIO, send } from './server-fixtures.js'

const APP = 'https://app.example.org'
const OTHER = 'https://evil.example.net'

async function corsHandler(origins: readonly string[] = [APP]) {
  const world = await createWorld()
  const handler = createHandler(world.service, { corsOrigins: origins })
  return { world, handler }
}

function preflight(origin: string, method: string, headers = 'authorization') {
  return {
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': headers,
    },
  }
}

/** The header's comma-separated names, lower-cased and sorted. */
function names(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '')
    .sort()
}

describe('CORS (--cors-origin)', () => {
  it('is off by default: a preflight is 405 with Allow, and no response names an origin or varies by it', async () => {
    const world = await createWorld()
    const handler = createHandler(world.service)
    const answer = await send(handler, 'OPTIONS', '/v3/beneficiaries', preflight(APP, 'GET'))
    assert.equal(answer.status, 405)
    assert.equal(answer.headers['allow'], 'GET, HEAD, POST')
    const get = await send(handler, 'GET', '/healthz', { headers: { origin: APP } })
    for (const response of [answer, get]) {
      assert.ok(!Object.keys(response.headers).some((name) => name.startsWith('access-control-')))
      assert.equal(response.headers['vary'], undefined)
    }
  })

  it('answers a preflight from an allowed origin with 204, the methods of the path and the headers of the asked route', async () => {
    const { handler } = await corsHandler()
    const table = new RouteTable('/v3', ROUTES)
    const cases: [string, string, string[]][] = [
      [
        '/v3/beneficiaries',
        'POST',
        ['authorization', 'content-type', 'idempotency-key', 'x-request-id'],
      ],
      ['/v3/beneficiaries', 'GET', ['authorization', 'x-purpose', 'x-request-id']],
      [
        '/v3/beneficiaries/7',
        'GET',
        ['authorization', 'if-none-match', 'x-purpose', 'x-request-id'],
      ],
      [
        '/v3/beneficiaries/7',
        'PUT',
        ['authorization', 'content-type', 'if-match', 'x-purpose', 'x-request-id'],
      ],
      ['/v3/beneficiaries/7', 'DELETE', ['authorization', 'if-match', 'x-request-id']],
      ['/v3/auth/login', 'POST', ['content-type', 'x-request-id']],
      ['/healthz', 'GET', ['x-request-id']],
    ]
    for (const [path, method, headers] of cases) {
      const answer = await send(handler, 'OPTIONS', path, preflight(APP, method))
      assert.equal(answer.status, 204, `${method} ${path}`)
      assert.equal(answer.body, undefined)
      assert.equal(answer.headers['access-control-allow-origin'], APP)
      // The methods are the route table's for the path, HEAD with GET.
      assert.equal(answer.headers['access-control-allow-methods'], table.match(path)!.entry.allow)
      assert.deepEqual(names(answer.headers['access-control-allow-headers']), headers, path)
      assert.equal(answer.headers['access-control-max-age'], '600')
      assert.deepEqual(names(answer.headers['vary']), [
        'access-control-request-headers',
        'access-control-request-method',
        'origin',
      ])
      assert.ok(answer.headers['x-request-id'] !== undefined)
    }
  })

  it('leaves a preflight from another origin, or for an unknown path, as without CORS: the browser refuses', async () => {
    const { handler } = await corsHandler()
    const other = await send(handler, 'OPTIONS', '/v3/beneficiaries', preflight(OTHER, 'GET'))
    assert.equal(other.status, 405)
    assert.equal(other.headers['access-control-allow-origin'], undefined)
    assert.equal(other.headers['vary'], 'Origin')
    const unknown = await send(handler, 'OPTIONS', '/v3/nothing', preflight(APP, 'GET'))
    assert.equal(unknown.status, 404)
    assert.equal(unknown.headers['access-control-allow-origin'], APP)
    // A method the path does not answer: the list says which it does, so the browser refuses.
    const patch = await send(handler, 'OPTIONS', '/v3/beneficiaries/7', preflight(APP, 'PATCH'))
    assert.equal(patch.status, 204)
    assert.ok(!names(patch.headers['access-control-allow-methods']).includes('patch'))
    assert.equal(patch.headers['access-control-allow-headers'], undefined)
  })

  it('names the allowed origin on every actual answer, errors too, exposes the API headers, and varies by Origin', async () => {
    const { world, handler } = await corsHandler([APP, 'http://127.0.0.1:5173'])
    const { access } = await login(handler, world.writer)
    const created = await send(handler, 'POST', '/v3/beneficiaries', {
      token: access,
      body: MARIO,
      headers: { origin: APP },
    })
    assert.equal(created.status, 201)
    assert.equal(created.headers['access-control-allow-origin'], APP)
    assert.equal(created.headers['vary'], 'Origin')
    const exposed = names(created.headers['access-control-expose-headers'])
    for (const header of ['etag', 'location', 'x-request-id', 'retry-after', 'ratelimit']) {
      assert.ok(exposed.includes(header), header)
    }
    // Every response header the document describes is exposed, but those a browser shows anyway.
    assert.deepEqual(
      exposed,
      Object.keys(HEADERS)
        .map((name) => name.toLowerCase())
        .filter((name) => name !== 'cache-control')
        .sort(),
    )
    const refused = await send(handler, 'GET', '/v3/beneficiaries', {
      headers: { origin: 'http://127.0.0.1:5173' },
    })
    assert.equal(refused.status, 401)
    assert.equal(refused.headers['access-control-allow-origin'], 'http://127.0.0.1:5173')
    const other = await send(handler, 'GET', '/v3/beneficiaries', {
      token: access,
      headers: { origin: OTHER },
    })
    assert.equal(other.status, 200)
    assert.equal(other.headers['access-control-allow-origin'], undefined)
    assert.equal(other.headers['vary'], 'Origin')
    const sameOrigin = await send(handler, 'GET', '/healthz')
    assert.equal(sameOrigin.headers['vary'], 'Origin')
  })

  it('* allows any origin, answered with *', async () => {
    const { handler } = await corsHandler(['*'])
    const answer = await send(handler, 'OPTIONS', '/v3/beneficiaries', preflight(OTHER, 'GET'))
    assert.equal(answer.status, 204)
    assert.equal(answer.headers['access-control-allow-origin'], '*')
  })

  it('takes --cors-origin or CORS_ORIGIN as a list of origins, normalised, and refuses anything else naming the setting', async () => {
    const read = (flags: Record<string, string>, env: Record<string, string> = {}) =>
      readServeConfig(new Settings(flags, env)).corsOrigins
    assert.deepEqual(read({}), [])
    assert.deepEqual(
      read({ 'cors-origin': 'https://App.example.org:443, http://127.0.0.1:5173' }),
      [APP, 'http://127.0.0.1:5173'],
    )
    assert.deepEqual(read({}, { CORS_ORIGIN: '*' }), ['*'])
    for (const bad of [
      'https://app.example.org/path',
      'ftp://files',
      'app.example.org',
      'https://u:p@a.b',
    ]) {
      assert.throws(
        () => read({ 'cors-origin': bad }),
        (error: unknown) => {
          assert.ok(error instanceof UsageError)
          assert.equal(error.setting, '--cors-origin')
          return true
        },
      )
      assert.throws(() => corsOrigin(bad), TypeError)
    }
    const help = await cli(['serve', '--help'])
    assert.match(help.out, /--cors-origin LIST/)
    assert.match(help.out, /CORS_ORIGIN/)
  })
})
