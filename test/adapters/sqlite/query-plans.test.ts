import Database from 'better-sqlite3'
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { openSqliteStorage } from '../../../adapters/sqlite/index.js'
import type { ListQuery } from '../../../core/ports/beneficiary-store.js'
import { insertBeneficiary, listQuery, newBeneficiary } from '../../contracts/storage-fixtures.js'

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

  it('walks the sort index for a filtered list and checks status and date inside it: no table lookup, no sort, no full scan', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    try {
      const db = storage.database
      const columns = (index: string): string[] =>
        db
          .prepare<[], { name: string | null; key: number }>(`PRAGMA index_xinfo(${index})`)
          .all()
          .filter((column) => column.key === 1)
          .map((column) => column.name ?? 'rowid')
      assert.deepEqual(columns('beneficiaries_last_name'), [
        'sort_last',
        'last_name',
        'id',
        'status',
        'created_at',
      ])
      assert.deepEqual(columns('beneficiaries_status'), ['status', 'id', 'created_at'])

      // The shape of the adapter's `order` page query: `+column` keeps the filters off the index.
      for (const [index, order] of [
        ['beneficiaries_last_name', 'sort_last, last_name, id'],
        ['beneficiaries_first_name', 'sort_first, first_name, id'],
        ['beneficiaries_updated_at', 'updated_at, id'],
      ] as const) {
        const plan = db
          .prepare<[], { detail: string }>(
            `EXPLAIN QUERY PLAN SELECT id FROM beneficiaries
              WHERE +status = 'active' AND +created_at >= 0 AND +created_at < 1e15
              ORDER BY ${order} LIMIT 25 OFFSET 100`,
          )
          .all()
          .map((row) => row.detail)
        assert.deepEqual(plan, [`SCAN beneficiaries USING COVERING INDEX ${index}`], order)
      }
    } finally {
      await storage.close()
    }
  })

  it('upgrades a populated file of the older schema (0003) to the covering indexes and name buckets, with the same answers', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'covering-'))
    const path = join(directory, 'old.db')
    try {
      const queries: ListQuery[] = [
        listQuery({ status: 'active', sort: 'last_name', limit: 3, offset: 2 }),
        listQuery({ createdFrom: 0, sort: 'first_name', descending: true, limit: 4 }),
        listQuery({ status: 'pending', sort: 'updated_at', limit: 2, offset: 1 }),
      ]
      const first = await openSqliteStorage({ path })
      for (let i = 0; i < 12; i++) {
        await insertBeneficiary(
          first,
          newBeneficiary({
            email: `c${i}@example.org`,
            last_name: ['Rossi', 'Bianchi', 'Verdi'][i % 3]!,
            status: i % 2 === 0 ? 'active' : 'pending',
          }),
        )
      }
      const expected = await Promise.all(queries.map((query) => first.beneficiaries.list(query)))
      await first.close()

      // Back to the indexes of 0001 and the name counters of 0002 as 0003 left them, and 0004
      // to 0014 not applied (0007 changes only the keys of names outside ASCII, 0009 makes the
      // search table anew from the records).
      const old = new Database(path)
      old.exec('DROP TABLE access_log; DROP TABLE access_log_records')
      old.exec('DROP INDEX beneficiary_history_at')
      old.prepare("DELETE FROM kysely_migration WHERE name = '0011_access_log'").run()
      old.prepare("DELETE FROM kysely_migration WHERE name = '0014_webhooks'").run()
      old.exec('DROP TABLE webhook_endpoints')
      old.prepare("DELETE FROM kysely_migration WHERE name = '0010_events'").run()
      old.exec(`DROP TRIGGER beneficiary_history_event; DROP TABLE beneficiary_events;
        DROP TABLE beneficiary_event_purge`)
      old.prepare("DELETE FROM kysely_migration WHERE name = '0012_match_keys'").run()
      old.exec('DROP TABLE beneficiary_match_names; DROP TABLE beneficiary_match_keys')
      old.prepare("DELETE FROM kysely_migration WHERE name = '0013_bulk_jobs'").run()
      old.exec('DROP TABLE import_job_outcomes; DROP TABLE import_jobs')
      old.prepare("DELETE FROM kysely_migration WHERE name = '0009_search_secure_delete'").run()
      old.prepare("DELETE FROM kysely_migration WHERE name = '0007_name_keys_folded'").run()
      old.prepare("DELETE FROM kysely_migration WHERE name = '0008_write_log_dropped'").run()
      old.prepare("DELETE FROM kysely_migration WHERE name = '0006_write_log'").run()
      old.exec(`DROP TABLE beneficiary_name_key_counts; DROP TABLE beneficiary_counter_log;
        CREATE TABLE beneficiary_name_counts (name text NOT NULL, status text NOT NULL,
          prefix text NOT NULL, n integer NOT NULL, PRIMARY KEY (name, status, prefix)) WITHOUT ROWID;
        CREATE TABLE beneficiary_status_counts (status text PRIMARY KEY, n integer NOT NULL)
          WITHOUT ROWID`)
      old.prepare("DELETE FROM kysely_migration WHERE name = '0005_name_key_counters'").run()
      for (const [name, columns] of [
        ['beneficiaries_status', 'status'],
        ['beneficiaries_created_at', 'created_at'],
        ['beneficiaries_updated_at', 'updated_at'],
        ['beneficiaries_last_name', 'sort_last, last_name'],
        ['beneficiaries_first_name', 'sort_first, first_name'],
      ]) {
        old.exec(`DROP INDEX ${name!}; CREATE INDEX ${name!} ON beneficiaries (${columns!})`)
      }
      old.prepare("DELETE FROM kysely_migration WHERE name = '0004_covering_list_indexes'").run()
      old.close()

      const upgraded = await openSqliteStorage({ path })
      try {
        assert.deepEqual(upgraded.migrationsApplied, [
          '0004_covering_list_indexes',
          '0005_name_key_counters',
          '0006_write_log',
          '0007_name_keys_folded',
          '0008_write_log_dropped',
          '0009_search_secure_delete',
          '0010_events',
          '0011_access_log',
          '0012_match_keys',
          '0013_bulk_jobs',
          '0014_webhooks',
        ])
        const columns = upgraded.database
          .prepare<[], { name: string; key: number }>(
            'PRAGMA index_xinfo(beneficiaries_first_name)',
          )
          .all()
          .filter((column) => column.key === 1)
          .map((column) => column.name)
        assert.deepEqual(columns, ['sort_first', 'first_name', 'id', 'status', 'created_at'])
        const actual = await Promise.all(queries.map((query) => upgraded.beneficiaries.list(query)))
        assert.deepEqual(actual, expected)
        assert.equal(actual[0]!.total, 6)
        assert.equal(actual[0]!.items.length, 3)
      } finally {
        await upgraded.close()
      }
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })
})
