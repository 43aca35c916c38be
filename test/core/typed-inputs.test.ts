import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  WRITABLE_FIELDS,
  type CreateBeneficiaryBody,
  type ListQueryInput,
  type BeneficiaryFields,
  type UpdateBeneficiaryBody,
} from '../../core/index.js'
import {
  CreateBeneficiaryBody as CreateSchema,
  UpdateBeneficiaryBody as UpdateSchema,
} from '../../core/validation/index.js'
import { REQUIRED_FIELDS } from '../../core/beneficiary.js'
import { maria, rejectsWith, setup, unchecked } from './support.js'

/** True when `A` and `B` are the same type, compared both ways. */
type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false

/** The keys of `T` that an object of it must carry. */
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T]

// Compile-time facts: a failure here fails the build, and so `npm test`.
const createKeys: Equal<keyof CreateBeneficiaryBody, keyof BeneficiaryFields> = true
const createRequired: Equal<
  RequiredKeys<CreateBeneficiaryBody>,
  (typeof REQUIRED_FIELDS)[number]
> = true
const updateRequired: Equal<RequiredKeys<UpdateBeneficiaryBody>, never> = true
const phoneClears: Equal<UpdateBeneficiaryBody['phone'], string | null | undefined> = true
const pageAsGiven: Equal<ListQueryInput['page'], number | string | undefined> = true

describe('typed inputs for embedders', () => {
  it('the static types state what the schemas require at run time', () => {
    assert.deepEqual(
      [createKeys, createRequired, updateRequired, phoneClears, pageAsGiven],
      [true, true, true, true, true],
    )
    // The mapped types in core/beneficiary.ts mirror the loop that builds the schemas.
    assert.deepEqual([...(CreateSchema.required ?? [])].sort(), [...REQUIRED_FIELDS].sort())
    assert.deepEqual(UpdateSchema.required ?? [], [])
    assert.deepEqual(Object.keys(CreateSchema.properties), [...WRITABLE_FIELDS])
    assert.deepEqual(Object.keys(UpdateSchema.properties), [...WRITABLE_FIELDS])
  })

  it('a misspelt field in a create body does not compile, and is refused at run time', async () => {
    const { service, ctx } = await setup()
    const error = await rejectsWith<{ details: { field: string }[] }>(
      service.create(ctx, {
        // @ts-expect-error `first_nme` is not a field of CreateBeneficiaryBody.
        first_nme: 'Maria',
        last_name: 'Rossi',
        email: 'maria.rossi@example.org',
      }),
      'validation_failed',
    )
    assert.deepEqual(error.details.map((d) => d.field).sort(), ['first_name', 'first_nme'])
  })

  it('a misspelt field or a null required field in an update does not compile', async () => {
    const { service, ctx } = await setup()
    const { value: created } = await service.create(ctx, maria)
    await rejectsWith(
      // @ts-expect-error `phon` is not a field of UpdateBeneficiaryBody.
      service.update(ctx, created.id, { phon: '+39 333 1234567' }),
      'validation_failed',
    )
    // @ts-expect-error a required field cannot be cleared.
    await rejectsWith(service.update(ctx, created.id, { email: null }), 'validation_failed')
    const { value } = await service.update(ctx, created.id, { phone: '+39 333 1234567' })
    assert.equal(value.phone, '+393331234567')
    const cleared = await service.update(ctx, created.id, { phone: null, metadata: null })
    assert.deepEqual([cleared.value.phone, cleared.value.metadata], [null, {}])
  })

  it('a status or a list parameter the service does not know does not compile', async () => {
    const { service, ctx } = await setup()
    const { value: created } = await service.create(ctx, maria)
    await rejectsWith(
      // @ts-expect-error `archived` is not a status.
      service.setStatus(ctx, created.id, { status: 'archived' }),
      'validation_failed',
    )
    // @ts-expect-error `per_pag` is not a list parameter; unknown names are ignored at run time.
    const { value } = await service.list(ctx, { per_pag: 5 })
    assert.equal(value.meta.per_page, 20)
    // @ts-expect-error `activ` is not a status.
    await rejectsWith(service.list(ctx, { status: 'activ' }), 'validation_failed')
    // An unchecked body still reaches the validator, which names it.
    await rejectsWith(
      service.create(ctx, unchecked({ ...maria, nickname: 'x' })),
      'validation_failed',
    )
  })

  it('list and history take page and per_page as numbers as well as strings', async () => {
    const { service, ctx } = await setup()
    for (let i = 0; i < 5; i++) {
      await service.create(ctx, { ...maria, email: `maria${i}@example.org` })
    }
    const byNumber = await service.list(ctx, { page: 2, per_page: 2 })
    const byString = await service.list(ctx, { page: '2', per_page: '2' })
    assert.deepEqual(byNumber.value, byString.value)
    assert.deepEqual(
      byNumber.value.data.map((item) => item.id),
      [3, 4],
    )
    assert.equal(byNumber.value.links.next, '/v3/beneficiaries?page=3&per_page=2')
    const history = await service.history(ctx, 1, { page: 1, per_page: 1 })
    assert.equal(history.value.meta.total_count, 1)
    assert.equal((await service.list(ctx)).value.meta.total_count, 5)
  })

  it('a number that is not a whole one in range is refused, naming the parameter', async () => {
    const { service, ctx } = await setup()
    const error = await rejectsWith<{ details: { field: string }[] }>(
      service.list(ctx, { page: 1.5, per_page: 101 }),
      'validation_failed',
    )
    assert.deepEqual(error.details.map((d) => d.field).sort(), ['page', 'per_page'])
    for (const page of [Number.NaN, Infinity, 0, -1]) {
      await rejectsWith(service.list(ctx, { page }), 'validation_failed')
    }
    const { value: created } = await service.create(ctx, maria)
    await rejectsWith(service.history(ctx, created.id, { per_page: 0.5 }), 'validation_failed')
  })
})
