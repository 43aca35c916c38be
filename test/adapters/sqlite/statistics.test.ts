import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openSqliteStorage, type SqliteStorage } from '../../../adapters/sqlite/index.js'
import { createdEntry, newBeneficiary } from '../../contracts/storage-fixtures.js'

/** The row count the planner's statistics give `beneficiaries`, or `undefined` when none. */
function analysedRows(storage: SqliteStorage): number | undefined {
  const stat = storage.database
    .prepare(
      "SELECT stat FROM sqlite_stat1 WHERE tbl = 'beneficiaries' AND idx = 'beneficiaries_status'",
    )
    .pluck()
    .get() as string | undefined
  return stat === undefined ? undefined : Number(stat.split(' ')[0])
}

async function createMany(storage: SqliteStorage, from: number, count: number): Promise<void> {
  const creates = []
  for (let i = from; i < from + count; i++) {
    const record = newBeneficiary({ email: `s${i}@example.org` })
    creates.push(storage.beneficiaries.create(record, createdEntry(record)))
  }
  await Promise.all(creates)
}

describe('SQLite planner statistics', () => {
  it('follow a table that grows from empty, each time its records double', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    try {
      const atOpen = analysedRows(storage)
      await createMany(storage, 0, 999)
      assert.equal(analysedRows(storage), atOpen, 'not refreshed below 1,000 records')
      await createMany(storage, 999, 1)
      assert.equal(analysedRows(storage), 1000)
      await createMany(storage, 1000, 999)
      assert.equal(analysedRows(storage), 1000, 'not refreshed before the records double')
      await createMany(storage, 1999, 1)
      assert.equal(analysedRows(storage), 2000)
      // The storage drops the STAT4 samples whenever it analyses (the list plans rely on it).
      const samples = storage.database.prepare('SELECT count(*) FROM sqlite_stat4').pluck().get()
      assert.equal(samples, 0)
    } finally {
      await storage.close()
    }
  })
})
