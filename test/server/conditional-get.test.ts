import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ifNoneMatchHits } from '../../server/if-none-match-hits.js'
import { OpenApiResponseValidator } from './openapi-validator.js'
import { createTestHandler, login, MARIO, send, type Answer } from './server-fixtures.js'

describe('ifNoneMatchHits (RFC 9110 13.1.2)', () => {
  it('matches `*`, and any listed tag by the weak comparison', () => {
    const hits = (field: string | undefined): boolean => ifNoneMatchHits(field, '"v4"')
    assert.equal(hits('*'), true)
    assert.equal(hits(' * '), true)
    assert.equal(hits('"v4"'), true)
    assert.equal(hits('W/"v4"'), true)
    assert.equal(hits('"v3", "v4"'), true)
    assert.equal(hits('"v3",W/"v4"'), true)
    assert.equal(hits(',, "v3" ,\t"v4",'), true)
    assert.equal(ifNoneMatchHits('"v4"', 'W/"v4"'), true)
  })

  it('does not match other tags, an empty field, or what is not an entity-tag', () => {
    const hits = (field: string | undefined): boolean => ifNoneMatchHits(field, '"v4"')
    for (const field of [
      undefined,
      '',
      '"v3"',
      '"v44"',
      'v4',
      '"V4"',
      'w/"v4"',
      '"v4',
      '"v3, "v4',
      '**',
      '*, "v3"',
      '"v3", *',
    ]) {
      assert.equal(hits(field), false, JSON.stringify(field))
    }
    // A stray member is skipped, the tags after it still count.
    assert.equal(hits('junk, "v4"'), true)
  })
})

describe('If-None-Match on GET detail and history, and their HEAD', () => {
  async function setup(standard = 1000) {
    const world = await createTestHandler({ limits: { auth: 100, write: 100, standard } })
    const { access } = await login(world.handler, world.writer)
    const reader = (await login(world.handler, world.reader)).access
    const created = await send(world.handler, 'POST', '/v3/beneficiaries', {
      token: access,
      body: MARIO,
    })
    return { ...world, access, reader, id: Number(created.json?.['id']) }
  }

  const validator = new OpenApiResponseValidator()
  function checked(method: string, path: string, answer: Answer): Answer {
    assert.deepEqual(validator.check(method, path, answer), [])
    return answer
  }

  it('answers 304 with the ETag, the limit fields and no body when a tag matches, else 200', async () => {
    const { handler, reader, id } = await setup()
    for (const path of [`/v3/beneficiaries/${id}`, `/v3/beneficiaries/${id}/history`]) {
      const first = checked('GET', path, await send(handler, 'GET', path, { token: reader }))
      assert.equal(first.status, 200)
      const etag = first.headers['etag']!
      assert.match(etag, /^"[!#-~]+"$/)
      for (const method of ['GET', 'HEAD']) {
        for (const field of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
          const headers = { 'if-none-match': field }
          const answer = checked(
            method,
            path,
            await send(handler, method, path, { token: reader, headers }),
          )
          assert.equal(answer.status, 304, `${method} ${path} ${field}`)
          assert.equal(answer.body, undefined)
          assert.equal(answer.headers['etag'], etag)
          assert.equal(answer.headers['content-type'], undefined)
          assert.equal(answer.headers['cache-control'], 'no-store')
          assert.match(answer.headers['x-request-id'] ?? '', /./)
          assert.match(answer.headers['ratelimit'] ?? '', /^"standard";r=\d+;t=\d+$/)
        }
      }
      const stale = await send(handler, 'GET', path, {
        token: reader,
        headers: { 'if-none-match': '"v0", "h0"' },
      })
      assert.equal(stale.status, 200)
      assert.equal(stale.body, first.body)
    }
  })

  it('answers 200 with the new ETag once the record changed', async () => {
    const { handler, access, id } = await setup()
    const detail = `/v3/beneficiaries/${id}`
    const history = `${detail}/history`
    const before = await send(handler, 'GET', detail, { token: access })
    const beforeHistory = await send(handler, 'GET', history, { token: access })
    await send(handler, 'PUT', detail, { token: access, body: { last_name: 'Verdi' } })
    for (const [path, old] of [
      [detail, before],
      [history, beforeHistory],
    ] as const) {
      const after = await send(handler, 'GET', path, {
        token: access,
        headers: { 'if-none-match': old.headers['etag']! },
      })
      assert.equal(after.status, 200, path)
      assert.notEqual(after.headers['etag'], old.headers['etag'])
      const again = await send(handler, 'GET', path, {
        token: access,
        headers: { 'if-none-match': after.headers['etag']! },
      })
      assert.equal(again.status, 304, path)
    }
  })

  it('checks the token, the scope, the limit and the record first: 401, 404, 429 stay', async () => {
    const { handler, reader, access, id, service } = await setup()
    const headers = { 'if-none-match': '*' }
    const detail = `/v3/beneficiaries/${id}`
    assert.equal((await send(handler, 'GET', detail, { headers })).status, 401)
    assert.equal((await send(handler, 'GET', detail, { headers, token: 'x.y.z' })).status, 401)
    const writeOnly = await service.clients.create({ name: 'Importer', scopes: ['write'] })
    const { access: writer } = await login(handler, writeOnly)
    for (const path of [detail, `${detail}/history`]) {
      const forbidden = await send(handler, 'GET', path, { headers, token: writer })
      assert.equal(forbidden.status, 403, path)
    }
    for (const path of ['/v3/beneficiaries/999', '/v3/beneficiaries/999/history']) {
      for (const method of ['GET', 'HEAD']) {
        const missing = await send(handler, method, path, { headers, token: reader })
        assert.equal(missing.status, 404, `${method} ${path}`)
      }
    }
    await send(handler, 'DELETE', detail, { token: access })
    assert.equal((await send(handler, 'GET', detail, { headers, token: reader })).status, 404)
    const history = `${detail}/history`
    assert.equal((await send(handler, 'GET', history, { headers, token: reader })).status, 404)

    // A bucket of one: a 304 draws from it like a 200, and the next request is refused.
    const small = await setup(1)
    const path = `/v3/beneficiaries/${small.id}`
    const first = await send(small.handler, 'GET', path, { headers, token: small.reader })
    assert.equal(first.status, 304)
    assert.match(first.headers['ratelimit'] ?? '', /^"standard";r=0;/)
    const limited = await send(small.handler, 'GET', path, { headers, token: small.reader })
    assert.equal(limited.status, 429)
    assert.equal(limited.json?.['error'], 'rate_limit_exceeded')
  })

  it('leaves the other routes alone: the list, and writes with If-None-Match', async () => {
    const { handler, access, id } = await setup()
    const headers = { 'if-none-match': '*' }
    const list = await send(handler, 'GET', '/v3/beneficiaries', { token: access, headers })
    assert.equal(list.status, 200)
    const put = await send(handler, 'PUT', `/v3/beneficiaries/${id}`, {
      token: access,
      headers,
      body: { last_name: 'Bianchi' },
    })
    assert.equal(put.status, 200)
  })
})
