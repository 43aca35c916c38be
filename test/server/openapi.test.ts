import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ERROR_CODES, STATUS_BY_CODE, STATUS_BY_HTTP_CODE } from '../../server/error-status.js'
import { buildOpenApiDocument } from '../../server/openapi.js'
import { RouteTable } from '../../server/route-table.js'
import type { Route } from '../../server/route.js'
import { ROUTES } from '../../server/routes.js'
import { OpenApiResponseValidator } from './openapi-validator.js'

type Json = Record<string, unknown>

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options']
const document = buildOpenApiDocument() as Json & { paths: Record<string, Record<string, Json>> }
const validator = new OpenApiResponseValidator(document)

/** Every operation of the document, with its path and method. */
function operations(): { path: string; method: string; operation: Json }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ path, method, operation })),
  )
}

/** Every response of every operation, references followed. */
function responses(): { where: string; status: string; response: Json }[] {
  return operations().flatMap(({ path, method, operation }) =>
    Object.entries(operation['responses'] as Json).map(([status, response]) => ({
      where: `${method.toUpperCase()} ${path} ${status}`,
      status,
      response: validator.resolve(response as Json)!,
    })),
  )
}

/** Every string under a `description` or `summary` key, anywhere in `value`. */
function prose(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) prose(item, found)
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if ((key === 'description' || key === 'summary') && typeof item === 'string') {
        found.push(item)
      } else prose(item, found)
    }
  }
  return found
}

function dig(...keys: string[]): unknown {
  return keys.reduce<unknown>((value, key) => (value as Json | undefined)?.[key], document)
}

