import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { WRITABLE_FIELDS, type BeneficiaryFields } from '../../core/index.js'
import { maria, setup, unchecked } from './support.js'

// Two valid values of every writable field. The type lists every field of the one definition, so
// a new field fails to compile here until it has values, and then the tests below cover it.
const VALUES: { readonly [K in keyof BeneficiaryFields]: readonly [unknown, unknown] } = {
  first_name: ['Maria', 'Mariella'],
  last_name: ['Rossi', 'Russo'],
  email: ['maria.rossi@example.org', 'maria.russo@example.org'],
  phone: ['+390212345678', '+390298765432'],
  date_of_birth: ['1985-12-10', '1990-01-02'],
  fiscal_code: ['RSSMRA85T50A562W', 'RSSMRA85T50F205V'],
  address: [
    { street: 'Via Roma 1', city: 'Milano', postal_code: '20121', country: 'IT' },
    { street: 'Rue de Rivoli 2', city: 'Paris', postal_code: '75001', country: 'FR' },
  ],
  metadata: [{ source: 'paper' }, { source: 'web', campaign_id: 7 }],
}

describe('every writable field', () => {
  it('is stored by a create and read back by a get', async () => {
    const { service, ctx } = await setup()
    const body = Object.fromEntries(WRITABLE_FIELDS.map((field) => [field, VALUES[field][0]]))
    const created = await service.create(ctx, unchecked(body))
    const { value } = await service.get(ctx, created.value.id)
    for (const field of WRITABLE_FIELDS) assert.deepEqual(value[field], VALUES[field][0], field)
  })

  for (const field of WRITABLE_FIELDS) {
    it(`${field}: a PUT naming it alone changes it, and records the change in the history`, async () => {
      const { service, ctx } = await setup()
      const first = Object.fromEntries(WRITABLE_FIELDS.map((name) => [name, VALUES[name][0]]))
      // The fiscal code encodes the birth date: a new date alone needs a record without one.
      if (field === 'date_of_birth') first['fiscal_code'] = null
      const created = await service.create(ctx, { ...maria, ...first })
      const second = VALUES[field][1]
      const { value } = await service.update(ctx, created.value.id, { [field]: second })
      assert.deepEqual(value[field], second)
      const history = await service.history(ctx, created.value.id, {})
      const change = history.value.data.at(-1)?.changes.find((c) => c.field === field)
      assert.deepEqual(change, { field, old: VALUES[field][0], new: second })
    })
  }
})
