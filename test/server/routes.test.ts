import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildOpenApiDocument } from '../../server/openapi.js'
import { ROUTES, RouteTable } from '../../server/routes.js'

describe('route table', () => {
  it('matches every route of the table and extracts the raw id', () => {
    const table = new RouteTable('/v3')
    assert.equal(table.match('/v3/beneficiaries')?.entry.pattern, '/v3/beneficiaries')
    assert.deepEqual(
      [table.match('/v3/beneficiaries/42')?.entry.pattern, table.match('/v3/beneficiaries/42')?.id],
      ['/v3/beneficiaries/:id', '42'],
    )
    assert.equal(table.match('/v3/beneficiaries/x%2Fy/status')?.id, 'x%2Fy')
    assert.equal(
      table.match('/v3/beneficiaries/7/history')?.entry.pattern,
      '/v3/beneficiaries/:id/history',
    )
    assert.equal(table.match('/healthz')?.entry.allow, 'GET')
    for (const path of [
      '/v3beneficiaries',
      '/v3/beneficiaries/',
      '/v3/beneficiaries//history',
      '/v3/beneficiaries/1/status/',
      '/v3/beneficiaries/1/2',
      '/V3/beneficiaries',
      '/v3/healthz',
    ]) {
      assert.equal(table.match(path), undefined, path)
    }
  })

  it('finds no operation for a method named like an Object property', () => {
    const entry = new RouteTable('/v3').match('/v3/beneficiaries')!.entry
    for (const method of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      assert.equal(entry.operations[method], undefined, method)
    }
  })

  it('works with an empty or deeper base path', () => {
    assert.equal(new RouteTable('').match('/beneficiaries/3')?.id, '3')
    assert.equal(
      new RouteTable('/api/v3').match('/api/v3/auth/login')?.entry.operations['POST'],
      'login',
    )
    assert.equal(new RouteTable('/api/v3').match('/v3/auth/login'), undefined)
  })

  it('every route the server answers is in the OpenAPI document, and every documented operation is a route', () => {
    for (const basePath of ['/v3', '/api/v3']) {
      const document = buildOpenApiDocument({ basePath }) as {
        paths: Record<string, Record<string, unknown>>
      }
      const table = new RouteTable(basePath)
      const answered = table.entries.flatMap((entry) =>
        Object.keys(entry.operations).map((method) => `${method} ${entry.template}`),
      )
      const documented = Object.entries(document.paths).flatMap(([path, item]) =>
        Object.keys(item)
          .filter((key) =>
            ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'].includes(key),
          )
          .map((method) => `${method.toUpperCase()} ${path}`),
      )
      assert.deepEqual(documented.sort(), answered.sort())
      assert.equal(answered.length, ROUTES.length)
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
    assert.deepEqual(dig('paths', '/v3/beneficiaries', 'get', 'security'), [{ bearerAuth: [] }])
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
})
