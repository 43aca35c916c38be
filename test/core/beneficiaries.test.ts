import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { maria, rejectsWith, setup, unchecked } from './support.js'

const full = {
  first_name: '  Giulia ',
  last_name: 'Bianchi',
  email: 'Giulia.Bianchi@Example.org',
  phone: '+39 (02) 1234-5678',
  date_of_birth: '1985-12-10',
  fiscal_code: 'bncglu85t50f205l',
  address: { street: 'Via Roma 1', city: 'Milano', postal_code: '20121', country: 'it' },
  metadata: { source: 'web', campaign_id: 42, consent: true },
}

describe('create and get', () => {
  it('D7: creates a pending beneficiary and returns the create shape of specification 4.5', async () => {
    const { service, ctx } = await setup()
    const { value, etag } = await service.create(ctx, maria)
    assert.deepEqual(Object.keys(value).sort(), [
      'created_at',
      'email',
      'first_name',
      'id',
      'last_name',
      'status',
    ])
    assert.equal(value.status, 'pending')
    assert.equal(value.created_at, '2026-01-01T09:00:00.000Z')
    assert.match(etag ?? '', /^"[^"]+"$/)
  })

  it('D7, D8: absent optionals read back as null and metadata as {}; strings are normalised', async () => {
    const { service, ctx } = await setup()
    const { value: created } = await service.create(ctx, maria)
    const { value } = await service.get(ctx, created.id)
    assert.equal(value.phone, null)
    assert.equal(value.date_of_birth, null)
    assert.equal(value.fiscal_code, null)
    assert.equal(value.address, null)
    assert.deepEqual(value.metadata, {})

    const { value: other } = await service.create(ctx, full)
    const { value: detail } = await service.get(ctx, String(other.id))
    assert.equal(detail.first_name, 'Giulia')
    assert.equal(detail.email, 'Giulia.Bianchi@Example.org')
    assert.equal(detail.phone, '+390212345678')
    assert.equal(detail.fiscal_code, 'BNCGLU85T50F205L')
    assert.equal(detail.address?.country, 'IT')
    assert.deepEqual(detail.metadata, full.metadata)
  })

  it('D10: bad input lists every offending field and changes nothing', async () => {
    const { service, ctx } = await setup()
    const error = await rejectsWith<{ details: { field: string }[] }>(
      service.create(
        ctx,
        unchecked({
          first_name: '',
          email: 'not-an-email',
          phone: '12',
          date_of_birth: '2023-02-30',
          fiscal_code: 'RSSMRA85T10A562X',
          address: { street: 'Via Roma', city: 'Roma', postal_code: '00100', country: 'XX' },
          metadata: { nested: { no: true } },
          id: 5,
          status: 'active',
          nickname: 'x',
        }),
      ),
      'validation_failed',
    )
    const fields = error.details.map((d) => d.field)
    for (const field of [
      'first_name',
      'last_name',
      'email',
      'phone',
      'date_of_birth',
      'fiscal_code',
      'address.country',
      'metadata.nested',
      'id',
      'status',
      'nickname',
    ]) {
      assert.ok(fields.includes(field), `${field} in ${fields.join(', ')}`)
    }
    assert.equal((await service.list(ctx, {})).value.meta.total_count, 0)
  })

  it('D12: a body that is not an object is bad_request', async () => {
    const { service, ctx } = await setup()
    await rejectsWith(service.create(ctx, unchecked([maria])), 'bad_request')
    await rejectsWith(service.create(ctx, unchecked('text')), 'bad_request')
  })

  it('D12: ids that are not positive integers in range are not_found', async () => {
    const { service, ctx } = await setup()
    await service.create(ctx, maria)
    for (const id of ['abc', '0', '-1', '1.5', '1e3', '99999999999999999999', 0, -3, 1.5, ' 1']) {
      await rejectsWith(service.get(ctx, id), 'not_found')
    }
    await rejectsWith(service.get(ctx, 2), 'not_found')
  })

  it('D8: a duplicate fiscal code is a 422 naming fiscal_code and creates nothing', async () => {
    const { service, ctx } = await setup()
    await service.create(ctx, full)
    const error = await rejectsWith<{ details: { field: string }[] }>(
      service.create(ctx, { ...maria, fiscal_code: full.fiscal_code }),
      'validation_failed',
    )
    assert.deepEqual(
      error.details.map((d) => d.field),
      ['fiscal_code'],
    )
    assert.equal((await service.list(ctx, {})).value.meta.total_count, 1)
  })
})

