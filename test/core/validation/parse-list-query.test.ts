import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { QueryInput } from '../../../core/index.js'
import {
  parseHistoryQuery as parseHistory,
  parseListQuery as parseList,
} from '../../../core/validation/index.js'
import { fieldsOf } from './validation-helpers.js'

// The parsers as a server calls them: raw strings under any name.
const parseListQuery = (query: QueryInput) => parseList(query)
const parseHistoryQuery = (query: QueryInput) => parseHistory(query)

describe('parseListQuery: defaults (D15, D18)', () => {
  it('defaults to page 1, 20 per page, ascending id, no filters', () => {
    assert.deepEqual(parseListQuery({}), { page: 1, perPage: 20, sort: 'id', descending: false })
  })

  it('ignores unknown parameters and undefined values', () => {
    assert.deepEqual(parseListQuery({ foo: 'bar', limit: '5', page: undefined }), {
      page: 1,
      perPage: 20,
      sort: 'id',
      descending: false,
    })
  })

  it('reads only own properties of the query object', () => {
    const query = Object.create({ page: 'abc' }) as Record<string, string>
    assert.equal(parseListQuery(query).page, 1)
  })

  it('returns every parameter, decoded', () => {
    assert.deepEqual(
      parseListQuery({
        page: '3',
        per_page: '50',
        status: 'inactive',
        created_from: '2024-01-01',
        created_to: '2024-12-31',
        search: '  mario ros  ',
        sort: '-last_name',
      }),
      {
        page: 3,
        perPage: 50,
        status: 'inactive',
        createdFrom: '2024-01-01',
        createdTo: '2024-12-31',
        search: 'mario ros',
        sort: 'last_name',
        descending: true,
        sortParam: '-last_name',
      },
    )
  })
})

describe('parseListQuery: paging (D18)', () => {
  it('accepts the bounds of page and per_page', () => {
    assert.equal(parseListQuery({ page: '1' }).page, 1)
    assert.equal(parseListQuery({ page: '10000000' }).page, 10_000_000)
    assert.equal(parseListQuery({ page: '007' }).page, 7)
    assert.equal(parseListQuery({ per_page: '1' }).perPage, 1)
    assert.equal(parseListQuery({ per_page: '100' }).perPage, 100)
  })

  it('refuses page 0, page past 10,000,000, per_page 0 and per_page 101 without clamping', () => {
    assert.deepEqual(
      fieldsOf(() => parseListQuery({ page: '0' })),
      ['page'],
    )
    assert.deepEqual(
      fieldsOf(() => parseListQuery({ page: '10000001' })),
      ['page'],
    )
    assert.deepEqual(
      fieldsOf(() => parseListQuery({ page: '99999999999999999999999' })),
      ['page'],
    )
    assert.deepEqual(
      fieldsOf(() => parseListQuery({ per_page: '0' })),
      ['per_page'],
    )
    assert.deepEqual(
      fieldsOf(() => parseListQuery({ per_page: '101' })),
      ['per_page'],
    )
  })

  it('accepts only plain digits', () => {
    for (const value of ['abc', '1.5', '1e3', ' 2', '2 ', '+3', '-1', '', '0x10', '١']) {
      assert.deepEqual(
        fieldsOf(() => parseListQuery({ page: value })),
        ['page'],
        value,
      )
      assert.deepEqual(
        fieldsOf(() => parseListQuery({ per_page: value })),
        ['per_page'],
        value,
      )
    }
  })
  it('takes numbers from an embedder: whole ones within the bounds', () => {
    assert.deepEqual(parseList({ page: 3, per_page: 50 }), {
      page: 3,
      perPage: 50,
      sort: 'id',
      descending: false,
    })
    assert.equal(parseList({ page: 1e3 }).page, 1000)
    assert.deepEqual(parseHistory({ page: 2, per_page: 100 }), { page: 2, perPage: 100 })
    for (const value of [0, -1, 1.5, Number.NaN, Infinity, 10_000_001, 2 ** 53]) {
      assert.deepEqual(
        fieldsOf(() => parseList({ page: value })),
        ['page'],
        String(value),
      )
    }
    assert.deepEqual(
      fieldsOf(() => parseList({ per_page: 101 })),
      ['per_page'],
    )
    // From JavaScript, anything else is named too rather than thrown as a TypeError.
    assert.deepEqual(
      fieldsOf(() => parseList({ page: ['2'], search: 5 } as never)),
      ['page', 'search'],
    )
  })
})

