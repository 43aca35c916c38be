import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { QueryInput } from '../../core/index.js'
import { rejectsWith, setup, type Setup } from './support.js'

const people = [
  ['Mario', 'Rossi'],
  ['Anna', 'Nguyễn'],
  ['Luca', "D'Angelo"],
  ['Marta', 'Rossini'],
  ['Giorgio', 'Bianchi'],
] as const

async function seeded(): Promise<Setup & { ids: number[] }> {
  const context = await setup({
    limits: { write: 1000, standard: 1000 },
    accessTokenTtlSeconds: 30 * 86_400,
  })
  const ids: number[] = []
  for (const [i, [first_name, last_name]] of people.entries()) {
    const { value } = await context.service.create(context.ctx, {
      first_name,
      last_name,
      email: `p${i}@example.org`,
    })
    ids.push(value.id)
    context.clock.advance(86_400_000)
  }
  return { ...context, ids }
}

describe('listing (D15–D18)', () => {
  it('returns the list shape of specification 4.3 with list items only', async () => {
    const { service, ctx } = await seeded()
    const { value } = await service.list(ctx, {})
    assert.deepEqual(Object.keys(value).sort(), ['data', 'links', 'meta'])
    assert.deepEqual(Object.keys(value.data[0]!).sort(), [
      'created_at',
      'email',
      'first_name',
      'id',
      'last_name',
      'phone',
      'status',
      'updated_at',
    ])
    assert.deepEqual(value.meta, { current_page: 1, total_pages: 1, total_count: 5, per_page: 20 })
    assert.deepEqual(value.links, {
      first: '/v3/beneficiaries?page=1&per_page=20',
      last: '/v3/beneficiaries?page=1&per_page=20',
      prev: null,
      next: null,
    })
  })

  it('D15: orders by ascending id by default and sorts on request with id as tie-breaker', async () => {
    const { service, ctx, ids } = await seeded()
    assert.deepEqual(
      (await service.list(ctx, {})).value.data.map((b) => b.id),
      ids,
    )
    const byName = await service.list(ctx, { sort: 'last_name' })
    assert.deepEqual(
      byName.value.data.map((b) => b.last_name),
      ['Bianchi', "D'Angelo", 'Nguyễn', 'Rossi', 'Rossini'],
    )
    const newest = await service.list(ctx, { sort: '-created_at', per_page: '2' })
    assert.deepEqual(
      newest.value.data.map((b) => b.id),
      [ids[4], ids[3]],
    )
    assert.equal(newest.value.links.next, '/v3/beneficiaries?page=2&per_page=2&sort=-created_at')
  })

  it('D16: search matches word prefixes of names, every word, ignoring case and accents', async () => {
    const { service, ctx } = await seeded()
    const names = async (search: string) =>
      (await service.list(ctx, { search })).value.data.map((b) => `${b.first_name} ${b.last_name}`)
    assert.deepEqual(await names('mario ros'), ['Mario Rossi'])
    assert.deepEqual(await names('nguyen'), ['Anna Nguyễn'])
    assert.deepEqual(await names("d'ang"), ["Luca D'Angelo"])
    assert.deepEqual(await names('ROSS'), ['Mario Rossi', 'Marta Rossini'])
    assert.deepEqual(await names('ossi'), [])
    for (const hostile of ['"', '*', 'NEAR', '%', '_', "'; DROP TABLE beneficiaries; --"]) {
      assert.deepEqual(await names(hostile), [], hostile)
    }
  })

  it('D17: created_from and created_to are inclusive UTC days', async () => {
    const { service, ctx } = await seeded()
    const { value } = await service.list(ctx, {
      created_from: '2026-01-02',
      created_to: '2026-01-03',
    })
    assert.deepEqual(
      value.data.map((b) => b.created_at),
      ['2026-01-02T09:00:00.000Z', '2026-01-03T09:00:00.000Z'],
    )
    assert.equal(
      value.links.first,
      '/v3/beneficiaries?page=1&per_page=20&created_from=2026-01-02&created_to=2026-01-03',
    )
  })

  it('D17: an invalid date or created_from after created_to is 422 naming the parameter', async () => {
    const { service, ctx } = await seeded()
    const bad = await rejectsWith<{ details: { field: string }[] }>(
      service.list(ctx, { created_from: '2026-02-30' }),
      'validation_failed',
    )
    assert.deepEqual(
      bad.details.map((d) => d.field),
      ['created_from'],
    )
    await rejectsWith(
      service.list(ctx, { created_from: '2026-01-05', created_to: '2026-01-04' }),
      'validation_failed',
    )
  })

  it('D18: links carry every filter and per_page in a fixed order, URL-encoded', async () => {
    const { service, ctx } = await seeded()
    const query: QueryInput = {
      status: 'pending',
      search: 'ma ro',
      per_page: '1',
      page: '2',
      created_to: '2026-12-31',
      unknown: 'ignored',
    }
    const { value } = await service.list(ctx, query)
    assert.equal(value.meta.total_count, 2)
    assert.deepEqual(value.links, {
      first:
        '/v3/beneficiaries?page=1&per_page=1&search=ma%20ro&status=pending&created_to=2026-12-31',
      last: '/v3/beneficiaries?page=2&per_page=1&search=ma%20ro&status=pending&created_to=2026-12-31',
      prev: '/v3/beneficiaries?page=1&per_page=1&search=ma%20ro&status=pending&created_to=2026-12-31',
      next: null,
    })
  })

  it('D18: a page past the end is 200 with empty data; no results give total_pages 0 and links to page 1', async () => {
    const { service, ctx } = await seeded()
    const past = await service.list(ctx, { page: '9' })
    assert.deepEqual(past.value.data, [])
    assert.equal(past.value.meta.total_count, 5)
    const none = await service.list(ctx, { status: 'active' })
    assert.equal(none.value.meta.total_pages, 0)
    assert.equal(none.value.links.first, '/v3/beneficiaries?page=1&per_page=20&status=active')
    assert.equal(none.value.links.last, '/v3/beneficiaries?page=1&per_page=20&status=active')
  })

  it('D18: page and per_page out of range are 422 with every parameter named, never clamped', async () => {
    const { service, ctx } = await seeded()
    const error = await rejectsWith<{ details: { field: string }[] }>(
      service.list(ctx, {
        page: '0',
        per_page: '101',
        status: 'gone',
        sort: 'email',
      } as QueryInput),
      'validation_failed',
    )
    assert.deepEqual(error.details.map((d) => d.field).sort(), [
      'page',
      'per_page',
      'sort',
      'status',
    ])
  })

  it('uses the configured base path in links', async () => {
    const context = await setup({ basePath: '/api/v3/' })
    const { value } = await context.service.list(context.ctx, {})
    assert.equal(value.links.first, '/api/v3/beneficiaries?page=1&per_page=20')
  })
})
