import Database from 'better-sqlite3'
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { openSqliteStorage } from '../../adapters/sqlite/index.js'
import { insertBeneficiary, listQuery, newBeneficiary } from '../contracts/storage-fixtures.js'

function count(db: Database.Database, table: string): number {
  return db.prepare<[], number>(`SELECT count(*) FROM ${table}`).pluck().get()!
}

describe('SQLite query plans', () => {
  it('keeps the row counts of ANALYZE but not its STAT4 samples, which re-plan every list query at every run', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'statistics-'))
    const path = join(directory, 'stats.db')
    try {
      const first = await openSqliteStorage({ path })
      for (let i = 0; i < 30; i++) {
        await insertBeneficiary(first, newBeneficiary({ email: `p${i}@example.org` }))
      }
      await first.close()
      const db = new Database(path)
      db.exec('ANALYZE')
      assert.ok(count(db, 'sqlite_stat4') > 0, 'this SQLite keeps STAT4 samples')
      db.close()

      const storage = await openSqliteStorage({ path })
      try {
        const reopened = new Database(path, { readonly: true })
        assert.equal(count(reopened, 'sqlite_stat4'), 0)
        assert.ok(count(reopened, 'sqlite_stat1') > 0)
        reopened.close()
        const pending = await storage.beneficiaries.list(listQuery({ status: 'pending' }))
        assert.equal(pending.total, 30, 'the lists still work')
      } finally {
        await storage.close()
      }
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })

  it('writes the page size (and the zero offset of a first search page) into the SQL, and refuses any limit but a whole number', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    try {
      for (let i = 0; i < 5; i++) {
        await insertBeneficiary(storage, newBeneficiary({ email: `l${i}@example.org` }))
      }
      for (const limit of [1, 2, 3, 100]) {
        const page = await storage.beneficiaries.list(listQuery({ limit, offset: 1 }))
        assert.equal(page.items.length, Math.min(limit, 4), `limit ${limit}`)
        const found = await storage.beneficiaries.list(listQuery({ limit, search: ['ross'] }))
        assert.equal(found.items.length, Math.min(limit, 5), `search, limit ${limit}`)
        // A search page past the first has its OFFSET bound, the first none: both shapes.
        const next = await storage.beneficiaries.list(
          listQuery({ limit, offset: 1, search: ['ross'] }),
        )
        assert.deepEqual(
          next.items.map((item) => item.id),
          (await storage.beneficiaries.list(listQuery({ limit: 100, search: ['ross'] }))).items
            .slice(1, 1 + limit)
            .map((item) => item.id),
          `search from the second match, limit ${limit}`,
        )
      }
      for (const limit of [1.5, Number.NaN, -1, Infinity, '5; DROP TABLE beneficiaries']) {
        await assert.rejects(
          storage.beneficiaries.list(listQuery({ limit: limit as number })),
          TypeError,
          String(limit),
        )
      }
      assert.equal((await storage.beneficiaries.list(listQuery())).total, 5)
    } finally {
      await storage.close()
    }
  })
})