describe('OpenAPI document', () => {
  it('every route the server answers is in the OpenAPI document, and every documented operation is a route; the pages for people are left out', () => {
    const forPeople = (route: Route | undefined) =>
      route?.kind === 'server' && route.documented === false
    for (const basePath of ['/v3', '/api/v3']) {
      const paths = (buildOpenApiDocument({ basePath }) as typeof document).paths
      const answered = new RouteTable(basePath, ROUTES).entries
        .filter((entry) => !forPeople(entry.routes['GET']))
        .flatMap((entry) =>
          Object.keys(entry.routes).map((method) => `${method} ${entry.template}`),
        )
      const documented = Object.entries(paths).flatMap(([path, item]) =>
        Object.keys(item)
          .filter((key) => METHODS.includes(key))
          .map((method) => `${method.toUpperCase()} ${path}`),
      )
      assert.deepEqual(documented.sort(), answered.sort())
      assert.ok(!Object.keys(paths).some((path) => path.startsWith('/docs') || path === '/'))
      // D28: every GET route answers HEAD too.
      const shown = ROUTES.filter((route) => route.kind === 'service' || route.documented !== false)
      const gets = shown.filter((route) => route.method === 'GET').length
      assert.equal(answered.length, shown.length + gets)
    }
  })

  it('documents the error body, headers, security and parameters', () => {
    const names = (value: unknown): string[] => (value as { name: string }[]).map((p) => p.name)
    assert.equal(dig('openapi'), '3.1.0')
    for (const name of [
      'ErrorBody',
      'ErrorCode',
      'CreateBeneficiaryBody',
      'BeneficiaryDetail',
      'PagedBeneficiaries',
      'TokenResponse',
      'Address',
    ]) {
      assert.ok(dig('components', 'schemas', name), name)
    }
    for (const name of ['X-Request-Id', 'ETag', 'Idempotent-Replayed', 'Allow', 'RateLimit']) {
      assert.ok(dig('components', 'headers', name), name)
    }
    assert.deepEqual(dig('paths', '/v3/beneficiaries', 'get', 'security'), [
      { bearerAuth: ['read'] },
    ])
    const listParameters = names(dig('paths', '/v3/beneficiaries', 'get', 'parameters'))
    for (const name of ['page', 'per_page', 'search', 'status', 'created_from', 'created_to']) {
      assert.ok(listParameters.includes(name), name)
    }
    assert.ok(listParameters.includes('sort'))
    assert.deepEqual(dig('paths', '/v3/auth/login', 'post', 'security'), [])
    assert.ok(
      names(dig('paths', '/v3/beneficiaries', 'post', 'parameters')).includes('Idempotency-Key'),
    )
    assert.ok(dig('paths', '/v3/beneficiaries/{id}', 'put', 'responses', '412'))
  })

  it('D28: documents HEAD beside every GET, with the same statuses and headers and no body', () => {
    for (const [path, item] of Object.entries(document.paths)) {
      const get = item['get']
      if (get === undefined) {
        assert.equal(item['head'], undefined, path)
        continue
      }
      const head = item['head']!
      assert.equal(head['operationId'], `${String(get['operationId'])}Head`, path)
      assert.deepEqual(head['security'], get['security'], path)
      const heads = head['responses'] as Record<string, Json>
      const getResponses = get['responses'] as Record<string, Json>
      assert.deepEqual(Object.keys(heads), Object.keys(getResponses), path)
      for (const [status, response] of Object.entries(heads)) {
        assert.equal(response['content'], undefined, `${path} ${status}`)
        const getResponse = validator.resolve(getResponses[status])!
        assert.deepEqual(response['headers'], getResponse['headers'], `${path} ${status}`)
      }
    }
  })

  it('D29: PUT and the status transition require read as well as write; DELETE and create write only', () => {
    const scopes = (path: string, method: string): unknown =>
      document.paths[path]![method]!['security']
    assert.deepEqual(scopes('/v3/beneficiaries/{id}', 'put'), [{ bearerAuth: ['write', 'read'] }])
    assert.deepEqual(scopes('/v3/beneficiaries/{id}/status', 'post'), [
      { bearerAuth: ['write', 'read'] },
    ])
    assert.deepEqual(scopes('/v3/beneficiaries/{id}', 'delete'), [{ bearerAuth: ['write'] }])
    assert.deepEqual(scopes('/v3/beneficiaries', 'post'), [{ bearerAuth: ['write'] }])
    const forbidden = dig('paths', '/v3/beneficiaries/{id}', 'put', 'responses', '403') as Json
    assert.match(String(forbidden['description']), /`write` and `read`, since the answer carries/)
  })

  it('names no internal decision tag or specification section in what a reader sees', () => {
    const texts = prose(document)
    assert.ok(texts.length > 200, `only ${texts.length} texts`)
    for (const text of texts) {
      assert.doesNotMatch(text, /\bD\d+\b|specification \d/i, text)
    }
  })

  it('lists the error identifiers as an enum derived from the error-code tables', () => {
    const codes = dig('components', 'schemas', 'ErrorCode', 'enum') as string[]
    assert.deepEqual(codes, [...ERROR_CODES])
    assert.deepEqual(
      [...codes].sort(),
      [...Object.keys(STATUS_BY_CODE), ...Object.keys(STATUS_BY_HTTP_CODE)].sort(),
    )
    assert.deepEqual(dig('components', 'schemas', 'ErrorBody', 'properties', 'error'), {
      $ref: '#/components/schemas/ErrorCode',
    })
  })

  it('has examples for every request body and every response with a body, each valid against its schema', () => {
    let checked = 0
    const check = (where: string, media: Json) => {
      const examples = media['examples'] as Record<string, Json> | undefined
      assert.ok(examples !== undefined && Object.keys(examples).length > 0, `${where}: no example`)
      const compiled = validator.compile(media['schema'] as Json)
      for (const [name, example] of Object.entries(examples)) {
        const value = example['value']
        const errors = [...compiled.Errors(value)].map((e) => `${e.instancePath} ${e.message}`)
        assert.deepEqual(errors, [], `${where} example ${name}`)
        checked++
      }
    }
    for (const { path, method, operation } of operations()) {
      const body = operation['requestBody'] as Json | undefined
      const media = (body?.['content'] as Record<string, Json> | undefined)?.['application/json']
      if (media !== undefined) check(`${method} ${path} request`, media)
    }
    for (const { where, response } of responses()) {
      const media = (response['content'] as Record<string, Json> | undefined)?.['application/json']
      if (media !== undefined) check(where, media)
    }
    for (const [name, header] of Object.entries(dig('components', 'headers') as Json)) {
      const { schema, example } = header as Json
      assert.ok(validator.compile(schema as Json).Check(example), `header ${name}`)
    }
    assert.ok(checked > 150, `only ${checked} examples`)
  })

  it("gives each error response an example of every identifier it can carry, with the response's status as code", () => {
    for (const { where, status, response } of responses()) {
      const content = response['content'] as Record<string, Json> | undefined
      // A HEAD answer has no body.
      if (content === undefined || !(status === 'default' || Number(status) >= 400)) continue
      const examples = content['application/json']!['examples'] as Record<string, Json>
      for (const { value } of Object.values(examples) as { value: Json }[]) {
        const code = value['error'] as keyof typeof STATUS_BY_CODE &
          keyof typeof STATUS_BY_HTTP_CODE
        const expected =
          (STATUS_BY_CODE as Record<string, number>)[code] ??
          (STATUS_BY_HTTP_CODE as Record<string, number>)[code]
        assert.equal(value['code'], expected, `${where} ${code}`)
        if (status !== 'default') assert.equal(value['code'], Number(status), where)
      }
    }
    const login401 = dig('paths', '/v3/auth/login', 'post', 'responses', '401', 'content')
    assert.deepEqual(Object.keys((login401 as Json)['application/json']!['examples' as never]), [
      'invalid_credentials',
    ])
  })

  it('defines Address once and refers to it from the detail and both request bodies', () => {
    const inline: string[] = []
    const walk = (value: unknown, where: string): void => {
      if (value === null || typeof value !== 'object') return
      const properties = (value as Json)['properties'] as Json | undefined
      if (properties?.['postal_code'] !== undefined) inline.push(where)
      for (const [key, item] of Object.entries(value)) walk(item, `${where}/${key}`)
    }
    walk(document, '#')
    assert.deepEqual(inline, ['#/components/schemas/Address'])
    const ref = { $ref: '#/components/schemas/Address' }
    for (const name of ['BeneficiaryDetail', 'CreateBeneficiaryBody', 'UpdateBeneficiaryBody']) {
      const address = dig('components', 'schemas', name, 'properties', 'address') as Json
      assert.deepEqual((address['anyOf'] as unknown[])[0], ref, name)
    }
  })

  it('documents 405 method_not_allowed with Allow on every operation', () => {
    const shared = dig('components', 'responses', 'MethodNotAllowed') as Json
    assert.ok((shared['headers'] as Json)['Allow'])
    for (const { where, status, response } of responses()) {
      if (status !== '405') continue
      assert.ok((response['headers'] as Json)['Allow'], where)
    }
    for (const { path, method, operation } of operations()) {
      assert.ok((operation['responses'] as Json)['405'], `${method} ${path}`)
    }
  })

  it('lists each header on exactly the responses that carry it', () => {
    const headers = (path: string, method: string, status: string) => {
      const response = validator.resolve(dig('paths', path, method, 'responses', status) as Json)!
      return Object.fromEntries(
        Object.entries(response['headers'] as Json).map(([name, use]) => [
          name,
          validator.resolve(use as Json)!['required'],
        ]),
      )
    }
    const rate = ['RateLimit-Policy', 'RateLimit', 'X-RateLimit-Limit', 'X-RateLimit-Remaining']
    // The token is checked before the limiter: its 401 has the challenge and no rate limit.
    const list401 = headers('/v3/beneficiaries', 'get', '401')
    assert.equal(list401['WWW-Authenticate'], true)
    for (const name of rate) assert.equal(list401[name], undefined, name)
    // Login is limited first, and a wrong secret is no token: no challenge.
    const login401 = headers('/v3/auth/login', 'post', '401')
    assert.equal(login401['WWW-Authenticate'], undefined)
    for (const name of rate) assert.equal(login401[name], true, name)
    // A refresh's 401 is about a token (challenge) or the client (none).
    assert.equal(headers('/v3/auth/refresh', 'post', '401')['WWW-Authenticate'], false)
    // A broken query string is refused before the limiter, a broken body after it.
    for (const name of rate) {
      assert.equal(headers('/v3/beneficiaries', 'get', '400')[name], undefined, name)
      assert.equal(headers('/v3/beneficiaries', 'post', '400')[name], true, name)
      assert.equal(headers('/v3/beneficiaries', 'post', '500')[name], undefined, name)
      assert.equal(headers('/v3/beneficiaries', 'post', '415')[name], undefined, name)
      assert.equal(headers('/v3/beneficiaries', 'post', '503')[name], false, name)
    }
    const created = headers('/v3/beneficiaries', 'post', '201')
    assert.equal(created['ETag'], true)
    assert.equal(created['Location'], true)
    assert.equal(created['Idempotent-Replayed'], false)
    assert.equal(headers('/v3/beneficiaries/{id}', 'put', '403')['WWW-Authenticate'], true)
    assert.equal(headers('/readyz', 'get', '503')['Retry-After'], undefined)
    assert.equal(headers('/v3/beneficiaries', 'get', '503')['Retry-After'], true)
  })
})

