import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { BadRequestError } from '../../../core/errors.js'
import { parseUpdateInput } from '../../../core/validation/index.js'
import { fieldsOf, withCheckCharacter } from './validation-helpers.js'

const TODAY = '2025-03-15'
const ADDRESS = { street: 'Via Roma 1', city: 'Milano', postal_code: '20121', country: 'IT' }

function update(body: unknown) {
  return parseUpdateInput(body, TODAY)
}

describe('parseUpdateInput (D11)', () => {
  it('accepts an empty body as a patch that changes nothing', () => {
    assert.deepEqual(update({}), {})
  })

  it('returns only the fields the body named, normalised', () => {
    assert.deepEqual(update({ last_name: ' Bianchi ', phone: '333 123 4567' }), {
      last_name: 'Bianchi',
      phone: '3331234567',
    })
  })

  it('accepts every field', () => {
    assert.deepEqual(
      update({
        first_name: 'Anna',
        last_name: 'Bianchi',
        email: 'anna@example.it',
        phone: '+39 333 1234567',
        date_of_birth: '1985-12-10',
        fiscal_code: withCheckCharacter('RSSMRA85T50A562').toLowerCase(),
        address: { ...ADDRESS, country: 'fr' },
        metadata: { source: 'import' },
      }),
      {
        first_name: 'Anna',
        last_name: 'Bianchi',
        email: 'anna@example.it',
        phone: '+393331234567',
        date_of_birth: '1985-12-10',
        fiscal_code: withCheckCharacter('RSSMRA85T50A562'),
        address: { ...ADDRESS, country: 'FR' },
        metadata: { source: 'import' },
      },
    )
  })

  it('clears optional fields given as null: address to null, metadata to {}', () => {
    assert.deepEqual(
      update({
        phone: null,
        date_of_birth: null,
        fiscal_code: null,
        address: null,
        metadata: null,
      }),
      { phone: null, date_of_birth: null, fiscal_code: null, address: null, metadata: {} },
    )
  })

  it('refuses null for first_name, last_name and email', () => {
    assert.deepEqual(
      fieldsOf(() => update({ first_name: null, last_name: null, email: null })),
      ['email', 'first_name', 'last_name'],
    )
  })

  it('ignores properties an in-process caller left undefined', () => {
    assert.deepEqual(update({ phone: undefined, first_name: 'Anna' }), { first_name: 'Anna' })
  })

  it('applies the field rules of create (D8)', () => {
    assert.deepEqual(
      fieldsOf(() =>
        update({
          first_name: '',
          email: 'nope',
          phone: '1',
          date_of_birth: '2099-01-01',
          fiscal_code: 'RSSMRA85T10A562T',
          address: { street: 'x' },
          metadata: { a: {} },
        }),
      ),
      [
        'address.city',
        'address.country',
        'address.postal_code',
        'date_of_birth',
        'email',
        'first_name',
        'fiscal_code',
        'metadata.a',
        'phone',
      ],
    )
  })

  it('replaces the address as a whole, so a partial address is refused', () => {
    assert.deepEqual(
      fieldsOf(() => update({ address: { city: 'Roma' } })),
      ['address.country', 'address.postal_code', 'address.street'],
    )
  })

  it('refuses address and metadata of the wrong type', () => {
    assert.deepEqual(
      fieldsOf(() => update({ address: 'Roma', metadata: [], date_of_birth: 5 })),
      ['address', 'date_of_birth', 'metadata'],
    )
  })

  it('checks fiscal_code against date_of_birth when the body carries both (D8)', () => {
    assert.deepEqual(
      fieldsOf(() => update({ fiscal_code: 'RSSMRA85T10A562S', date_of_birth: '1985-12-11' })),
      ['fiscal_code'],
    )
    assert.equal(update({ fiscal_code: 'RSSMRA85T10A562S' }).fiscal_code, 'RSSMRA85T10A562S')
  })

  it('refuses read-only and unknown fields (D9)', () => {
    assert.deepEqual(
      fieldsOf(() => update({ id: 2, status: 'active', nickname: 'x' })),
      ['id', 'nickname', 'status'],
    )
  })

  it('throws bad_request for a body that is not an object (D12)', () => {
    for (const body of [null, [], 'x', 1]) {
      assert.throws(() => update(body), BadRequestError)
    }
  })
})
