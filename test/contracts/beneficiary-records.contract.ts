import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { BeneficiaryRecord, HistoryEntry } from '../../core/beneficiary.js'
import type { NewBeneficiary } from '../../core/ports/beneficiary-store.js'
import type { CurrentStorage, StorageContractOptions } from './contract-harness.js'
import {
  SECOND,
  T0,
  createdEntry,
  createdRecord,
  fullBeneficiary,
  historyEntry,
  insertBeneficiary,
  isFiscalCodeConflict,
  listQuery,
  newBeneficiary,
  nextVersion,
} from './storage-fixtures.js'

const UNICODE_NAMES: readonly (readonly [string, string])[] = [
  ['Zoe\u0308', 'Nguye\u0302\u0303n'], // combining marks, kept decomposed
  ['Thị', 'Nguyễn'],
  ['Ana 👩‍👩‍👧', '🇮🇹 Rossi'], // a ZWJ sequence and a flag
  ['مريم', 'عبد الله'], // right to left
  ['יעל', 'כהן'],
  ['Ñ'.repeat(100), 'x'.repeat(100)], // the longest names D8 allows
  ['𝒜𝓁𝒾𝒸ℯ', '😀'.repeat(100)], // astral characters, 100 of them (200 UTF-16 units)
]

/** Registers the create, get, update, remove and history behaviours of `BeneficiaryStore`. */
export function describeBeneficiaryRecordsContract(
  storage: CurrentStorage,
  options: StorageContractOptions,
): void {
  const store = () => storage().beneficiaries

  async function historyOf(id: number): Promise<readonly HistoryEntry[] | undefined> {
    return (await store().history(id, 0, 100))?.items
  }

  describe('beneficiaries: create and get', () => {
    it('reads back every field of a created record, with version 1', async () => {
      const input = fullBeneficiary()
      const record = createdRecord(await store().create(input, createdEntry(input)))
      assert.deepEqual(record, { ...input, id: record.id, version: 1 })
      assert.deepEqual(await store().get(record.id), record)
    })

    it('reads back null optional fields and empty metadata as null and {}', async () => {
      const input = newBeneficiary()
      const record = await insertBeneficiary(storage(), input)
      const read = await store().get(record.id)
      assert.deepEqual(read, { ...input, id: record.id, version: 1 })
      assert.equal(read?.phone, null)
      assert.equal(read?.date_of_birth, null)
      assert.equal(read?.fiscal_code, null)
      assert.equal(read?.address, null)
      assert.deepEqual(read?.metadata, {})
    })

    it('reads back Unicode names exactly: combining marks, emoji, right-to-left, 100 characters', async () => {
      for (const [first_name, last_name] of UNICODE_NAMES) {
        const input = newBeneficiary({ first_name, last_name, email: 'ü@example.org' })
        const record = await insertBeneficiary(storage(), input)
        const read = await store().get(record.id)
        assert.equal(read?.first_name, first_name)
        assert.equal(read?.last_name, last_name)
        assert.deepEqual(read, { ...input, id: record.id, version: 1 })
      }
    })

    it('reads back metadata numbers and booleans with their types', async () => {
      const metadata = {
        count: 3,
        ratio: 0.25,
        negative: -7,
        largest: Number.MAX_SAFE_INTEGER,
        yes: true,
        no: false,
        text: 'ciao 👋',
        empty: '',
        numeric_text: '42',
        boolean_text: 'true',
      }
      const record = await insertBeneficiary(storage(), newBeneficiary({ metadata }))
      assert.deepEqual((await store().get(record.id))?.metadata, metadata)
    })

    it('gives each new record a larger id than the one before', async () => {
      const ids: number[] = []
      for (let i = 0; i < 5; i++) ids.push((await insertBeneficiary(storage())).id)
      for (const id of ids) assert.ok(Number.isSafeInteger(id) && id > 0, `${id} is a positive id`)
      for (let i = 1; i < ids.length; i++) assert.ok(ids[i]! > ids[i - 1]!, 'ids increase')
    })

    it('never gives a new record the id of a deleted one, even the last one', async () => {
      const first = await insertBeneficiary(storage())
      const last = await insertBeneficiary(storage())
      assert.equal(await store().remove(last.id, undefined, historyEntry('deleted', T0)), 'done')
      const next = await insertBeneficiary(storage())
      assert.ok(next.id > last.id, `${next.id} is above ${last.id}`)
      assert.notEqual(next.id, first.id)
    })

    it('answers undefined for an id that was never used', async () => {
      const record = await insertBeneficiary(storage())
      assert.equal(await store().get(record.id + 1000), undefined)
      assert.equal(await store().history(record.id + 1000, 0, 10), undefined)
    })

    it('keeps what it stored when the caller later changes its input or a returned record', async () => {
      const input = structuredClone(fullBeneficiary()) as NewBeneficiary
      const record = createdRecord(await store().create(input, createdEntry(input)))
      const expected = structuredClone(record)

      Reflect.set(input, 'first_name', 'Changed')
      Reflect.set(input.address!, 'city', 'Changed')
      Reflect.set(input.metadata, 'source', 'changed')
      for (const returned of [record, (await store().get(record.id))!]) {
        Reflect.set(returned, 'last_name', 'Changed')
        Reflect.set(returned.address!, 'street', 'Changed')
        Reflect.set(returned.metadata, 'added', true)
      }
      const summary = (await store().list(listQuery())).items[0]!
      Reflect.set(summary, 'email', 'changed@example.org')
      const entry = (await historyOf(record.id))![0]!
      Reflect.set(entry, 'action', 'deleted')

      assert.deepEqual(await store().get(record.id), expected)
      assert.equal((await store().list(listQuery())).items[0]?.email, expected.email)
      assert.deepEqual(await historyOf(record.id), [createdEntry(fullBeneficiary())])
    })
  })

  describe('beneficiaries: fiscal-code uniqueness (D8, D13)', () => {
    it('refuses a second record with the same fiscal code with ConflictError naming fiscal_code (D8)', async () => {
      const holder = await insertBeneficiary(storage(), fullBeneficiary())
      const duplicate = newBeneficiary({ fiscal_code: holder.fiscal_code })
      await assert.rejects(store().create(duplicate, createdEntry(duplicate)), isFiscalCodeConflict)
    })

    it('writes nothing when a create fails on the fiscal code: no record, no history (D8)', async () => {
      const holder = await insertBeneficiary(storage(), fullBeneficiary())
      const duplicate = newBeneficiary({ first_name: 'Other', fiscal_code: holder.fiscal_code })
      await assert.rejects(store().create(duplicate, createdEntry(duplicate)), isFiscalCodeConflict)

      const page = await store().list(listQuery())
      assert.equal(page.total, 1)
      assert.deepEqual(
        page.items.map((item) => item.id),
        [holder.id],
      )
      assert.deepEqual(await store().get(holder.id), holder)
      assert.equal((await store().history(holder.id, 0, 10))?.total, 1)
      const next = await insertBeneficiary(storage())
      assert.equal(
        await store()
          .history(next.id, 0, 10)
          .then((h) => h?.total),
        1,
      )
    })

    it('lets any number of records have no fiscal code', async () => {
      await insertBeneficiary(storage(), newBeneficiary({ fiscal_code: null }))
      await insertBeneficiary(storage(), newBeneficiary({ fiscal_code: null }))
      assert.equal((await store().list(listQuery())).total, 2)
    })

    it('frees the fiscal code of a deleted record for a new one (D13)', async () => {
      const holder = await insertBeneficiary(storage(), fullBeneficiary())
      assert.equal(await store().remove(holder.id, undefined, historyEntry('deleted', T0)), 'done')
      const again = await insertBeneficiary(storage(), fullBeneficiary())
      assert.equal(again.fiscal_code, holder.fiscal_code)
    })

    it('creates exactly one of two concurrent records with the same fiscal code (D8)', async () => {
      const input = fullBeneficiary()
      const results = await Promise.allSettled([
        store().create(input, createdEntry(input)),
        store().create(input, createdEntry(input)),
      ])
      const fulfilled = results.filter((result) => result.status === 'fulfilled')
      const rejected = results.filter((result) => result.status === 'rejected')
      assert.equal(fulfilled.length, 1)
      assert.equal(rejected.length, 1)
      assert.ok(isFiscalCodeConflict(rejected[0]?.reason))
      assert.equal((await store().list(listQuery())).total, 1)
    })

    it('refuses an update to another record’s fiscal code and changes nothing (D8)', async () => {
      const holder = await insertBeneficiary(storage(), fullBeneficiary())
      const other = await insertBeneficiary(storage(), newBeneficiary())
      const next = nextVersion(other, { fiscal_code: holder.fiscal_code }, T0 + SECOND)
      await assert.rejects(
        store().update(other, next, historyEntry('updated', T0 + SECOND)),
        isFiscalCodeConflict,
      )
      assert.deepEqual(await store().get(other.id), other)
      assert.equal((await store().history(other.id, 0, 10))?.total, 1)
    })

    it('lets an update keep the record’s own fiscal code', async () => {
      const record = await insertBeneficiary(storage(), fullBeneficiary())
      const next = nextVersion(record, { first_name: 'Giuliana' }, T0 + SECOND)
      const outcome = await store().update(record, next, historyEntry('updated', T0))
      assert.equal(outcome, 'done')
    })

    it('frees the old fiscal code and takes the new one when an update changes it', async () => {
      const record = await insertBeneficiary(storage(), fullBeneficiary())
      const next = nextVersion(record, { fiscal_code: 'RSSMRA80A01H501U' }, T0 + SECOND)
      assert.equal(await store().update(record, next, historyEntry('updated', T0 + SECOND)), 'done')

      const reuse = newBeneficiary({ fiscal_code: record.fiscal_code })
      assert.equal((await store().create(reuse, createdEntry(reuse))).kind, 'created')
      const taken = newBeneficiary({ fiscal_code: 'RSSMRA80A01H501U' })
      await assert.rejects(store().create(taken, createdEntry(taken)), isFiscalCodeConflict)
    })
  })

  describe('beneficiaries: update with compare-and-swap (D11, D23)', () => {
    it('replaces the record and appends the entry when the version matches', async () => {
      const record = await insertBeneficiary(storage(), fullBeneficiary())
      const next = nextVersion(
        record,
        {
          last_name: 'Verdi',
          phone: null,
          address: {
            street: 'Corso Italia 5',
            city: 'Torino',
            postal_code: '10121',
            country: 'IT',
          },
          metadata: { source: 'phone' },
          status: 'inactive',
        },
        T0 + 10 * SECOND,
      )
      const entry = historyEntry('updated', T0 + 10 * SECOND, [
        { field: 'last_name', old: 'Bianchi', new: 'Verdi' },
      ])
      assert.equal(await store().update(record, next, entry), 'done')
      assert.deepEqual(await store().get(record.id), next)
      assert.deepEqual(await historyOf(record.id), [createdEntry(fullBeneficiary()), entry])
    })

    it('answers conflict on a stale version and changes nothing: record, history (D23)', async () => {
      const record = await insertBeneficiary(storage())
      const second = nextVersion(record, { first_name: 'Luigi' }, T0 + SECOND)
      assert.equal(
        await store().update(record, second, historyEntry('updated', T0 + SECOND)),
        'done',
      )

      const stale = nextVersion(record, { first_name: 'Stale' }, T0 + 2 * SECOND)
      const outcome = await store().update(record, stale, historyEntry('updated', T0 + 2 * SECOND))
      assert.equal(outcome, 'conflict')
      assert.deepEqual(await store().get(record.id), second)
      assert.equal((await store().history(record.id, 0, 10))?.total, 2)
    })

    it('answers missing for an unknown id and creates nothing', async () => {
      const record = await insertBeneficiary(storage())
      const ghost = { ...nextVersion(record, {}, T0 + SECOND), id: record.id + 1000 }
      const unknown = { ...record, id: ghost.id }
      const outcome = await store().update(unknown, ghost, historyEntry('updated', T0 + SECOND))
      assert.equal(outcome, 'missing')
      assert.equal(await store().get(ghost.id), undefined)
      assert.equal(await store().history(ghost.id, 0, 10), undefined)
      assert.equal((await store().list(listQuery())).total, 1)
    })

    it('answers missing for a deleted record', async () => {
      const record = await insertBeneficiary(storage())
      await store().remove(record.id, undefined, historyEntry('deleted', T0 + SECOND))
      const next = nextVersion(record, { first_name: 'Luigi' }, T0 + 2 * SECOND)
      assert.equal(await store().update(record, next, historyEntry('updated', T0)), 'missing')
      assert.equal(await store().get(record.id), undefined)
    })

    it('lets exactly one of two concurrent updates from the same version win (D23)', async () => {
      const record = await insertBeneficiary(storage())
      const left = nextVersion(record, { first_name: 'Left' }, T0 + SECOND)
      const right = nextVersion(record, { first_name: 'Right' }, T0 + SECOND)
      const outcomes = await Promise.all([
        store().update(record, left, historyEntry('updated', T0 + SECOND)),
        store().update(record, right, historyEntry('updated', T0 + SECOND)),
      ])
      assert.deepEqual([...outcomes].sort(), ['conflict', 'done'])
      const winner = outcomes[0] === 'done' ? left : right
      assert.deepEqual(await store().get(record.id), winner)
      assert.equal((await store().history(record.id, 0, 10))?.total, 2)
    })

    it('accepts a chain of updates, each from the version before', async () => {
      let current: BeneficiaryRecord = await insertBeneficiary(storage())
      for (let i = 1; i <= 3; i++) {
        const next = nextVersion(current, { email: `v${i}@example.org` }, T0 + i * SECOND)
        const entry = historyEntry('updated', T0 + i * SECOND)
        assert.equal(await store().update(current, next, entry), 'done')
        current = next
      }
      assert.equal((await store().get(current.id))?.version, 4)
      assert.equal((await store().get(current.id))?.email, 'v3@example.org')
    })
  })

  describe('beneficiaries: remove (D13, D23, D27)', () => {
    it('deletes the record for good: get, history and list no longer show it (D13)', async () => {
      const kept = await insertBeneficiary(storage())
      const removed = await insertBeneficiary(storage(), fullBeneficiary())
      const outcome = await store().remove(removed.id, undefined, historyEntry('deleted', T0))
      assert.equal(outcome, 'done')
      assert.equal(await store().get(removed.id), undefined)
      assert.equal(await store().history(removed.id, 0, 10), undefined)
      const page = await store().list(listQuery())
      assert.equal(page.total, 1)
      assert.deepEqual(
        page.items.map((item) => item.id),
        [kept.id],
      )
    })

    it('answers missing when deleting twice, and for an id never used (D13)', async () => {
      const record = await insertBeneficiary(storage())
      assert.equal(await store().remove(record.id, undefined, historyEntry('deleted', T0)), 'done')
      assert.equal(
        await store().remove(record.id, undefined, historyEntry('deleted', T0)),
        'missing',
      )
      assert.equal(
        await store().remove(record.id + 1000, 1, historyEntry('deleted', T0)),
        'missing',
      )
    })

    it('deletes when the expected version matches (D23)', async () => {
      const record = await insertBeneficiary(storage())
      const next = nextVersion(record, { first_name: 'Luigi' }, T0 + SECOND)
      await store().update(record, next, historyEntry('updated', T0 + SECOND))
      assert.equal(await store().remove(record.id, 2, historyEntry('deleted', T0)), 'done')
      assert.equal(await store().get(record.id), undefined)
    })

    it('answers conflict on a stale expected version and changes nothing (D23)', async () => {
      const record = await insertBeneficiary(storage(), fullBeneficiary())
      const next = nextVersion(record, { first_name: 'Giuliana' }, T0 + SECOND)
      await store().update(record, next, historyEntry('updated', T0 + SECOND))
      const before = await historyOf(record.id)

      const outcome = await store().remove(record.id, 1, historyEntry('deleted', T0 + 2 * SECOND))
      assert.equal(outcome, 'conflict')
      assert.deepEqual(await store().get(record.id), next)
      assert.deepEqual(await historyOf(record.id), before)
      const duplicate = newBeneficiary({ fiscal_code: record.fiscal_code })
      await assert.rejects(store().create(duplicate, createdEntry(duplicate)), isFiscalCodeConflict)
    })

    it(
      'erases the changes of the earlier entries and appends the delete entry (D27)',
      { skip: options.retainedHistory === undefined && 'the adapter gives no retained history' },
      async () => {
        const input = fullBeneficiary()
        const record = await insertBeneficiary(storage(), input)
        const update = historyEntry('updated', T0 + SECOND, [
          { field: 'email', old: input.email, new: 'new@example.org' },
          { field: 'address', old: input.address, new: null },
        ])
        const next = nextVersion(record, { email: 'new@example.org', address: null }, T0 + SECOND)
        await store().update(record, next, update)
        const deletion = historyEntry('deleted', T0 + 2 * SECOND)
        assert.equal(await store().remove(record.id, undefined, deletion), 'done')

        const retained = await options.retainedHistory!(storage(), record.id)
        assert.deepEqual(retained, [
          { ...createdEntry(input), changes: [] },
          { ...update, changes: [] },
          deletion,
        ])
      },
    )
  })

  describe('beneficiaries: history (D27)', () => {
    it('returns the entries oldest first, with their changes exactly as given', async () => {
      const input = fullBeneficiary()
      const record = await insertBeneficiary(storage(), input)
      const change = historyEntry('updated', T0 + SECOND, [
        { field: 'address', old: input.address, new: null },
        { field: 'metadata', old: input.metadata, new: { count: 2, vip: true } },
        { field: 'phone', old: null, new: '+390612345678' },
        { field: 'first_name', old: 'Giulia', new: 'Zoe\u0308 👋' },
      ])
      const next = nextVersion(record, { address: null }, T0 + SECOND)
      await store().update(record, next, change)
      const transition = historyEntry('status_changed', T0 + 2 * SECOND, [
        { field: 'status', old: 'active', new: 'inactive' },
      ])
      await store().update(
        next,
        nextVersion(next, { status: 'inactive' }, T0 + 2 * SECOND),
        transition,
      )

      assert.deepEqual(await store().history(record.id, 0, 10), {
        items: [createdEntry(input), change, transition],
        total: 3,
      })
    })

    it('pages the history with an exact total, past the end included', async () => {
      let current = await insertBeneficiary(storage())
      const entries: HistoryEntry[] = [createdEntry(newBeneficiary())]
      for (let i = 1; i <= 4; i++) {
        const entry = historyEntry('updated', T0 + i * SECOND)
        const next = nextVersion(current, { email: `v${i}@example.org` }, T0 + i * SECOND)
        await store().update(current, next, entry)
        entries.push(entry)
        current = next
      }
      const id = current.id
      assert.deepEqual(await store().history(id, 0, 2), { items: entries.slice(0, 2), total: 5 })
      assert.deepEqual(await store().history(id, 2, 2), { items: entries.slice(2, 4), total: 5 })
      assert.deepEqual(await store().history(id, 4, 2), { items: entries.slice(4), total: 5 })
      assert.deepEqual(await store().history(id, 5, 2), { items: [], total: 5 })
      assert.deepEqual(await store().history(id, 0, 1), { items: entries.slice(0, 1), total: 5 })
      assert.deepEqual(await store().history(id, 0, 100), { items: entries, total: 5 })
    })

    it('keeps each record’s history apart', async () => {
      const first = await insertBeneficiary(storage(), newBeneficiary({ first_name: 'Uno' }))
      const second = await insertBeneficiary(storage(), newBeneficiary({ first_name: 'Due' }))
      await store().update(first, nextVersion(first, {}, T0 + SECOND), historyEntry('updated', T0))
      assert.equal((await store().history(first.id, 0, 10))?.total, 2)
      assert.deepEqual(await historyOf(second.id), [
        createdEntry(newBeneficiary({ first_name: 'Due' })),
      ])
    })
  })
}