describe('update (D11, D23)', () => {
  it('D11: PUT is partial, returns the detail shape, and null clears an optional field', async () => {
    const { service, ctx, clock } = await setup()
    const { value: created } = await service.create(ctx, full)
    clock.advance(1000)
    const { value } = await service.update(ctx, created.id, {
      phone: null,
      metadata: { source: 'phone' },
    })
    assert.equal(value.phone, null)
    assert.deepEqual(value.metadata, { source: 'phone' })
    assert.equal(value.first_name, 'Giulia')
    assert.equal(value.updated_at, '2026-01-01T09:00:01.000Z')
    assert.equal(value.created_at, '2026-01-01T09:00:00.000Z')
  })

  it('D11: a PUT that changes nothing leaves updated_at and the ETag as they were', async () => {
    const { service, ctx, clock } = await setup()
    const { value: created } = await service.create(ctx, full)
    const before = await service.get(ctx, created.id)
    clock.advance(5000)
    const after = await service.update(ctx, created.id, {
      first_name: 'Giulia',
      address: full.address,
    })
    assert.equal(after.value.updated_at, before.value.updated_at)
    assert.equal(after.etag, before.etag)
    const history = await service.history(ctx, created.id, {})
    assert.equal(history.value.meta.total_count, 1)
  })

  it('D11: address and metadata sent again with their keys in another order are no change', async () => {
    const { service, ctx, clock } = await setup()
    const { value: created } = await service.create(ctx, {
      ...full,
      metadata: { programme: 'housing', household_size: 3, verified: true },
    })
    const before = await service.get(ctx, created.id)
    clock.advance(5000)
    const same = await service.update(ctx, created.id, {
      address: { country: 'it', postal_code: '20121', city: 'Milano', street: 'Via Roma 1' },
      metadata: { verified: true, household_size: 3, programme: 'housing' },
    })
    assert.equal(same.etag, before.etag)
    const changed = await service.update(ctx, created.id, {
      metadata: { verified: true, household_size: 4, programme: 'housing' },
    })
    assert.notEqual(changed.etag, before.etag)
    const history = await service.history(ctx, created.id, {})
    assert.equal(history.value.meta.total_count, 2)
    assert.deepEqual(
      history.value.data[1]?.changes.map((c) => c.field),
      ['metadata'],
    )
  })

  it('D11: any change moves updated_at, even within the same millisecond', async () => {
    const { service, ctx } = await setup()
    const { value: created } = await service.create(ctx, maria)
    const { value } = await service.update(ctx, created.id, { last_name: 'Verdi' })
    assert.ok(value.updated_at > created.created_at)
  })

  it('D11: null for a required field is refused', async () => {
    const { service, ctx } = await setup()
    const { value: created } = await service.create(ctx, maria)
    await rejectsWith(
      service.update(ctx, created.id, unchecked({ email: null })),
      'validation_failed',
    )
  })

  it('D8: a PUT must keep fiscal code and birth date in agreement', async () => {
    const { service, ctx } = await setup()
    const { value: created } = await service.create(ctx, full)
    const error = await rejectsWith<{ details: { field: string }[] }>(
      service.update(ctx, created.id, { date_of_birth: '1985-12-11' }),
      'validation_failed',
    )
    assert.ok(error.details.some((d) => d.field === 'fiscal_code' || d.field === 'date_of_birth'))
  })

  it('D23: the ETag changes with every change and a stale If-Match is 412 that changes nothing', async () => {
    const { service, ctx } = await setup()
    const { value: created, etag: first } = await service.create(ctx, maria)
    const updated = await service.update({ ...ctx, ifMatch: first }, created.id, {
      last_name: 'Verdi',
    })
    assert.notEqual(updated.etag, first)
    await rejectsWith(
      service.update({ ...ctx, ifMatch: first }, created.id, { last_name: 'Neri' }),
      'precondition_failed',
    )
    await rejectsWith(
      service.setStatus({ ...ctx, ifMatch: first }, created.id, { status: 'active' }),
      'precondition_failed',
    )
    await rejectsWith(service.remove({ ...ctx, ifMatch: first }, created.id), 'precondition_failed')
    const { value, etag } = await service.get(ctx, created.id)
    assert.equal(value.last_name, 'Verdi')
    assert.equal(value.status, 'pending')
    assert.equal(etag, updated.etag)
    await service.update({ ...ctx, ifMatch: `W/${etag}, ${etag}` }, created.id, {
      last_name: 'Neri',
    })
    await service.update({ ...ctx, ifMatch: '*' }, created.id, { last_name: 'Gialli' })
  })

  it('D23: two racing updates without If-Match both land: no lost update', async () => {
    const { service, ctx } = await setup({ limits: { write: 100 } })
    const { value: created } = await service.create(ctx, maria)
    await Promise.all([
      service.update(ctx, created.id, { phone: '+39 333 1234567' }),
      service.update(ctx, created.id, { metadata: { source: 'race' } }),
    ])
    const { value } = await service.get(ctx, created.id)
    assert.equal(value.phone, '+393331234567')
    assert.deepEqual(value.metadata, { source: 'race' })
    const history = await service.history(ctx, created.id, {})
    assert.equal(history.value.meta.total_count, 3)
  })

  it('D23: two racing updates with the same If-Match: exactly one wins, the other is 412', async () => {
    const { service, ctx } = await setup({ limits: { write: 100 } })
    const { value: created, etag } = await service.create(ctx, maria)
    const results = await Promise.allSettled([
      service.update({ ...ctx, ifMatch: etag }, created.id, { last_name: 'A' }),
      service.update({ ...ctx, ifMatch: etag }, created.id, { last_name: 'B' }),
    ])
    const codes = results.map((r) =>
      r.status === 'fulfilled' ? 'ok' : (r.reason as { code: string }).code,
    )
    assert.deepEqual(codes.sort(), ['ok', 'precondition_failed'])
  })
})