describe('the response validator of the suites', () => {
  const answer = (status: number, headers: Json, body?: Json) => ({
    status,
    headers: {
      'x-request-id': 'r',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      ...headers,
    } as Record<string, string>,
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const error = (status: number, code: string) => ({ error: code, message: 'm', code: status })

  it('accepts an answer as documented, and names a header sent where it is not documented, one missing, and an error identifier or code the response does not give', () => {
    const check = (status: number, headers: Json, body?: Json) =>
      new OpenApiResponseValidator(document).check('GET', '/v3/beneficiaries', {
        ...answer(status, headers, body),
      })
    const challenge = { 'www-authenticate': 'Bearer error="invalid_token"' }
    assert.deepEqual(check(401, challenge, error(401, 'invalid_token')), [])
    assert.match(
      check(401, { ...challenge, ratelimit: 'x' }, error(401, 'token_expired'))[0]!,
      /ratelimit sent but not documented/,
    )
    assert.match(check(401, {}, error(401, 'invalid_token'))[0]!, /WWW-Authenticate missing/)
    assert.match(
      check(401, challenge, error(401, 'invalid_credentials'))[0]!,
      /invalid_credentials has no example/,
    )
    assert.match(check(401, challenge, error(400, 'invalid_token'))[0]!, /code 400/)
    assert.deepEqual(
      new OpenApiResponseValidator(document).check(
        'PATCH',
        '/v3/beneficiaries',
        answer(405, { allow: 'GET, HEAD, POST' }, error(405, 'method_not_allowed')),
      ),
      [],
    )
  })
})
