import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { StoredAccessLogEntry } from '../../core/index.js'
import { OpenApiResponseValidator } from './openapi-validator.js'
import { createTestHandler, login, MARIO, send, type Answer } from './server-fixtures.js'

const PEOPLE = ['Rossi', 'Verdi', 'Bianchi', 'Neri']

describe('the access log over HTTP (D35, D36, D37)', () => {
  const validator = new OpenApiResponseValidator()
  function checked(method: string, path: string, answer: Answer): Answer {
    assert.deepEqual(validator.check(method, path, answer), [])
    return answer
  }

  async function setup() {
    const base = await createTestHandler()
    const auditor = await base.service.clients.create({
      name: 'Data protection office',
      scopes: ['read', 'audit'],
    })
    const writer = (await login(base.handler, base.writer)).access
    const reader = (await login(base.handler, base.reader)).access
    const audit = (await login(base.handler, auditor)).access
    const ids: number[] = []
    for (const [i, last_name] of PEOPLE.entries()) {
      const created = await send(base.handler, 'POST', '/v3/beneficiaries', {
        token: writer,
        body: {
          first_name: 'Anna',
          last_name,
          email: `person${i}@example.org`,
          phone: MARIO.phone,
        },
      })
      assert.equal(created.status, 201, created.body)
      ids.push(Number(created.json?.['id']))
    }
    const log = base.storage.accessLog
    /** Every entry committed so far, oldest first. */
    const entries = async (): Promise<readonly StoredAccessLogEntry[]> => {
      await log.flush()
      return log.scan({ limit: 1000 })
    }
    const world = {
      service: base.service,
      clock: base.clock,
      reader: base.reader,
      auditorId: auditor.client_id,
      auditorSecret: auditor.client_secret,
    }
    return { handler: base.handler, world, writer, reader, audit, ids, entries }
  }

  it('records a list page with exactly the ids it returned, and the client, request and purpose', async () => {
    const { handler, reader, world, entries } = await setup()
    const page = await send(handler, 'GET', '/v3/beneficiaries', {
      token: reader,
      query: 'per_page=2&page=2&sort=id',
      headers: { 'x-purpose': 'eligibility review', 'x-request-id': 'req-list-1' },
    })
    assert.equal(page.status, 200)
    const returned = (page.json?.['data'] as { id: number }[]).map((item) => item.id)
    assert.equal(returned.length, 2)
    const [entry, ...more] = await entries()
    assert.equal(more.length, 0)
    assert.deepEqual(entry?.beneficiary_ids, returned)
    assert.equal(entry?.operation, 'list')
    assert.equal(entry?.client_id, world.reader.client_id)
    assert.equal(entry?.request_id, 'req-list-1')
    assert.equal(entry?.purpose, 'eligibility review')
    assert.equal(entry?.at, world.clock.now())
  })

  it('records nothing for a 404, a 403, a 401 or a 422, and nothing for an empty page', async () => {
    const { handler, reader, writer, entries, ids, world } = await setup()
    const refusals: [string, string, Parameters<typeof send>[3], number][] = [
      ['GET', '/v3/beneficiaries/999999', { token: reader }, 404],
      ['GET', '/v3/beneficiaries/999999/history', { token: reader }, 404],
      [
        'PUT',
        `/v3/beneficiaries/${ids[0]}`,
        { token: (await tokenWriteOnly()).access, body: { phone: null } },
        403,
      ],
      ['GET', `/v3/beneficiaries/${ids[0]}/access-log`, { token: reader }, 403],
      ['GET', `/v3/beneficiaries/${ids[0]}/export`, { token: writer }, 403],
      ['GET', `/v3/beneficiaries/${ids[0]}`, { token: 'not-a-token' }, 401],
      [
        'GET',
        `/v3/beneficiaries/${ids[0]}`,
        { token: reader, headers: { 'x-purpose': 'x'.repeat(201) } },
        422,
      ],
      ['GET', '/v3/beneficiaries', { token: reader, query: 'status=inactive' }, 200],
    ]
    for (const [method, path, call, status] of refusals) {
      const answer = await send(handler, method, path, call)
      assert.equal(answer.status, status, `${method} ${path}: ${answer.body}`)
    }
    assert.deepEqual(await entries(), [])

    async function tokenWriteOnly() {
      return login(handler, await world.service.clients.create({ name: 'w', scopes: ['write'] }))
    }
  })

  it('refuses a bad X-Purpose with 422 naming the header, before any work', async () => {
    const { handler, writer, ids, world } = await setup()
    for (const bad of ['', '   ', 'x'.repeat(201), 'tab\there', 'caf\u00e9']) {
      const answer = await send(handler, 'PUT', `/v3/beneficiaries/${ids[0]}`, {
        token: writer,
        body: { phone: null },
        headers: { 'x-purpose': bad },
      })
      assert.equal(answer.status, 422, JSON.stringify(bad))
      assert.equal(answer.json?.['error'], 'validation_failed')
      assert.deepEqual(answer.json?.['details'], [
        { field: 'X-Purpose', message: 'must be 1 to 200 visible ASCII characters and spaces' },
      ])
    }
    const record = await world.service.get({ token: writer }, ids[0]!)
    assert.equal(record.value.phone, '+393331234567')
    const ok = await send(handler, 'GET', `/v3/beneficiaries/${ids[0]}`, {
      token: writer,
      headers: { 'x-purpose': ` ${'x'.repeat(200)} ` },
    })
    assert.equal(ok.status, 200)
  })

  it('records for a HEAD what the GET would, and an entry for each answer with the record', async () => {
    const { handler, writer, audit, ids, entries, world } = await setup()
    const id = ids[1]!
    const get = await send(handler, 'GET', `/v3/beneficiaries/${id}`, { token: writer })
    const head = await send(handler, 'HEAD', `/v3/beneficiaries/${id}`, { token: writer })
    assert.equal(get.status, 200)
    assert.equal(head.status, 200)
    await send(handler, 'HEAD', `/v3/beneficiaries/${id}/history`, { token: writer })
    const put = await send(handler, 'PUT', `/v3/beneficiaries/${id}`, {
      token: writer,
      body: { phone: null },
    })
    assert.equal(put.status, 200)
    const status = await send(handler, 'POST', `/v3/beneficiaries/${id}/status`, {
      token: writer,
      body: { status: 'active' },
    })
    assert.equal(status.status, 200)
    const recorded = await entries()
    assert.deepEqual(
      recorded.map((e) => [e.operation, e.beneficiary_ids]),
      [
        ['get', [id]],
        ['get', [id]],
        ['history', [id]],
        ['update', [id]],
        ['status', [id]],
      ],
    )

    const log = checked(
      'GET',
      `/v3/beneficiaries/${id}/access-log`,
      await send(handler, 'GET', `/v3/beneficiaries/${id}/access-log`, {
        token: audit,
        query: 'per_page=2&page=2',
      }),
    )
    assert.equal(log.status, 200)
    assert.deepEqual(log.json?.['meta'], {
      current_page: 2,
      total_pages: 3,
      total_count: 5,
      per_page: 2,
    })
    assert.deepEqual(
      (log.json?.['data'] as { operation: string }[]).map((e) => e.operation),
      ['history', 'update'],
    )
    assert.equal(
      (log.json?.['links'] as { next: string }).next,
      `/v3/beneficiaries/${id}/access-log?page=3&per_page=2`,
    )
    // Reading the log carries no personal data: nothing more recorded.
    assert.equal((await entries()).length, 5)
    void world
  })

  it('records a match answer with the ids of the matches it returned, and a refused one not at all', async () => {
    const { handler, reader, ids, entries } = await setup()
    const candidate = { first_name: 'Anna', last_name: 'Rossi', phone: MARIO.phone }
    const match = await send(handler, 'POST', '/v3/beneficiaries/match', {
      token: reader,
      body: candidate,
      headers: { 'x-purpose': 'duplicate review' },
    })
    assert.equal(match.status, 200, match.body)
    const found = (match.json?.['data'] as { id: number }[]).map((m) => m.id)
    assert.ok(found.length > 0, match.body)
    const matches = await send(handler, 'GET', `/v3/beneficiaries/${ids[0]!}/matches`, {
      token: reader,
    })
    assert.equal(matches.status, 200, matches.body)
    const others = (matches.json?.['data'] as { id: number }[]).map((m) => m.id)
    assert.ok(!others.includes(ids[0]!))
    const refused = await send(handler, 'POST', '/v3/beneficiaries/match', {
      token: reader,
      body: { city: 'Roma' },
    })
    assert.equal(refused.status, 422, refused.body)
    const badPurpose = await send(handler, 'POST', '/v3/beneficiaries/match', {
      token: reader,
      body: candidate,
      headers: { 'x-purpose': ' ' },
    })
    assert.equal(badPurpose.status, 422, badPurpose.body)
    assert.deepEqual(
      (await entries()).map((e) => [e.operation, e.beneficiary_ids, e.purpose]),
      [
        ['match', found, 'duplicate review'],
        ...(others.length > 0 ? [['match', others, null]] : []),
      ],
    )
  })

  it('exports the record, its whole history and its access log, and records the export (D36)', async () => {
    const { handler, writer, audit, ids, entries, world } = await setup()
    const id = ids[2]!
    await send(handler, 'PUT', `/v3/beneficiaries/${id}`, { token: writer, body: { phone: null } })
    await send(handler, 'GET', `/v3/beneficiaries/${id}`, {
      token: writer,
      headers: { 'x-purpose': 'case 12 follow-up' },
    })
    const exported = checked(
      'GET',
      `/v3/beneficiaries/${id}/export`,
      await send(handler, 'GET', `/v3/beneficiaries/${id}/export`, {
        token: audit,
        headers: { 'x-purpose': 'subject access request 7' },
      }),
    )
    assert.equal(exported.status, 200)
    const body = exported.json!
    assert.equal((body['beneficiary'] as { id: number }).id, id)
    assert.deepEqual(
      (body['history'] as { action: string }[]).map((e) => e.action),
      ['created', 'updated'],
    )
    assert.deepEqual(
      (body['access_log'] as { operation: string; purpose: string | null }[]).map((e) => [
        e.operation,
        e.purpose,
      ]),
      [
        ['update', null],
        ['get', 'case 12 follow-up'],
      ],
    )
    const last = (await entries()).at(-1)!
    assert.equal(last.operation, 'export')
    assert.equal(last.client_id, world.auditorId)
    assert.equal(last.purpose, 'subject access request 7')

    // A deleted record's export and access log are 404, like its history (D27).
    const removed = await send(handler, 'DELETE', `/v3/beneficiaries/${id}`, { token: writer })
    assert.equal(removed.status, 204)
    for (const path of ['export', 'access-log', 'history']) {
      const gone = await send(handler, 'GET', `/v3/beneficiaries/${id}/${path}`, { token: audit })
      assert.equal(gone.status, 404, path)
    }
  })

  it('grants audit only to a client created with it, and a login may narrow it away', async () => {
    const { handler, world, ids } = await setup()
    assert.deepEqual(
      (await world.service.clients.list()).map((client) => client.scopes),
      [['read', 'write'], ['read'], ['read', 'audit']],
    )
    const narrowed = await send(handler, 'POST', '/v3/auth/login', {
      body: { client_id: world.auditorId, client_secret: world.auditorSecret, scope: 'read' },
    })
    assert.equal(narrowed.status, 200)
    const token = String(narrowed.json?.['access_token'])
    const refused = await send(handler, 'GET', `/v3/beneficiaries/${ids[0]}/access-log`, { token })
    assert.equal(refused.status, 403)
    assert.equal(refused.json?.['error'], 'insufficient_scope')
    const asked = await send(handler, 'POST', '/v3/auth/login', {
      body: {
        client_id: world.reader.client_id,
        client_secret: world.reader.client_secret,
        scope: 'audit',
      },
    })
    assert.equal(asked.status, 403)
    await assert.rejects(
      world.service.clients.create({ name: 'x', scopes: ['read', 'admin'] }),
      (error: Error & { details?: unknown }) => {
        assert.deepEqual(error.details, [
          { field: 'scopes', message: "must be one or more of 'read', 'write' and 'audit'" },
        ])
        return true
      },
    )
  })
})
