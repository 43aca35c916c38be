import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { BadRequestError } from '../../../core/errors.js'
import { parseLoginInput, parseRefreshInput } from '../../../core/validation/index.js'
import { fieldsOf } from './validation-helpers.js'

describe('parseLoginInput (D2)', () => {
  it('returns the credentials untouched', () => {
    assert.deepEqual(parseLoginInput({ client_id: ' id ', client_secret: 's3cr3t ' }), {
      client_id: ' id ',
      client_secret: 's3cr3t ',
    })
  })

  it('ignores unknown fields such as grant_type', () => {
    assert.deepEqual(
      parseLoginInput({ client_id: 'id', client_secret: 's', grant_type: 'client_credentials' }),
      { client_id: 'id', client_secret: 's' },
    )
  })

  it('parses scope into a list without duplicates', () => {
    assert.deepEqual(
      parseLoginInput({ client_id: 'id', client_secret: 's', scope: 'read' }).scope,
      ['read'],
    )
    assert.deepEqual(
      parseLoginInput({ client_id: 'id', client_secret: 's', scope: ' read  write read ' }).scope,
      ['read', 'write'],
    )
  })

  it('refuses a blank or malformed scope', () => {
    for (const scope of ['', '   ', 'read\twrite', 'read,"write"', 42]) {
      assert.deepEqual(
        fieldsOf(() => parseLoginInput({ client_id: 'id', client_secret: 's', scope })),
        ['scope'],
        String(scope),
      )
    }
  })

  it('names each missing, empty or mistyped credential', () => {
    assert.deepEqual(
      fieldsOf(() => parseLoginInput({})),
      ['client_id', 'client_secret'],
    )
    assert.deepEqual(
      fieldsOf(() => parseLoginInput({ client_id: '', client_secret: 7 })),
      ['client_id', 'client_secret'],
    )
    assert.deepEqual(
      fieldsOf(() => parseLoginInput({ client_id: 'x'.repeat(257), client_secret: 's' })),
      ['client_id'],
    )
  })

  it('throws bad_request for a body that is not an object (D12)', () => {
    for (const body of [null, 'client_id=x', []]) {
      assert.throws(() => parseLoginInput(body), BadRequestError)
    }
  })
})

describe('parseRefreshInput (D4)', () => {
  it('accepts a refresh token alone', () => {
    assert.deepEqual(parseRefreshInput({ refresh_token: 'abc' }), { refresh_token: 'abc' })
  })

  it('accepts a refresh token with client credentials', () => {
    assert.deepEqual(
      parseRefreshInput({ refresh_token: 'abc', client_id: 'id', client_secret: 's', other: 1 }),
      { refresh_token: 'abc', client_id: 'id', client_secret: 's' },
    )
  })

  it('requires client_id and client_secret together', () => {
    assert.deepEqual(
      fieldsOf(() => parseRefreshInput({ refresh_token: 'a', client_id: 'id' })),
      ['client_secret'],
    )
    assert.deepEqual(
      fieldsOf(() => parseRefreshInput({ refresh_token: 'a', client_secret: 's' })),
      ['client_id'],
    )
  })

  it('names a missing, empty or mistyped refresh token', () => {
    for (const body of [{}, { refresh_token: '' }, { refresh_token: 5 }, { refresh_token: null }]) {
      assert.deepEqual(
        fieldsOf(() => parseRefreshInput(body)),
        ['refresh_token'],
      )
    }
  })

  it('throws bad_request for a body that is not an object (D12)', () => {
    assert.throws(() => parseRefreshInput('token'), BadRequestError)
  })
})
