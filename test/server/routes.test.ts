import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { OPERATIONS } from '../../core/operations.js'
import { buildOpenApiDocument } from '../../server/openapi.js'
import { defineRoute } from '../../server/route.js'
import { ROUTES } from '../../server/routes.js'

describe('routes', () => {
  it("reads each service route's policy from the core, and gives every core operation one route", () => {
    const operations: string[] = []
    for (const route of ROUTES) {
      if (route.kind === 'server') {
        assert.equal(route.policy, undefined, route.operation)
        continue
      }
      assert.equal(route.policy, OPERATIONS[route.operation], route.operation)
      operations.push(route.operation)
    }
    assert.deepEqual(operations.sort(), Object.keys(OPERATIONS).sort())
  })

  it('documents a request body exactly when the core says the operation reads one', () => {
    for (const route of ROUTES) {
      const documented = route.kind === 'service' && route.requestBody !== undefined
      assert.equal(documented, route.policy?.body === true, route.operation)
    }
  })

  it("documents the server's own routes without a token, a scope or a limit class", () => {
    const paths = buildOpenApiDocument().paths as Record<string, Record<string, object>>
    for (const path of ['/v3/openapi.json', '/healthz', '/readyz']) {
      const operation = paths[path]!['get'] as Record<string, unknown>
      assert.deepEqual(operation['security'], [], path)
      assert.equal(operation['x-required-scope'], undefined, path)
      assert.equal(operation['x-rate-limit-class'], undefined, path)
    }
  })

  it('does not compile a route that lacks a fact', () => {
    const withoutIfMatch = {
      method: 'GET',
      operation: 'get',
      summary: 'x',
      tag: 'beneficiaries',
      requestBody: undefined,
      query: undefined,
      etag: true,
      idempotencyKey: false,
      errors: [],
      status: 200,
      response: 'BeneficiaryDetail',
    } as const
    const facts = { ...withoutIfMatch, ifMatch: false } as const
    const complete = defineRoute({
      ...facts,
      path: '/things/{id}',
      invoke: (service, ctx, [id]) => service.get(ctx, id),
    })
    assert.equal(complete.policy, OPERATIONS.get)
    // @ts-expect-error: whether it honours If-Match is missing
    defineRoute({
      ...withoutIfMatch,
      path: '/things',
      invoke: (service, ctx) => service.get(ctx, '1'),
    })
    // @ts-expect-error: a 201 must give the path of what it created
    defineRoute({
      ...facts,
      path: '/things',
      status: 201,
      response: 'BeneficiaryCreated',
      invoke: (service, ctx, _params, body) => service.create(ctx, body),
    })
    defineRoute({
      ...facts,
      path: '/things',
      // @ts-expect-error: the path has no {id}
      invoke: (service, ctx, [id]) => service.get(ctx, id),
    })
  })
})
