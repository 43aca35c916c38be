import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { BeneficiaryRecord } from '../../core/beneficiary.js'
import type { MatchQuery, MatchStore } from '../../core/ports/match-store.js'
import type { CurrentStorage } from './contract-harness.js'
import {
  T0,
  fullBeneficiary,
  historyEntry,
  insertBeneficiary,
  newBeneficiary,
  nextVersion,
} from './storage-fixtures.js'

/** Registers the behaviours of `MatchStore` (D38): retrieval by each key, kept in step. */
export function describeMatchStoreContract(storage: CurrentStorage): void {
  const matches = (): MatchStore => {
    const store = storage().matches
    assert.ok(store !== undefined, 'the storage has a match store')
    return store
  }
  const ids = async (query: Partial<MatchQuery>): Promise<number[]> =>
    (await matches().candidates({ limit: 50, ...query })).map((record) => record.id).sort()

  describe('matches: candidate retrieval', () => {
    it('finds a record by its fiscal code, whole and once', async () => {
      const record = await insertBeneficiary(storage(), fullBeneficiary())
      await insertBeneficiary(storage(), newBeneficiary({ email: 'other@example.org' }))
      const found = await matches().candidates({ fiscalCode: 'BNCGLI85D52F205X', limit: 50 })
      assert.deepEqual(found, [record])
    })

    it('finds a record by its e-mail address in any case, and each record once', async () => {
      const record = await insertBeneficiary(storage(), fullBeneficiary())
      assert.deepEqual(
        await ids({
          email: 'giulia.bianchi@example.org',
          phone: '+393331234567',
          fiscalCode: 'BNCGLI85D52F205X',
        }),
        [record.id],
      )
    })

    it('finds a record by its phone in E.164, stored as a national number', async () => {
      const record = await insertBeneficiary(
        storage(),
        newBeneficiary({ phone: '3331234567', email: 'a@example.org' }),
      )
      assert.deepEqual(await ids({ phone: '+393331234567' }), [record.id])
      assert.deepEqual(await ids({ phone: '+393331234568' }), [])
    })

    it('finds a record by its name without accents and the other way round', async () => {
      const record = await insertBeneficiary(
        storage(),
        newBeneficiary({ first_name: 'Nicolò', last_name: 'Nguyễn', email: 'n@example.org' }),
      )
      await insertBeneficiary(storage(), newBeneficiary({ first_name: 'Anna', last_name: 'Bo' }))
      const near = (name: string) => ids({ name, nearestNames: true })
      assert.ok((await near('nicolo nguyen')).includes(record.id))
      assert.ok((await near('nguyen nicolo')).includes(record.id))
      assert.ok(!(await near('nicolo nguyen')).includes(record.id + 1))
      assert.deepEqual(await ids({ name: 'nicolo nguyen' }), [])
    })

    it('finds a record born on a given date whose name is misspelt', async () => {
      const record = await insertBeneficiary(
        storage(),
        newBeneficiary({ first_name: 'Giulia', last_name: 'Bianchi', date_of_birth: '1985-04-12' }),
      )
      await insertBeneficiary(
        storage(),
        newBeneficiary({ first_name: 'Kwame', last_name: 'Mensah', date_of_birth: '1985-04-12' }),
      )
      const found = await ids({
        name: 'giulia bianchl',
        datesOfBirth: ['1985-12-04', '1985-04-12'],
      })
      assert.deepEqual(found, [record.id])
    })

    it('leaves out the excluded record and finds nothing without keys', async () => {
      const record = await insertBeneficiary(storage(), fullBeneficiary())
      assert.deepEqual(await ids({ email: 'giulia.bianchi@example.org', excludeId: record.id }), [])
      assert.deepEqual(await ids({}), [])
    })

    it('returns at most `limit` records for one key', async () => {
      for (let i = 0; i < 5; i++) {
        await insertBeneficiary(storage(), newBeneficiary({ email: 'same@example.org' }))
      }
      assert.equal((await ids({ email: 'same@example.org', limit: 3 })).length, 3)
    })

    it('follows an update: the old keys find the record no more, the new ones do', async () => {
      const record = await insertBeneficiary(storage(), fullBeneficiary())
      const next = nextVersion(
        record,
        {
          email: 'g.b@example.net',
          phone: '+33612345678',
          first_name: 'Chiara',
          fiscal_code: null,
          date_of_birth: '1990-01-02',
        },
        T0 + 10_000,
      )
      assert.equal(
        await storage().beneficiaries.update(record, next, historyEntry('updated', T0 + 10_000)),
        'done',
      )
      assert.deepEqual(await ids({ email: 'giulia.bianchi@example.org' }), [])
      assert.deepEqual(await ids({ phone: '+393331234567' }), [])
      assert.deepEqual(await ids({ fiscalCode: 'BNCGLI85D52F205X' }), [])
      const found = await matches().candidates({ email: 'G.B@example.net'.toLowerCase(), limit: 5 })
      assert.deepEqual(found, [next])
      assert.deepEqual(await ids({ phone: '+33612345678' }), [record.id])
      assert.deepEqual(await ids({ name: 'chiara bianchi', datesOfBirth: ['1990-01-02'] }), [
        record.id,
      ])
    })

    it('forgets a deleted record by every key', async () => {
      const record: BeneficiaryRecord = await insertBeneficiary(storage(), fullBeneficiary())
      assert.equal(
        await storage().beneficiaries.remove(record.id, undefined, historyEntry('deleted', T0)),
        'done',
      )
      assert.deepEqual(
        await ids({
          email: 'giulia.bianchi@example.org',
          phone: '+393331234567',
          fiscalCode: 'BNCGLI85D52F205X',
          name: 'giulia bianchi',
          datesOfBirth: ['1985-04-12'],
        }),
        [],
      )
    })
  })
}