describe('status transitions (D14)', () => {
  it('D14: allows pending→active, active→inactive, inactive→active and pending→inactive', async () => {
    const { service, ctx } = await setup({ limits: { write: 100 } })
    const { value: a } = await service.create(ctx, maria)
    assert.equal((await service.setStatus(ctx, a.id, { status: 'active' })).value.status, 'active')
    assert.equal(
      (await service.setStatus(ctx, a.id, { status: 'inactive', reason: 'moved' })).value.status,
      'inactive',
    )
    assert.equal((await service.setStatus(ctx, a.id, { status: 'active' })).value.status, 'active')
    const { value: b } = await service.create(ctx, { ...maria, email: 'b@example.org' })
    assert.equal(
      (await service.setStatus(ctx, b.id, { status: 'inactive' })).value.status,
      'inactive',
    )
  })

  it('D14: asking for the current status is a no-op 200; pending is invalid_transition; unknown is validation_failed', async () => {
    const { service, ctx } = await setup({ limits: { write: 100 } })
    const { value: a } = await service.create(ctx, maria)
    await service.setStatus(ctx, a.id, { status: 'active' })
    const before = await service.get(ctx, a.id)
    const same = await service.setStatus(ctx, a.id, { status: 'active' })
    assert.equal(same.etag, before.etag)
    const error = await rejectsWith<{ from: string; to: string }>(
      service.setStatus(ctx, a.id, { status: 'pending' }),
      'invalid_transition',
    )
    assert.deepEqual([error.from, error.to], ['active', 'pending'])
    await rejectsWith(
      service.setStatus(ctx, a.id, unchecked({ status: 'archived' })),
      'validation_failed',
    )
    await rejectsWith(service.setStatus(ctx, a.id, unchecked({})), 'validation_failed')
    await rejectsWith(service.setStatus(ctx, 999, { status: 'active' }), 'not_found')
    const { value: fresh } = await service.create(ctx, { ...maria, email: 'c@example.org' })
    await rejectsWith(service.setStatus(ctx, fresh.id, { status: 'pending' }), 'invalid_transition')
  })
})

