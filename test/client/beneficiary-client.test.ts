import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ApiError, isApiError, type ApiErrorCode } from '../../client/index.js'
import { MARIO } from '../server/server-fixtures.js'
import { startClientWorld, TRANSPORTS, type ClientWorld } from './client-fixtures.js'

/** Runs `call`, asserts it throws an `ApiError` of `code` and `status`, and returns the error. */
async function refused(call: Promise<unknown>, code: ApiErrorCode, status: number) {
  const error = await call.then(
    () => assert.fail(`expected ${code}`),
    (thrown: unknown) => thrown,
  )
  assert.ok(error instanceof ApiError, String(error))
  assert.deepEqual([error.code, error.status, error.body.code], [code, status, status])
  return error
}

for (const transport of TRANSPORTS) {
  describe(`the typed client against a real server over ${transport}`, () => {
    let world: ClientWorld

    before(async () => {
      world = await startClientWorld(transport)
    })
    after(async () => {
      await world.server.close(1_000)
      assert.deepEqual(world.problems, [], 'every live answer matches the OpenAPI document')
    })

    it('calls every operation of the API with the service types, ETags and an Idempotency-Key', async () => {
      const client = world.client()
      const tokens = await client.login()
      assert.deepEqual([tokens.value.token_type, tokens.value.scope], ['Bearer', 'read write'])

      const created = await client.create(MARIO, { idempotencyKey: 'intake-42' })
      assert.equal(created.status, 201)
      assert.equal(created.value.status, 'pending')
      assert.equal(created.location, `/v3/beneficiaries/${created.value.id}`)
      assert.equal(created.replayed, false)
      const replay = await client.create(MARIO, { idempotencyKey: 'intake-42' })
      assert.deepEqual([replay.replayed, replay.value], [true, created.value])
      const id = created.value.id

      const read = await client.get(id, { requestId: 'client-test-1' })
      assert.equal(read.requestId, 'client-test-1')
      assert.equal(read.value.fiscal_code, MARIO.fiscal_code)
      assert.match(read.etag ?? '', /^"/)
      const updated = await client.update(id, { phone: null }, { ifMatch: read.etag })
      assert.equal(updated.value.phone, null)
      assert.notEqual(updated.etag, read.etag)
      const moved = await client.setStatus(
        id,
        { status: 'active', reason: 'documents checked' },
        { ifMatch: updated.etag },
      )
      assert.equal(moved.value.status, 'active')

      const history = await client.history(id, { per_page: 2 })
      assert.deepEqual(
        history.value.data.map((entry) => entry.action),
        ['created', 'updated'],
      )
      assert.equal(history.value.meta.total_pages, 2)
      const page = await client.list({ search: 'ross', status: 'active', per_page: 10, page: 1 })
      assert.deepEqual(
        page.value.data.map((item) => item.id),
        [id],
      )
      assert.equal(page.rateLimit?.limit, 1000)

      await client.remove(id, { ifMatch: moved.etag })
      await refused(client.get(id), 'not_found', 404)
      assert.deepEqual((await client.health()).value, { status: 'ok' })
      assert.deepEqual((await client.ready()).value, { status: 'ready' })
      assert.equal((await client.openapi()).value.openapi, '3.1.0')
    })

    it('pages through a whole list by links.next', async () => {
      const client = world.client()
      const ids: number[] = []
      for (let i = 0; i < 7; i++) {
        const { value } = await client.create({
          first_name: 'Ada',
          last_name: `Pager${i}`,
          email: `pager${i}@example.org`,
        })
        ids.push(value.id)
      }
      const listed = []
      for await (const item of client.listAll({ search: 'pager', per_page: 3, sort: '-id' })) {
        listed.push(item.id)
      }
      assert.deepEqual(listed, ids.reverse())
    })

    it('logs in by itself when a call first needs a token, and again after a logout', async () => {
      const client = world.client()
      const before = world.events.length
      await client.list()
      await client.logout()
      await client.list()
      assert.deepEqual(world.events.slice(before), [
        { type: 'token', action: 'login', reason: 'initial' },
        { type: 'token', action: 'login', reason: 'initial' },
      ])
    })

    it('throws the standard error body as a typed ApiError', async () => {
      const client = world.client()
      const invalid = await refused(
        client.create({ first_name: 'Ada', last_name: 'L', email: 'no-at-sign', phone: '12' }),
        'validation_failed',
        422,
      )
      assert.deepEqual(invalid.details.map((problem) => problem.field).sort(), ['email', 'phone'])
      const misspelt = await refused(
        // @ts-expect-error `first_nme` is not a field: the client's bodies are the core's types.
        client.create({ first_nme: 'Ada', last_name: 'L', email: 'ada@example.org' }),
        'validation_failed',
        422,
      )
      assert.deepEqual(misspelt.details.map((problem) => problem.field).sort(), [
        'first_name',
        'first_nme',
      ])
      // @ts-expect-error `per_pag` is not a list parameter (the server ignores unknown ones).
      assert.equal((await client.list({ per_pag: 5 })).value.meta.per_page, 20)
      assert.equal(invalid.operation, 'create')
      assert.match(invalid.requestId ?? '', /.+/)
      assert.equal(invalid.requestId, invalid.body.request_id)

      const { value, etag } = await client.create({
        first_name: 'Grace',
        last_name: 'Hopper',
        email: 'grace@example.org',
      })
      await client.update(value.id, { last_name: 'Murray Hopper' }, { ifMatch: etag })
      await refused(
        client.update(value.id, { last_name: 'Hopper' }, { ifMatch: etag }),
        'precondition_failed',
        412,
      )
      await refused(client.remove(value.id, { ifMatch: etag }), 'precondition_failed', 412)
      await refused(client.setStatus(value.id, { status: 'pending' }), 'invalid_transition', 422)
      await refused(client.list({ per_page: 101 }), 'validation_failed', 422)
      const caught = await client.get(10_000).catch((error: unknown) => error)
      assert.ok(isApiError(caught, 'not_found'))
      assert.ok(!isApiError(caught, 'validation_failed'))
    })

    it('answers 403 insufficient_scope to a read-only client, and 401 to bad credentials, without a retry', async () => {
      const reader = world.client({}, world.reader)
      await refused(
        reader.create({ first_name: 'Ada', last_name: 'L', email: 'ada@example.org' }),
        'insufficient_scope',
        403,
      )
      const logins = world.calls.login
      const wrong = world.client({
        credentials: { clientId: world.writer.client_id, clientSecret: 'not-the-secret' },
      })
      const error = await refused(wrong.list(), 'invalid_credentials', 401)
      assert.equal(error.operation, 'login')
      assert.equal(world.calls.login, logins + 1, 'one login attempt, not a loop')
      const narrowed = world.client({
        credentials: {
          clientId: world.writer.client_id,
          clientSecret: world.writer.client_secret,
          scope: 'read',
        },
      })
      assert.equal((await narrowed.login()).value.scope, 'read')
      await refused(narrowed.remove(1), 'insufficient_scope', 403)
    })
  })
}
