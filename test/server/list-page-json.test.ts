import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { BENEFICIARY_STATUSES } from '../../core/beneficiary.js'
import type { BeneficiaryListItem, Paged } from '../../core/shapes.js'
import { listPageJson } from '../../server/list-page-json.js'

/** Any string, with the characters JSON escapes (quotes, backslashes, controls, lone surrogates). */
const anyText = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({
    unit: fc.constantFrom('"', '\\', '\n', '\u0000', '\u001f', '\ud800', '\udfff', 'é'),
  }),
  fc.string({ unit: 'grapheme' }),
)

const item: fc.Arbitrary<BeneficiaryListItem> = fc.record({
  id: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  first_name: anyText,
  last_name: anyText,
  email: anyText,
  phone: fc.option(anyText, { nil: null }),
  status: fc.constantFrom(...BENEFICIARY_STATUSES),
  created_at: anyText,
  updated_at: anyText,
})

const page: fc.Arbitrary<Paged<BeneficiaryListItem>> = fc.record({
  data: fc.array(item, { maxLength: 25 }),
  meta: fc.record({
    current_page: fc.nat(),
    total_pages: fc.nat(),
    total_count: fc.nat(),
    per_page: fc.integer({ min: 1, max: 100 }),
  }),
  links: fc.record({
    first: anyText,
    last: anyText,
    prev: fc.option(anyText, { nil: null }),
    next: fc.option(anyText, { nil: null }),
  }),
})

describe('listPageJson', () => {
  it('writes exactly what JSON.stringify writes, for any page', () => {
    fc.assert(
      fc.property(page, (value) => {
        assert.equal(listPageJson(value), JSON.stringify(value))
      }),
      { numRuns: 2_000 },
    )
  })

  it('writes an empty page', () => {
    const empty: Paged<BeneficiaryListItem> = {
      data: [],
      meta: { current_page: 1, total_pages: 0, total_count: 0, per_page: 20 },
      links: { first: '/v3/b?page=1', last: '/v3/b?page=1', prev: null, next: null },
    }
    assert.equal(listPageJson(empty), JSON.stringify(empty))
  })
})
