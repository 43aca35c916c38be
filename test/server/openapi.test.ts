import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildOpenApiDocument } from '../../server/openapi.js'
import { RouteTable } from '../../server/route-table.js'
import { ROUTES } from '../../server/routes.js'

type Json = Record<string, unknown>

describe('OpenAPI document', () => {
  it('every route the server answers is in the OpenAPI document, and every documented operation is a route', () => {
    for (const basePath of ['/v3', '/api/v3']) {
      const document = buildOpenApiDocument({ basePath }) as {
        paths: Record<string, Record<string, unknown>>
      }
      const table = new RouteTable(basePath, ROUTES)
      const answered = table.entries.flatMap((entry) =>
        Object.keys(entry.routes).map((method) => `${method} ${entry.template}`),
      )
      const documented = Object.entries(document.paths).flatMap(([path, item]) =>
        Object.keys(item)
          .filter((key) =>
            ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'].includes(key),
          )
          .map((method) => `${method.toUpperCase()} ${path}`),
      )
      assert.deepEqual(documented.sort(), answered.sort())
      // D28: every GET route answers HEAD too.
      const gets = ROUTES.filter((route) => route.method === 'GET').length
      assert.equal(answered.length, ROUTES.length + gets)
    }
  })

  it('documents the error body, headers, security and parameters', () => {
    const document = buildOpenApiDocument()
    const dig = (...keys: string[]): unknown =>
      keys.reduce<unknown>(
        (value, key) => (value as Record<string, unknown> | undefined)?.[key],
        document,
      )
    const names = (value: unknown): string[] => (value as { name: string }[]).map((p) => p.name)
    assert.equal(dig('openapi'), '3.1.0')
    for (const name of [
      'ErrorBody',
      'CreateBeneficiaryBody',
      'BeneficiaryDetail',
      'PagedBeneficiaries',
      'TokenResponse',
    ]) {
      assert.ok(dig('components', 'schemas', name), name)
    }
    for (const name of [
      'X-Request-Id',
      'ETag',
      'Idempotent-Replayed',
      'WWW-Authenticate',
      'Retry-After',
      'RateLimit',
      'RateLimit-Policy',
      'X-RateLimit-Reset',
    ]) {
      assert.ok(dig('components', 'headers', name), name)
    }
    assert.deepEqual(dig('paths', '/v3/beneficiaries', 'get', 'security'), [
      { bearerAuth: ['read'] },
    ])
    const listParameters = names(dig('paths', '/v3/beneficiaries', 'get', 'parameters'))
    for (const name of [
      'page',
      'per_page',
      'search',
      'status',
      'created_from',
      'created_to',
      'sort',
    ]) {
      assert.ok(listParameters.includes(name), name)
    }
    assert.deepEqual(dig('paths', '/v3/auth/login', 'post', 'security'), [])
    assert.ok(
      names(dig('paths', '/v3/beneficiaries', 'post', 'parameters')).includes('Idempotency-Key'),
    )
    assert.ok(
      dig('paths', '/v3/beneficiaries', 'post', 'responses', '429', 'headers', 'Retry-After'),
    )
    assert.ok(dig('paths', '/v3/beneficiaries', 'post', 'responses', '201', 'headers', 'Location'))
    assert.ok(dig('paths', '/v3/beneficiaries/{id}', 'put', 'responses', '412'))
  })

  it('D28: documents HEAD beside every GET, with the same statuses and headers and no body', () => {
    const paths = buildOpenApiDocument().paths as Record<string, Record<string, Json>>
    for (const [path, item] of Object.entries(paths)) {
      const get = item['get']
      if (get === undefined) {
        assert.equal(item['head'], undefined, path)
        continue
      }
      const head = item['head']!
      assert.equal(head['operationId'], `${String(get['operationId'])}Head`, path)
      assert.deepEqual(head['security'], get['security'], path)
      const responses = head['responses'] as Record<string, Json>
      const getResponses = get['responses'] as Record<string, Json>
      assert.deepEqual(Object.keys(responses), Object.keys(getResponses), path)
      for (const [status, response] of Object.entries(responses)) {
        assert.equal(response['content'], undefined, `${path} ${status}`)
        assert.deepEqual(response['headers'], getResponses[status]!['headers'], `${path} ${status}`)
      }
    }
  })

  it('D29: PUT and the status transition require read as well as write; DELETE and create write only', () => {
    const paths = buildOpenApiDocument().paths as Record<string, Record<string, Json>>
    const scopes = (path: string, method: string): unknown => paths[path]![method]!['security']
    assert.deepEqual(scopes('/v3/beneficiaries/{id}', 'put'), [{ bearerAuth: ['write', 'read'] }])
    assert.deepEqual(scopes('/v3/beneficiaries/{id}/status', 'post'), [
      { bearerAuth: ['write', 'read'] },
    ])
    assert.deepEqual(scopes('/v3/beneficiaries/{id}', 'delete'), [{ bearerAuth: ['write'] }])
    assert.deepEqual(scopes('/v3/beneficiaries', 'post'), [{ bearerAuth: ['write'] }])
    const forbidden = (
      paths['/v3/beneficiaries/{id}']!['put']!['responses'] as Record<string, Json>
    )['403']!
    assert.match(String(forbidden['description']), /`write` and `read`.*D29/)
  })
})
