import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { CurrentStorage } from './contract-harness.js'
import {
  SECOND,
  T0,
  claim,
  createdEntry,
  createdRecord,
  fullBeneficiary,
  historyEntry,
  isFiscalCodeConflict,
  listQuery,
  newBeneficiary,
} from './storage-fixtures.js'

/** Registers the Idempotency-Key claims of `BeneficiaryStore.create` (D22). */
export function describeBeneficiaryIdempotencyContract(storage: CurrentStorage): void {
  const store = () => storage().beneficiaries

  describe('beneficiaries: idempotency claims (D22)', () => {
    it('answers a second create with the same client and key with the claim, writing nothing (D22)', async () => {
      const input = newBeneficiary()
      const first = createdRecord(await store().create(input, createdEntry(input), claim()))

      const again = newBeneficiary({ first_name: 'Luigi', created_at: T0 + SECOND })
      const outcome = await store().create(
        again,
        createdEntry(again),
        claim({ fingerprint: 'fingerprint-1', now: T0 + SECOND }),
      )
      assert.deepEqual(outcome, {
        kind: 'claimed',
        fingerprint: 'fingerprint-1',
        beneficiaryId: first.id,
        createdAt: T0,
      })
      const page = await store().list(listQuery())
      assert.equal(page.total, 1)
      assert.deepEqual(
        page.items.map((item) => item.id),
        [first.id],
      )
      assert.equal((await store().history(first.id, 0, 10))?.total, 1)
    })

    it('returns the claim’s own fingerprint when the new request’s differs (D22)', async () => {
      const input = newBeneficiary()
      const first = createdRecord(await store().create(input, createdEntry(input), claim()))
      const outcome = await store().create(
        input,
        createdEntry(input),
        claim({ fingerprint: 'another-body', now: T0 + SECOND }),
      )
      assert.deepEqual(outcome, {
        kind: 'claimed',
        fingerprint: 'fingerprint-1',
        beneficiaryId: first.id,
        createdAt: T0,
      })
      assert.equal((await store().list(listQuery())).total, 1)
    })

    it('answers a replay with the claim even though its fiscal code is now taken (D22)', async () => {
      const input = fullBeneficiary({ created_at: T0 })
      const first = createdRecord(await store().create(input, createdEntry(input), claim()))
      const outcome = await store().create(input, createdEntry(input), claim({ now: T0 + SECOND }))
      assert.equal(outcome.kind, 'claimed')
      assert.equal(outcome.kind === 'claimed' && outcome.beneficiaryId, first.id)
    })

    it('creates again for the same key from another client (D22)', async () => {
      const input = newBeneficiary()
      const first = createdRecord(await store().create(input, createdEntry(input), claim()))
      const other = createdRecord(
        await store().create(input, createdEntry(input), claim({ clientId: 'client-2' })),
      )
      assert.notEqual(other.id, first.id)
      assert.equal((await store().list(listQuery())).total, 2)
    })

    it('tells client and key apart even when their concatenations are equal (D22)', async () => {
      const input = newBeneficiary()
      await store().create(input, createdEntry(input), claim({ clientId: 'ab', key: 'c' }))
      const outcome = await store().create(
        input,
        createdEntry(input),
        claim({ clientId: 'a', key: 'bc' }),
      )
      assert.equal(outcome.kind, 'created')
    })

    it('creates again for another key from the same client (D22)', async () => {
      const input = newBeneficiary()
      await store().create(input, createdEntry(input), claim())
      const outcome = await store().create(input, createdEntry(input), claim({ key: 'key-2' }))
      assert.equal(outcome.kind, 'created')
    })

    it('honours a claim until just before it expires, and ignores it from then on (D22)', async () => {
      const input = newBeneficiary()
      const expiresAt = T0 + 86_400 * SECOND
      const first = createdRecord(
        await store().create(input, createdEntry(input), claim({ expiresAt })),
      )

      const late = await store().create(
        input,
        createdEntry(input),
        claim({ expiresAt: expiresAt + 86_400 * SECOND, now: expiresAt - 1 }),
      )
      assert.equal(late.kind, 'claimed')

      const renewed = newBeneficiary({ created_at: expiresAt, updated_at: expiresAt })
      const second = createdRecord(
        await store().create(
          renewed,
          createdEntry(renewed),
          claim({ fingerprint: 'fingerprint-2', expiresAt: expiresAt * 2, now: expiresAt }),
        ),
      )
      assert.notEqual(second.id, first.id)
      assert.equal((await store().list(listQuery())).total, 2)

      const replay = await store().create(
        renewed,
        createdEntry(renewed),
        claim({ expiresAt: expiresAt * 3, now: expiresAt + SECOND }),
      )
      assert.deepEqual(replay, {
        kind: 'claimed',
        fingerprint: 'fingerprint-2',
        beneficiaryId: second.id,
        createdAt: expiresAt,
      })
    })

    it('does not claim the key when the create fails on the fiscal code (D8, D22)', async () => {
      const holder = fullBeneficiary()
      await store().create(holder, createdEntry(holder))
      const duplicate = newBeneficiary({ fiscal_code: holder.fiscal_code })
      await assert.rejects(
        store().create(duplicate, createdEntry(duplicate), claim()),
        isFiscalCodeConflict,
      )
      const fixed = newBeneficiary({ fiscal_code: null })
      const outcome = await store().create(fixed, createdEntry(fixed), claim())
      assert.equal(outcome.kind, 'created')
    })

    it('keeps a claim after its record is deleted (D22)', async () => {
      const input = newBeneficiary()
      const first = createdRecord(await store().create(input, createdEntry(input), claim()))
      await store().remove(first.id, undefined, historyEntry('deleted', T0 + SECOND))
      const outcome = await store().create(input, createdEntry(input), claim({ now: T0 + SECOND }))
      assert.deepEqual(outcome, {
        kind: 'claimed',
        fingerprint: 'fingerprint-1',
        beneficiaryId: first.id,
        createdAt: T0,
      })
      assert.equal((await store().list(listQuery())).total, 0)
    })

    it('creates exactly one record for ten concurrent creates with one key (D22)', async () => {
      const input = newBeneficiary()
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, () => store().create(input, createdEntry(input), claim())),
      )
      const created = outcomes.filter((outcome) => outcome.kind === 'created')
      assert.equal(created.length, 1)
      const id = createdRecord(created[0]!).id
      for (const outcome of outcomes) {
        if (outcome.kind === 'claimed') assert.equal(outcome.beneficiaryId, id)
      }
      assert.equal((await store().list(listQuery())).total, 1)
    })
  })
}
