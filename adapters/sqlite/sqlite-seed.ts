import { sql } from 'kysely'
import type { NewBeneficiary } from '../../core/ports/beneficiary-store.js'
import {
  toColumns,
  nameKeys,
  type NameKeys,
  prepareWriteStatements,
} from './writes/sqlite-beneficiary-columns.js'
import { queryBuilder, slot, SqliteQuery } from './sqlite-query.js'
import { SqliteCounters } from './writes/sqlite-counters.js'
import { SqliteMatchKeyWrites } from './sqlite-match-keys.js'
import { dropStat4Samples } from './sqlite-pragmas.js'
import type { SqliteStorage } from './sqlite-storage.js'

/** Records whose search words and history entries one INSERT … SELECT derives. */
const DERIVED_RANGE = 100_000

/** What {@link seedBeneficiaries} added. */
export interface SeedResult {
  /** Id of the first record added; the others follow without gaps. */
  readonly firstId: number
  /** How many records were added. */
  readonly count: number
}

/**
 * Adds `records` to a SQLite storage in bulk, for demonstrations and benchmarks (the CLI's
 * `seed` passes made-up ones). Each is stored as created pending and, unless still pending,
 * changed to its status at its `updated_at`: version 1 or 2, a `created` history entry, and a
 * `status_changed` one unless pending, all by the client `seed`.
 *
 * It writes in one transaction through prepared statements, bypassing the port: a million
 * records take about a minute and a half. The same records give the same rows. The records are read
 * one at a time as they are written, and SQLite keeps no more of the database in memory than
 * its page cache (`cacheSizeKib`, 64 MiB by default; pages beyond it go to the WAL), so the
 * database written is never held in memory (the CLI's `seed` peaks at about 355 MiB for a
 * million records, 406 MiB for three million).
 *
 * @throws Error (the driver's) when a record breaks a constraint, such as a fiscal code that is
 * taken; nothing is added then.
 *
 * @example
 * const storage = await openSqliteStorage({ path: 'bench.db' })
 * await seedBeneficiaries(storage, records)
 */
export async function seedBeneficiaries(
  storage: SqliteStorage,
  records: Iterable<NewBeneficiary>,
): Promise<SeedResult> {
  await storage.ping()
  const db = storage.database
  const { insert } = prepareWriteStatements(db)
  const counters = new SqliteCounters(db)
  const matchKeys = new SqliteMatchKeyWrites(db)
  // The names come from short lists: their keys are worth computing once.
  const keysByName = new Map<string, NameKeys>()
  // Search words and history entries follow from the rows: INSERT … SELECT after the loop costs
  // a fraction of a statement per row from JavaScript. One id range at a time: SQLite copies the
  // rows of an INSERT … SELECT into a table with a trigger (the history's, which writes the change
  // feed) into a temporary table first, held in memory (`temp_store`): a million records at once
  // peaked at 527 MiB, 100,000 at a time at 352.
  const seeded = queryBuilder
    .selectFrom('beneficiaries')
    .where('id', '>=', slot('from'))
    .where('id', '<', slot('to'))
  const addWords = new SqliteQuery(
    db,
    queryBuilder
      .insertInto('beneficiary_search')
      .columns(['rowid', 'words', 'status'])
      .expression(
        seeded.select([
          'id',
          sql<string>`CASE WHEN sort_first <> '' AND sort_last <> ''
            THEN sort_first || ' ' || sort_last ELSE sort_first || sort_last END`.as('words'),
          'status',
        ]),
      ),
  )
  const history = ['beneficiary_id', 'at', 'action', 'client_id', 'request_id', 'changes'] as const
  const addCreated = new SqliteQuery(
    db,
    queryBuilder
      .insertInto('beneficiary_history')
      .columns(history)
      .expression(
        seeded.select([
          'id',
          'created_at',
          sql<string>`'created'`.as('action'),
          sql<string>`'seed'`.as('client_id'),
          sql<string>`'seed-' || id`.as('request_id'),
          sql<string>`json_array(
            json_object('field', 'first_name', 'old', NULL, 'new', first_name),
            json_object('field', 'last_name', 'old', NULL, 'new', last_name))`.as('changes'),
        ]),
      ),
  )
  const addStatusChanged = new SqliteQuery(
    db,
    queryBuilder
      .insertInto('beneficiary_history')
      .columns(history)
      .expression(
        seeded
          .where('status', '<>', 'pending')
          .select([
            'id',
            'updated_at',
            sql<string>`'status_changed'`.as('action'),
            sql<string>`'seed'`.as('client_id'),
            sql<string>`'seed-' || id || '-status'`.as('request_id'),
            sql<string>`json_array(json_object('field', 'status', 'old', 'pending', 'new', status))`.as(
              'changes',
            ),
          ]),
      ),
  )

  const seedAll = db.transaction((): SeedResult => {
    let firstId = 0
    let count = 0
    for (const record of records) {
      const name = `${record.first_name}\u0000${record.last_name}`
      let keys = keysByName.get(name)
      if (keys === undefined) {
        keys = nameKeys(record)
        keysByName.set(name, keys)
      }
      const version = record.status === 'pending' ? 1 : 2
      const id = Number(insert.run(toColumns(record, version, keys)).lastInsertRowid)
      if (count++ === 0) firstId = id
      matchKeys.add(id, record)
      counters.add({ ...record, ...keys, id })
    }
    if (count > 0) {
      const end = firstId + count
      for (let from = firstId; from < end; from += DERIVED_RANGE) {
        const range = { from, to: Math.min(end, from + DERIVED_RANGE) }
        addWords.run(range)
        addCreated.run(range)
        addStatusChanged.run(range)
      }
      // A bulk insert leaves the search index in many segments, and every search reads each
      // one: merged into one, a common prefix's first page costs a fifth (116 -> 25 µs at a
      // million rows).
      db.exec("INSERT INTO beneficiary_search (beneficiary_search) VALUES ('optimize')")
      db.exec("INSERT INTO beneficiary_match_names (beneficiary_match_names) VALUES ('optimize')")
    }
    counters.flush()
    return { firstId, count }
  })

  try {
    return seedAll.immediate()
  } finally {
    if (!db.memory) db.pragma('wal_checkpoint(TRUNCATE)')
    db.exec('ANALYZE')
    dropStat4Samples(db)
  }
}
