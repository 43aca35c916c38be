import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { purgeExpiredEvents } from '../../server/event-retention.js'
import { MARIO, createTestHandler, login, send } from './server-fixtures.js'

const DAY_MS = 86_400_000

describe('GET /v3/events (D33)', () => {
  it('pages the feed by cursor, answers HEAD alike, and keeps `next` when nothing is new', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    for (let i = 0; i < 3; i++) {
      const created = await send(handler, 'POST', '/v3/beneficiaries', {
        token,
        body: { ...MARIO, email: `m${i}@example.org`, fiscal_code: undefined },
      })
      assert.equal(created.status, 201)
    }
    const first = await send(handler, 'GET', '/v3/events', { token, query: 'limit=2' })
    assert.equal(first.status, 200)
    const page = first.json as { data: { id: string; type: string }[]; next: string }
    assert.deepEqual(
      page.data.map((event) => event.type),
      ['beneficiary.created', 'beneficiary.created'],
    )
    assert.equal(page.next, page.data[1]!.id)
    const head = await send(handler, 'HEAD', '/v3/events', { token, query: 'limit=2' })
    assert.equal(head.status, 200)
    const rest = await send(handler, 'GET', '/v3/events', { token, query: `after=${page.next}` })
    const last = rest.json as { data: { beneficiary_id: number }[]; next: string }
    assert.deepEqual(
      last.data.map((event) => event.beneficiary_id),
      [3],
    )
    const none = await send(handler, 'GET', '/v3/events', { token, query: `after=${last.next}` })
    assert.deepEqual(none.json, { data: [], next: last.next })
  })

  it('names every bad parameter in one 422 and changes nothing', async () => {
    const { handler, reader } = await createTestHandler()
    const { access: token } = await login(handler, reader)
    const answer = await send(handler, 'GET', '/v3/events', {
      token,
      query: 'limit=0&wait=31&after=not-a-cursor',
    })
    assert.equal(answer.status, 422)
    assert.equal(answer.json!['error'], 'validation_failed')
    const fields = (answer.json!['details'] as { field: string }[]).map((d) => d.field).sort()
    assert.deepEqual(fields, ['after', 'limit', 'wait'])
    for (const query of ['limit=1001', 'limit=x', 'wait=-1', 'after=ZTEuMS4y']) {
      const bad = await send(handler, 'GET', '/v3/events', { token, query })
      assert.equal(bad.status, 422, query)
    }
  })

  it('answers 410 cursor_expired for a cursor older than the events kept', async () => {
    const { handler, writer, storage, clock } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    const start = (await send(handler, 'GET', '/v3/events', { token })).json!['next'] as string
    await send(handler, 'POST', '/v3/beneficiaries', { token, body: MARIO })
    clock.advance(31 * DAY_MS)
    assert.equal(await purgeExpiredEvents(storage.events, clock, 30), 1)
    const { access: fresh } = await login(handler, writer)
    const answer = await send(handler, 'GET', '/v3/events', {
      token: fresh,
      query: `after=${start}`,
    })
    assert.equal(answer.status, 410)
    assert.equal(answer.json!['error'], 'cursor_expired')
    assert.equal(answer.json!['code'], 410)
    const again = await send(handler, 'GET', '/v3/events', { token: fresh })
    assert.deepEqual((again.json as { data: unknown[] }).data, [])
  })

  it('holds an empty answer with wait until a change arrives', async () => {
    const { handler, writer } = await createTestHandler()
    const { access: token } = await login(handler, writer)
    const start = (await send(handler, 'GET', '/v3/events', { token })).json!['next'] as string
    const waiting = send(handler, 'GET', '/v3/events', { token, query: `after=${start}&wait=30` })
    let answered = false
    void waiting.then(() => (answered = true))
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.equal(answered, false)
    await send(handler, 'POST', '/v3/beneficiaries', { token, body: MARIO })
    const answer = await waiting
    assert.deepEqual(
      (answer.json as { data: { type: string }[] }).data.map((event) => event.type),
      ['beneficiary.created'],
    )
  })
})