describe('delete (D13) and history (D27)', () => {
  it('D13: delete removes for good; a second delete is 404; the fiscal code is free again', async () => {
    const { service, ctx } = await setup()
    const { value } = await service.create(ctx, full)
    await service.remove(ctx, value.id)
    await rejectsWith(service.get(ctx, value.id), 'not_found')
    await rejectsWith(service.remove(ctx, value.id), 'not_found')
    const again = await service.create(ctx, { ...full, email: 'again@example.org' })
    assert.notEqual(again.value.id, value.id)
  })

  it('D27: records every change with time, action, client, request id and old/new values, oldest first', async () => {
    const { service, ctx, client, clock } = await setup()
    const { value } = await service.create({ ...ctx, requestId: 'r1' }, maria)
    clock.advance(1000)
    await service.update({ ...ctx, requestId: 'r2' }, value.id, { last_name: 'Verdi' })
    clock.advance(1000)
    await service.setStatus({ ...ctx, requestId: 'r3' }, value.id, {
      status: 'active',
      reason: 'checked',
    })
    const { value: history } = await service.history(ctx, value.id, {})
    assert.deepEqual(
      history.data.map((e) => [e.action, e.request_id, e.client_id]),
      [
        ['created', 'r1', client.client_id],
        ['updated', 'r2', client.client_id],
        ['status_changed', 'r3', client.client_id],
      ],
    )
    assert.deepEqual(history.data[1]?.changes, [{ field: 'last_name', old: 'Rossi', new: 'Verdi' }])
    assert.deepEqual(history.data[2]?.changes[0], {
      field: 'status',
      old: 'pending',
      new: 'active',
    })
    assert.equal(history.data[1]?.at, '2026-01-01T09:00:01.000Z')
    assert.equal(history.meta.total_count, 3)
    assert.equal(history.links.first, `/v3/beneficiaries/${value.id}/history?page=1&per_page=20`)
  })

  it('D27: history pages like the list and validates its paging parameters', async () => {
    const { service, ctx } = await setup({ limits: { write: 100 } })
    const { value } = await service.create(ctx, maria)
    for (let i = 0; i < 4; i++) await service.update(ctx, value.id, { last_name: `N${i}` })
    const page = await service.history(ctx, value.id, { page: '2', per_page: '2' })
    assert.equal(page.value.data.length, 2)
    assert.equal(page.value.meta.total_pages, 3)
    assert.equal(page.value.links.next, `/v3/beneficiaries/${value.id}/history?page=3&per_page=2`)
    await rejectsWith(service.history(ctx, value.id, { per_page: '0' }), 'validation_failed')
  })

  it('D27: a delete erases personal values from history, and the history then answers 404', async () => {
    const { service, ctx, storage } = await setup()
    const { value } = await service.create(ctx, full)
    await service.remove({ ...ctx, requestId: 'r-del' }, value.id)
    await rejectsWith(service.history(ctx, value.id, {}), 'not_found')
    assert.equal(await storage.beneficiaries.history(value.id, 0, 10), undefined)
  })
})

describe('idempotency (D22)', () => {
  it('D22: the same key and body replay the original 201 and create nothing', async () => {
    const { service, ctx, clock } = await setup()
    const first = await service.create({ ...ctx, idempotencyKey: 'key-1' }, maria)
    clock.advance(60_000)
    const again = await service.create({ ...ctx, idempotencyKey: 'key-1' }, { ...maria })
    assert.equal(again.replayed, true)
    assert.deepEqual(again.value, first.value)
    assert.equal((await service.list(ctx, {})).value.meta.total_count, 1)
  })

  it('D22, D23: a replay carries the ETag of the original 201, even after the record changed', async () => {
    const { service, ctx } = await setup()
    const keyed = { ...ctx, idempotencyKey: 'key-etag' }
    const first = await service.create(keyed, maria)
    assert.match(first.etag ?? '', /^"/)
    assert.equal((await service.create(keyed, maria)).etag, first.etag)
    await service.update(ctx, first.value.id, { last_name: 'Bianchi' })
    const replay = await service.create(keyed, maria)
    assert.equal(replay.replayed, true)
    assert.equal(replay.etag, first.etag)
  })

  it('D22: the same key with a different body is idempotency_key_reused', async () => {
    const { service, ctx } = await setup()
    await service.create({ ...ctx, idempotencyKey: 'key-2' }, maria)
    await rejectsWith(
      service.create({ ...ctx, idempotencyKey: 'key-2' }, { ...maria, last_name: 'Other' }),
      'idempotency_key_reused',
    )
  })

  it('D22: a key is forgotten after 24 hours', async () => {
    const { service, ctx, clock, login } = await setup()
    await service.create({ ...ctx, idempotencyKey: 'key-3' }, maria)
    clock.advance(86_400_000)
    const fresh = { token: (await login()).access_token }
    const later = await service.create({ ...fresh, idempotencyKey: 'key-3' }, maria)
    assert.notEqual(later.replayed, true)
    assert.equal((await service.list(fresh, {})).value.meta.total_count, 2)
  })

  it('D22: ten concurrent identical requests with one key create exactly one record', async () => {
    const { service, ctx } = await setup()
    const results = await Promise.all(
      Array.from({ length: 10 }, () => service.create({ ...ctx, idempotencyKey: 'key-4' }, maria)),
    )
    assert.equal(new Set(results.map((r) => r.value.id)).size, 1)
    assert.equal(results.filter((r) => r.replayed !== true).length, 1)
    assert.equal((await service.list(ctx, {})).value.meta.total_count, 1)
  })

  it('D22: a malformed key is refused', async () => {
    const { service, ctx } = await setup()
    await rejectsWith(
      service.create({ ...ctx, idempotencyKey: 'has space' }, maria),
      'validation_failed',
    )
    await rejectsWith(
      service.create({ ...ctx, idempotencyKey: 'k'.repeat(256) }, maria),
      'validation_failed',
    )
  })
})
