import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { BadRequestError } from '../../../core/errors.js'
import { parseStatusInput } from '../../../core/validation/index.js'
import { fieldsOf } from './validation-helpers.js'

describe('parseStatusInput (D14)', () => {
  it('accepts active and inactive, with or without a reason', () => {
    assert.deepEqual(parseStatusInput({ status: 'active' }), { status: 'active' })
    assert.deepEqual(parseStatusInput({ status: 'inactive', reason: ' moved abroad ' }), {
      status: 'inactive',
      reason: 'moved abroad',
    })
  })

  it('lets pending through for the core to refuse as invalid_transition', () => {
    assert.deepEqual(parseStatusInput({ status: 'pending' }), { status: 'pending' })
  })

  it('treats an undefined reason from an in-process caller as no reason', () => {
    assert.deepEqual(parseStatusInput({ status: 'active', reason: undefined }), {
      status: 'active',
    })
  })

  it('treats a blank reason as no reason', () => {
    assert.deepEqual(parseStatusInput({ status: 'active', reason: '   ' }), { status: 'active' })
  })

  it('D8, D10: refuses a reason with control, invisible or formatting characters, naming it', () => {
    for (const reason of [
      'moved\u202eabroad',
      'moved\u200b',
      'mo\ufeffved',
      'moved\uffff',
      'a\u{e0041}',
      'a\u0007b',
    ]) {
      assert.deepEqual(
        fieldsOf(() => parseStatusInput({ status: 'inactive', reason })),
        ['reason'],
        JSON.stringify(reason),
      )
    }
    assert.equal(
      parseStatusInput({ status: 'inactive', reason: ' trasferito all\u2019estero ' }).reason,
      'trasferito all\u2019estero',
    )
  })

  it('accepts a reason of 500 characters and refuses 501', () => {
    assert.equal(
      parseStatusInput({ status: 'active', reason: 'r'.repeat(500) }).reason?.length,
      500,
    )
    assert.deepEqual(
      fieldsOf(() => parseStatusInput({ status: 'active', reason: 'r'.repeat(501) })),
      ['reason'],
    )
  })

  it('refuses a missing, unknown or mistyped status as validation_failed', () => {
    for (const body of [
      {},
      { status: 'deleted' },
      { status: 'ACTIVE' },
      { status: 1 },
      { status: null },
    ]) {
      assert.deepEqual(
        fieldsOf(() => parseStatusInput(body)),
        ['status'],
        JSON.stringify(body),
      )
    }
  })

  it('refuses a reason that is not a string or holds control characters', () => {
    assert.deepEqual(
      fieldsOf(() => parseStatusInput({ status: 'active', reason: 5 })),
      ['reason'],
    )
    assert.deepEqual(
      fieldsOf(() => parseStatusInput({ status: 'active', reason: 'a\u0000b' })),
      ['reason'],
    )
  })

  it('names unknown fields, every problem at once (D9, D10)', () => {
    assert.deepEqual(
      fieldsOf(() => parseStatusInput({ state: 'active', reason: 1, id: 3 })),
      ['id', 'reason', 'state', 'status'],
    )
  })

  it('throws bad_request for a body that is not an object (D12)', () => {
    for (const body of [null, ['active'], 'active']) {
      assert.throws(() => parseStatusInput(body), BadRequestError)
    }
  })
})