describe('parseListQuery: filters', () => {
  it('accepts each status and refuses anything else', () => {
    for (const status of ['active', 'inactive', 'pending'] as const) {
      assert.equal(parseListQuery({ status }).status, status)
    }
    for (const status of ['', 'Active', 'deleted']) {
      assert.deepEqual(
        fieldsOf(() => parseListQuery({ status })),
        ['status'],
        status,
      )
    }
  })

  it('accepts real calendar dates, leap days included (D17)', () => {
    const params = parseListQuery({ created_from: '2024-02-29', created_to: '2024-02-29' })
    assert.equal(params.createdFrom, '2024-02-29')
    assert.equal(params.createdTo, '2024-02-29')
  })

  it('refuses dates that do not exist or are not written YYYY-MM-DD, naming each (D17)', () => {
    for (const date of [
      '2023-02-30',
      '2023-02-29',
      '2023-13-01',
      '2023-1-1',
      '01/02/2023',
      '',
      'today',
    ]) {
      assert.deepEqual(
        fieldsOf(() => parseListQuery({ created_from: date })),
        ['created_from'],
        date,
      )
      assert.deepEqual(
        fieldsOf(() => parseListQuery({ created_to: date })),
        ['created_to'],
        date,
      )
    }
  })

  it('refuses created_from after created_to, naming created_from (D17)', () => {
    assert.deepEqual(
      fieldsOf(() => parseListQuery({ created_from: '2024-03-02', created_to: '2024-03-01' })),
      ['created_from'],
    )
  })

  it('does not compare the dates when one of them is invalid', () => {
    assert.deepEqual(
      fieldsOf(() => parseListQuery({ created_from: '2024-03-02', created_to: '2024-02-30' })),
      ['created_to'],
    )
  })
})

describe('parseListQuery: search (D16)', () => {
  it('trims and NFC-normalises the search', () => {
    assert.equal(parseListQuery({ search: ' Nguye\u0302\u0303n ' }).search, 'Nguy\u1ec5n')
  })

  it('treats an empty or blank search as absent', () => {
    assert.equal('search' in parseListQuery({ search: '' }), false)
    assert.equal('search' in parseListQuery({ search: '   ' }), false)
  })

  it('accepts 200 characters after trimming and refuses 201', () => {
    assert.equal(parseListQuery({ search: ` ${'a'.repeat(200)} ` }).search?.length, 200)
    assert.deepEqual(
      fieldsOf(() => parseListQuery({ search: 'a'.repeat(201) })),
      ['search'],
    )
  })

  it('refuses control characters', () => {
    assert.deepEqual(
      fieldsOf(() => parseListQuery({ search: 'mario\u0000' })),
      ['search'],
    )
  })
})

describe('parseListQuery: sort (D15)', () => {
  it('accepts each sort field, ascending or descending, and keeps the parameter for links', () => {
    for (const field of ['id', 'created_at', 'updated_at', 'last_name', 'first_name'] as const) {
      assert.deepEqual(parseListQuery({ sort: field }), {
        page: 1,
        perPage: 20,
        sort: field,
        descending: false,
        sortParam: field,
      })
      const descending = parseListQuery({ sort: `-${field}` })
      assert.equal(descending.sort, field)
      assert.equal(descending.descending, true)
      assert.equal(descending.sortParam, `-${field}`)
    }
  })

  it('refuses any other sort', () => {
    for (const sort of ['', 'email', '+id', '--id', 'ID', 'id,-created_at', ' id', 'status']) {
      assert.deepEqual(
        fieldsOf(() => parseListQuery({ sort })),
        ['sort'],
        sort,
      )
    }
  })
})

describe('parseListQuery: every problem at once (D10)', () => {
  it('names every bad parameter by its own name', () => {
    assert.deepEqual(
      fieldsOf(() =>
        parseListQuery({
          page: '0',
          per_page: '101',
          status: 'gone',
          created_from: '2023-02-30',
          created_to: 'x',
          search: 's'.repeat(201),
          sort: 'name',
        }),
      ),
      ['created_from', 'created_to', 'page', 'per_page', 'search', 'sort', 'status'],
    )
  })
})

describe('parseHistoryQuery (D18, D27)', () => {
  it('defaults to page 1, 20 per page, and ignores other parameters', () => {
    assert.deepEqual(parseHistoryQuery({ sort: 'nonsense', status: 'x' }), { page: 1, perPage: 20 })
  })

  it('decodes page and per_page', () => {
    assert.deepEqual(parseHistoryQuery({ page: '2', per_page: '100' }), { page: 2, perPage: 100 })
  })

  it('refuses bad page and per_page values together', () => {
    assert.deepEqual(
      fieldsOf(() => parseHistoryQuery({ page: 'abc', per_page: '0' })),
      ['page', 'per_page'],
    )
  })
})
