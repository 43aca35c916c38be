import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Static, TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import Format from 'typebox/format'
import { Settings } from 'typebox/system'
import type * as Beneficiary from '../../../core/beneficiary.js'
import type * as Shapes from '../../../core/shapes.js'
import {
  BeneficiaryCreated,
  BeneficiaryDetail,
  BeneficiaryListItem,
  CreateBeneficiaryBody,
  ErrorBody,
  FISCAL_CODE_FORMAT,
  HistoryItem,
  HistoryQueryParams,
  ListQueryParams,
  LoginBody,
  PagedBeneficiaries,
  PagedHistory,
  RefreshBody,
  RefreshResponse,
  StatusBody,
  TokenResponse,
  UpdateBeneficiaryBody,
  parseCreateInput,
  parseUpdateInput,
} from '../../../core/validation/index.js'
import { problemsOf } from './validation-helpers.js'

// Compile-time proof that each response schema describes exactly its type in core/shapes.ts:
// `npm run check` fails when they drift apart. Readonly modifiers are ignored.
type Mutable<T> = T extends readonly (infer U)[]
  ? Mutable<U>[]
  : T extends object
    ? { -readonly [K in keyof T]: Mutable<T[K]> }
    : T
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Matches<S extends TSchema, T> = Same<Static<S>, Mutable<T>>

const SHAPES_MATCH: [
  Matches<typeof BeneficiaryDetail, Beneficiary.BeneficiaryDetail>,
  Matches<typeof BeneficiaryListItem, Beneficiary.BeneficiaryListItem>,
  Matches<typeof BeneficiaryCreated, Beneficiary.BeneficiaryCreated>,
  Matches<typeof PagedBeneficiaries, Shapes.Paged<Beneficiary.BeneficiaryListItem>>,
  Matches<typeof HistoryItem, Shapes.HistoryItem>,
  Matches<typeof PagedHistory, Shapes.Paged<Shapes.HistoryItem>>,
  Matches<typeof TokenResponse, Shapes.TokenResponse>,
  Matches<typeof RefreshResponse, Shapes.RefreshResponse>,
] = [true, true, true, true, true, true, true, true]

const DETAIL: Beneficiary.BeneficiaryDetail = {
  id: 1,
  first_name: 'Mario',
  last_name: 'Rossi',
  email: 'mario@example.it',
  phone: '+390212345678',
  date_of_birth: '1985-12-10',
  fiscal_code: 'RSSMRA85T10A562S',
  address: { street: 'Via Roma 1', city: 'Milano', postal_code: '20121', country: 'IT' },
  status: 'pending',
  metadata: { source: 'web', campaign_id: 3, consent: true },
  created_at: '2025-03-15T10:00:00.000Z',
  updated_at: '2025-03-15T10:00:00.000Z',
}

describe('response schemas', () => {
  it('match the types of core/shapes.ts (checked by the compiler)', () => {
    assert.ok(SHAPES_MATCH.every((match) => match))
  })

  it('accept the detail, list item and create shapes and refuse a wrong one', () => {
    const { id, first_name, last_name, email, phone, status, created_at, updated_at } = DETAIL
    const item = { id, first_name, last_name, email, phone, status, created_at, updated_at }
    const created = { id, first_name, last_name, email, status, created_at }
    assert.equal(Compile(BeneficiaryDetail).Check(DETAIL), true)
    assert.equal(Compile(BeneficiaryDetail).Check({ ...DETAIL, phone: null, address: null }), true)
    assert.equal(Compile(BeneficiaryListItem).Check(item), true)
    assert.equal(Compile(BeneficiaryCreated).Check(created), true)
    assert.equal(Compile(BeneficiaryDetail).Check({ ...DETAIL, status: 'deleted' }), false)
    assert.equal(Compile(BeneficiaryDetail).Check({ ...DETAIL, created_at: 'yesterday' }), false)
  })

  it('accept a paged response, an empty one included (D18)', () => {
    const links = { first: '/v3/beneficiaries?page=1', last: '/v3/beneficiaries?page=1' }
    assert.equal(
      Compile(PagedBeneficiaries).Check({
        data: [],
        meta: { current_page: 1, total_pages: 0, total_count: 0, per_page: 20 },
        links: { ...links, prev: null, next: null },
      }),
      true,
    )
    const entry = {
      at: '2025-03-15T10:00:00.000Z',
      action: 'status_changed',
      client_id: 'c1',
      request_id: 'r1',
      changes: [{ field: 'status', old: 'pending', new: 'active' }],
    }
    assert.equal(Compile(HistoryItem).Check(entry), true)
    assert.equal(Compile(HistoryItem).Check({ ...entry, action: 'archived' }), false)
    assert.equal(
      Compile(PagedHistory).Check({
        data: [entry],
        meta: { current_page: 1, total_pages: 1, total_count: 1, per_page: 20 },
        links: { ...links, prev: null, next: null },
      }),
      true,
    )
  })

  it('accept the token responses and the error body with its optional fields', () => {
    const token = { access_token: 'a', token_type: 'Bearer', expires_in: 3600 }
    assert.equal(Compile(RefreshResponse).Check(token), true)
    assert.equal(
      Compile(TokenResponse).Check({ ...token, refresh_token: 'r', scope: 'read' }),
      true,
    )
    assert.equal(Compile(TokenResponse).Check({ ...token, token_type: 'bearer' }), false)
    const error = { error: 'validation_failed', message: 'Invalid.', code: 422 }
    assert.equal(Compile(ErrorBody).Check(error), true)
    assert.equal(
      Compile(ErrorBody).Check({
        ...error,
        details: [{ field: 'email', message: 'is invalid' }],
        request_id: 'abc',
      }),
      true,
    )
    assert.equal(
      Compile(ErrorBody).Check({
        error: 'rate_limit_exceeded',
        message: 'x',
        code: 429,
        retry_after: 60,
      }),
      true,
    )
    assert.equal(Compile(ErrorBody).Check({ error: 'x', message: 'y' }), false)
  })
})

describe('request schemas', () => {
  it('are plain JSON Schema that the OpenAPI document can embed', () => {
    const create = JSON.parse(JSON.stringify(CreateBeneficiaryBody)) as Record<string, unknown>
    assert.deepEqual(create.required, ['first_name', 'last_name', 'email'])
    assert.equal(create.additionalProperties, false)
    const update = JSON.parse(JSON.stringify(UpdateBeneficiaryBody)) as Record<string, unknown>
    assert.equal(update.required, undefined)
    assert.equal(Format.Has(FISCAL_CODE_FORMAT), true)
    for (const schema of [
      StatusBody,
      LoginBody,
      RefreshBody,
      ListQueryParams,
      HistoryQueryParams,
    ]) {
      assert.equal(schema.type, 'object')
    }
  })

  it('describe what the parsers return (D7, D11)', () => {
    const fields = parseCreateInput(
      { ...DETAIL, id: undefined, status: undefined, created_at: undefined, updated_at: undefined },
      '2025-03-15',
    )
    assert.equal(Compile(CreateBeneficiaryBody).Check(fields), true)
    assert.equal(
      Compile(UpdateBeneficiaryBody).Check(parseUpdateInput({ address: null }, '2025-03-15')),
      true,
    )
  })

  it('leave the TypeBox error limit as it was after collecting every problem (D10)', () => {
    const before = Settings.Get().maxErrors
    const problems = problemsOf(() =>
      parseCreateInput(
        { metadata: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, {}])) },
        '2025-03-15',
      ),
    )
    assert.equal(problems.length, 23)
    assert.equal(Settings.Get().maxErrors, before)
  })
})
