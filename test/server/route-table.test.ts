import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { defineServerRoute, type Route } from '../../server/route.js'
import { RouteTable } from '../../server/route-table.js'
import { ROUTES } from '../../server/routes.js'

/** A route of any path, for the router alone. */
function route(path: string): Route {
  return defineServerRoute({
    method: 'GET',
    path,
    operation: 'health',
    versioned: true,
    summary: path,
    tag: 'service',
    status: 200,
    response: 'ProbeStatus',
    errors: [],
  })
}

describe('route table', () => {
  it('matches every route of the table and extracts the raw id', () => {
    const table = new RouteTable('/v3', ROUTES)
    assert.equal(table.match('/v3/beneficiaries')?.entry.pattern, '/v3/beneficiaries')
    assert.deepEqual(
      [
        table.match('/v3/beneficiaries/42')?.entry.pattern,
        table.match('/v3/beneficiaries/42')?.params[0],
      ],
      ['/v3/beneficiaries/:id', '42'],
    )
    assert.equal(table.match('/v3/beneficiaries/x%2Fy/status')?.params[0], 'x%2Fy')
    assert.equal(
      table.match('/v3/beneficiaries/7/history')?.entry.pattern,
      '/v3/beneficiaries/:id/history',
    )
    assert.equal(table.match('/healthz')?.entry.allow, 'GET, HEAD')
    assert.equal(table.match('/v3/beneficiaries/1')?.entry.allow, 'GET, HEAD, PUT, DELETE')
    assert.equal(table.match('/v3/auth/login')?.entry.allow, 'POST')
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

  it('D28: answers HEAD with the GET route of every path that has one, and only there', () => {
    const table = new RouteTable('/v3', ROUTES)
    for (const entry of table.entries) {
      assert.equal(entry.routes['HEAD'], entry.routes['GET'], entry.template)
    }
    assert.equal(table.match('/v3/auth/login')!.entry.routes['HEAD'], undefined)
  })

  it('finds no operation for a method named like an Object property', () => {
    const entry = new RouteTable('/v3', ROUTES).match('/v3/beneficiaries')!.entry
    for (const method of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      assert.equal(entry.routes[method], undefined, method)
    }
  })

  it('works with an empty or deeper base path', () => {
    assert.equal(new RouteTable('', ROUTES).match('/beneficiaries/3')?.params[0], '3')
    assert.equal(
      new RouteTable('/api/v3', ROUTES).match('/api/v3/auth/login')?.entry.routes['POST']
        ?.operation,
      'login',
    )
    assert.equal(new RouteTable('/api/v3', ROUTES).match('/v3/auth/login'), undefined)
  })

  it('compiles any template of whole-segment parameters, and tries a longer prefix first', () => {
    const table = new RouteTable('/api', [
      route('/shops/{shop}/items/{item}'),
      route('/shops/{shop}'),
      route('/shops/special/{item}'),
      route('/{anything}/x'),
      route('/shops/{shop}/items/{item}/parts/{part}'),
    ])
    const found = (path: string) => {
      const match = table.match(path)
      return match === undefined ? undefined : [match.entry.pattern, match.params]
    }
    assert.deepEqual(found('/api/shops/7/items/9'), ['/api/shops/:shop/items/:item', ['7', '9']])
    assert.deepEqual(found('/api/shops/7/items/9/parts/a%20b'), [
      '/api/shops/:shop/items/:item/parts/:part',
      ['7', '9', 'a%20b'],
    ])
    assert.deepEqual(found('/api/shops/7'), ['/api/shops/:shop', ['7']])
    assert.deepEqual(found('/api/shops/special/3'), ['/api/shops/special/:item', ['3']])
    assert.deepEqual(found('/api/stores/x'), ['/api/:anything/x', ['stores']])
    assert.deepEqual(found('/api/shops/x'), ['/api/shops/:shop', ['x']])
    for (const path of [
      '/api/shops',
      '/api/shops/',
      '/api/shops/7/items',
      '/api/shops/7/items/',
      '/api/shops/7/items//parts/1',
      '/api/shops/7/items/9/parts/1/',
      '/api/shops/7/other/9',
      '/api//x',
    ]) {
      assert.equal(table.match(path), undefined, path)
    }
  })

  it('refuses a parameter that is not a whole segment, and a malformed base path', () => {
    assert.throws(() => new RouteTable('/v3', [route('/files/{name}.json')]), TypeError)
    for (const basePath of ['v3', '/v3/', '/v 3', '/v3//x']) {
      assert.throws(() => new RouteTable(basePath, ROUTES), TypeError, basePath)
    }
  })
})
