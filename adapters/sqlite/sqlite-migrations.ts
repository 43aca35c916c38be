import type BetterSqlite3 from 'better-sqlite3'
import { Kysely, Migrator, SqliteDialect, sql, type Migration } from 'kysely'
import { nameSortKey } from '../../core/search-terms.js'
import { nameKeys } from './sqlite-name-keys.js'

const MIGRATION_TABLE = 'kysely_migration'

/** The UTC day of an epoch-millisecond expression, rounded down also before 1970. */
function dayOf(column: string): string {
  return `((${column} - ((${column} % 86400000) + 86400000) % 86400000) / 86400000)`
}

const coreSchema: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('beneficiaries')
      // AUTOINCREMENT: an id is never handed out twice, even after the highest one is deleted.
      .addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement())
      .addColumn('first_name', 'text', (col) => col.notNull())
      .addColumn('last_name', 'text', (col) => col.notNull())
      .addColumn('email', 'text', (col) => col.notNull())
      .addColumn('phone', 'text')
      .addColumn('date_of_birth', 'text')
      .addColumn('fiscal_code', 'text')
      .addColumn('address_street', 'text')
      .addColumn('address_city', 'text')
      .addColumn('address_postal_code', 'text')
      .addColumn('address_country', 'text')
      .addColumn('metadata', 'text', (col) => col.notNull())
      .addColumn('status', 'text', (col) =>
        col.notNull().check(sql`status IN ('active', 'inactive', 'pending')`),
      )
      .addColumn('created_at', 'integer', (col) => col.notNull())
      .addColumn('updated_at', 'integer', (col) => col.notNull())
      .addColumn('version', 'integer', (col) => col.notNull())
      .addColumn('sort_first', 'text', (col) => col.notNull())
      .addColumn('sort_last', 'text', (col) => col.notNull())
      .addCheckConstraint(
        'beneficiaries_address_whole',
        sql`(address_street IS NULL) = (address_city IS NULL)
          AND (address_city IS NULL) = (address_postal_code IS NULL)
          AND (address_postal_code IS NULL) = (address_country IS NULL)`,
      )
      .execute()
    // The fiscal-code uniqueness is the database's (D8); most records have none, and a partial
    // index leaves them out.
    await db.schema
      .createIndex('beneficiaries_fiscal_code')
      .on('beneficiaries')
      .column('fiscal_code')
      .unique()
      .where(sql.ref('fiscal_code'), 'is not', null)
      .execute()
    // Each index ends with the rowid (= id), so it also serves the tie-break by id (D15).
    await db.schema
      .createIndex('beneficiaries_status')
      .on('beneficiaries')
      .column('status')
      .execute()
    await db.schema
      .createIndex('beneficiaries_created_at')
      .on('beneficiaries')
      .column('created_at')
      .execute()
    await db.schema
      .createIndex('beneficiaries_updated_at')
      .on('beneficiaries')
      .column('updated_at')
      .execute()
    await db.schema
      .createIndex('beneficiaries_last_name')
      .on('beneficiaries')
      .columns(['sort_last', 'last_name'])
      .execute()
    await db.schema
      .createIndex('beneficiaries_first_name')
      .on('beneficiaries')
      .columns(['sort_first', 'first_name'])
      .execute()

    // Contentless: the words are only searched, never read back. The `ascii` tokenizer splits
    // only at ASCII non-alphanumerics, so the words of `searchTerms()` (letters and digits of
    // any script, joined by spaces) are its tokens unchanged (D16). The status is indexed too,
    // so that a search filtered by status is counted inside the index.
    await sql`CREATE VIRTUAL TABLE beneficiary_search USING fts5(
      words, status, content = '', contentless_delete = 1, tokenize = 'ascii', prefix = '1 2 3'
    )`.execute(db)

    await db.schema
      .createTable('beneficiary_history')
      .addColumn('id', 'integer', (col) => col.primaryKey())
      .addColumn('beneficiary_id', 'integer', (col) => col.notNull())
      .addColumn('at', 'integer', (col) => col.notNull())
      .addColumn('action', 'text', (col) => col.notNull())
      .addColumn('client_id', 'text', (col) => col.notNull())
      .addColumn('request_id', 'text', (col) => col.notNull())
      .addColumn('changes', 'text', (col) => col.notNull())
      .execute()
    await db.schema
      .createIndex('beneficiary_history_beneficiary')
      .on('beneficiary_history')
      .column('beneficiary_id')
      .execute()

    await db.schema
      .createTable('idempotency_keys')
      .addColumn('id', 'integer', (col) => col.primaryKey())
      .addColumn('client_id', 'text', (col) => col.notNull())
      .addColumn('key', 'text', (col) => col.notNull())
      .addColumn('fingerprint', 'text', (col) => col.notNull())
      .addColumn('beneficiary_id', 'integer', (col) => col.notNull())
      .addColumn('created_at', 'integer', (col) => col.notNull())
      .addColumn('expires_at', 'integer', (col) => col.notNull())
      .addUniqueConstraint('idempotency_keys_client_key', ['client_id', 'key'])
      .execute()
    await db.schema
      .createIndex('idempotency_keys_expires_at')
      .on('idempotency_keys')
      .column('expires_at')
      .execute()

    await db.schema
      .createTable('clients')
      .addColumn('seq', 'integer', (col) => col.primaryKey())
      .addColumn('id', 'text', (col) => col.notNull().unique())
      .addColumn('name', 'text', (col) => col.notNull())
      .addColumn('secret_hash', 'text', (col) => col.notNull())
      .addColumn('scopes', 'text', (col) => col.notNull())
      .addColumn('created_at', 'integer', (col) => col.notNull())
      .addColumn('revoked_at', 'integer')
      .execute()

    await db.schema
      .createTable('sessions')
      .addColumn('seq', 'integer', (col) => col.primaryKey())
      .addColumn('id', 'text', (col) => col.notNull().unique())
      // Clients are revoked, never deleted: a session always has its client.
      .addColumn('client_id', 'text', (col) => col.notNull().references('clients.id'))
      .addColumn('refresh_token_hash', 'text', (col) => col.notNull().unique())
      .addColumn('scopes', 'text', (col) => col.notNull())
      .addColumn('created_at', 'integer', (col) => col.notNull())
      .addColumn('expires_at', 'integer', (col) => col.notNull())
      .addColumn('revoked_at', 'integer')
      .execute()

    await db.schema
      .createTable('revoked_tokens')
      .addColumn('jti', 'text', (col) => col.primaryKey())
      .addColumn('expires_at', 'integer', (col) => col.notNull())
      .modifyEnd(sql`WITHOUT ROWID`)
      .execute()
    await db.schema
      .createIndex('revoked_tokens_expires_at')
      .on('revoked_tokens')
      .column('expires_at')
      .execute()

    await db.schema
      .createTable('signing_keys')
      .addColumn('seq', 'integer', (col) => col.primaryKey())
      .addColumn('kid', 'text', (col) => col.notNull().unique())
      .addColumn('secret', 'text', (col) => col.notNull())
      .addColumn('created_at', 'integer', (col) => col.notNull())
      .execute()
  },
}

// Counting a million rows, or skipping a million with OFFSET, costs tens of milliseconds; these
// counters answer the totals of the status and date filters and find where a deep page starts
// (see `SqliteBeneficiaryList`). The store updates them in the transaction of each write
// (`SqliteCounters`): triggers did the same at seven times the cost of an insert.
const listCounters: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('beneficiary_day_counts')
      .addColumn('status', 'text', (col) => col.notNull())
      .addColumn('day', 'integer', (col) => col.notNull())
      .addColumn('n', 'integer', (col) => col.notNull())
      .addColumn('min_id', 'integer', (col) => col.notNull())
      .addColumn('max_id', 'integer', (col) => col.notNull())
      .addPrimaryKeyConstraint('beneficiary_day_counts_key', ['status', 'day'])
      .modifyEnd(sql`WITHOUT ROWID`)
      .execute()
    await db.schema
      .createTable('beneficiary_block_counts')
      .addColumn('status', 'text', (col) => col.notNull())
      .addColumn('block', 'integer', (col) => col.notNull())
      .addColumn('n', 'integer', (col) => col.notNull())
      .addPrimaryKeyConstraint('beneficiary_block_counts_key', ['status', 'block'])
      .modifyEnd(sql`WITHOUT ROWID`)
      .execute()

    await sql
      .raw(
        `INSERT INTO beneficiary_day_counts (status, day, n, min_id, max_id)
          SELECT status, ${dayOf('created_at')}, count(*), min(id), max(id)
          FROM beneficiaries GROUP BY 1, 2`,
      )
      .execute(db)
    await sql`INSERT INTO beneficiary_block_counts (status, block, n)
      SELECT status, id >> 10, count(*) FROM beneficiaries GROUP BY 1, 2`.execute(db)

    await db.schema
      .createTable('beneficiary_updated_counts')
      .addColumn('status', 'text', (col) => col.notNull())
      .addColumn('day', 'integer', (col) => col.notNull())
      .addColumn('n', 'integer', (col) => col.notNull())
      .addPrimaryKeyConstraint('beneficiary_updated_counts_key', ['status', 'day'])
      .modifyEnd(sql`WITHOUT ROWID`)
      .execute()
    // `prefix`: the first two characters (code points) of the name's sort key.
    await db.schema
      .createTable('beneficiary_name_counts')
      .addColumn('name', 'text', (col) => col.notNull().check(sql`name IN ('first', 'last')`))
      .addColumn('status', 'text', (col) => col.notNull())
      .addColumn('prefix', 'text', (col) => col.notNull())
      .addColumn('n', 'integer', (col) => col.notNull())
      .addPrimaryKeyConstraint('beneficiary_name_counts_key', ['name', 'status', 'prefix'])
      .modifyEnd(sql`WITHOUT ROWID`)
      .execute()
    await sql
      .raw(
        `INSERT INTO beneficiary_updated_counts (status, day, n)
          SELECT status, ${dayOf('updated_at')}, count(*) FROM beneficiaries GROUP BY 1, 2`,
      )
      .execute(db)
    await sql`INSERT INTO beneficiary_name_counts (name, status, prefix, n)
      SELECT 'first', status, substr(sort_first, 1, 2), count(*) FROM beneficiaries GROUP BY 2, 3
      UNION ALL
      SELECT 'last', status, substr(sort_last, 1, 2), count(*) FROM beneficiaries GROUP BY 2, 3
    `.execute(db)
  },
}

// A total with no date filter summed every day row (a few thousand at three years of data, a
// quarter of a millisecond); one row per status answers it at once.
const statusTotals: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('beneficiary_status_counts')
      .addColumn('status', 'text', (col) => col.primaryKey())
      .addColumn('n', 'integer', (col) => col.notNull())
      .modifyEnd(sql`WITHOUT ROWID`)
      .execute()
    await sql`INSERT INTO beneficiary_status_counts (status, n)
      SELECT status, count(*) FROM beneficiaries GROUP BY 1`.execute(db)
  },
}

// The list walks an index in the sort's order and checks the status and the creation date of
// each row it passes; read from the table, that check was a row lookup of about 3 µs, so a deep
// page of a filtered list sorted by name could take a second. Each index now carries the id
// explicitly (which keeps its order: sort key, then id) and after it the columns the filters
// read, so the walk never leaves the index (about 25 ns per row passed).
const coveringListIndexes: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const indexes: readonly (readonly [string, readonly string[]])[] = [
      ['beneficiaries_status', ['status', 'id', 'created_at']],
      ['beneficiaries_created_at', ['created_at', 'id', 'status']],
      ['beneficiaries_updated_at', ['updated_at', 'id', 'status', 'created_at']],
      ['beneficiaries_last_name', ['sort_last', 'last_name', 'id', 'status', 'created_at']],
      ['beneficiaries_first_name', ['sort_first', 'first_name', 'id', 'status', 'created_at']],
    ]
    for (const [name, columns] of indexes) {
      await db.schema.dropIndex(name).execute()
      await db.schema
        .createIndex(name)
        .on('beneficiaries')
        .columns([...columns])
        .execute()
    }
  },
}

// A deep page sorted by name started at the first two letters of its bucket's names, so OFFSET
// passed up to a whole bucket (150,000 index entries for `ro` at a million records). The name
// counters now end a bucket at every sort key, raw name and block of 32,768 ids, the order of the
// name indexes. The counter log, one generation per write of the counters, tells a connection
// what changed since its copy of them (`SqliteCounterMirror`) was made.
const nameKeyCounters: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('beneficiary_name_key_counts')
      .addColumn('name', 'text', (col) => col.notNull().check(sql`name IN ('first', 'last')`))
      .addColumn('status', 'text', (col) => col.notNull())
      .addColumn('sort_key', 'text', (col) => col.notNull())
      .addColumn('raw_name', 'text', (col) => col.notNull())
      .addColumn('block', 'integer', (col) => col.notNull())
      .addColumn('n', 'integer', (col) => col.notNull())
      // The block first: the creates of a group, with ids that follow each other, add to a few
      // neighbouring rows (a few pages of the WAL per commit) rather than one page per name.
      .addPrimaryKeyConstraint('beneficiary_name_key_counts_key', [
        'name',
        'block',
        'status',
        'sort_key',
        'raw_name',
      ])
      .modifyEnd(sql`WITHOUT ROWID`)
      .execute()
    await sql`INSERT INTO beneficiary_name_key_counts (name, status, sort_key, raw_name, block, n)
      SELECT 'first', status, sort_first, first_name, id >> 15, count(*)
        FROM beneficiaries GROUP BY 2, 3, 4, 5
      UNION ALL
      SELECT 'last', status, sort_last, last_name, id >> 15, count(*)
        FROM beneficiaries GROUP BY 2, 3, 4, 5`.execute(db)
    await db.schema.dropTable('beneficiary_name_counts').execute()
    // The total of a status is now the sum of its blocks, which every listing has in memory.
    await db.schema.dropTable('beneficiary_status_counts').execute()
    // `changes`: a JSON array of `CounterChange`; the last generation is the counters' version.
    await db.schema
      .createTable('beneficiary_counter_log')
      .addColumn('generation', 'integer', (col) => col.primaryKey())
      .addColumn('changes', 'text', (col) => col.notNull())
      .execute()
  },
}

// The ids each write changed, by generation, apart from the counter log: a delete empties the
// counter log (it holds names, D27) but not this one, which holds only ids. From it, each
// connection's copy of the records' sort and filter keys (`SqliteRowKeys`) follows every writer.
const writeLog: Migration = {
  async up(db) {
    await db.schema
      .createTable('beneficiary_write_log')
      // Never reused, even once every row is gone: a copy that holds a generation never takes
      // a later one for it.
      .addColumn('generation', 'integer', (col) => col.primaryKey().autoIncrement())
      .addColumn('ids', 'text', (col) => col.notNull())
      .execute()
  },
}

/** Ids per statement of `nameKeysFolded`: a bounded number of rows in memory at a time. */
const REKEYED_IDS = 65_536

interface CountedName {
  readonly name: string
  readonly block: number
  readonly status: string
  readonly sort_key: string
  readonly raw_name: string
}

interface NamedRow {
  readonly id: number
  readonly status: string
  readonly first_name: string
  readonly last_name: string
  readonly sort_first: string
  readonly sort_last: string
}

// `searchTerms()` now folds letters that keep their mark when decomposed (`ł`, `ø`, `đ`) and
// ligatures (`æ`, `œ`, `ß`): the name keys of every record whose names hold a letter outside
// ASCII are computed again, and those that changed are written with their search words and
// their name counters. Both logs get an entry that no copy can follow, so that every
// connection's copies of the counters and of the records' keys load anew.
const nameKeysFolded: Migration = {
  async up(db) {
    const last = await sql<{ n: number | null }>`SELECT max(id) AS n FROM beneficiaries`.execute(db)
    const maxId = last.rows[0]?.n ?? 0
    let changed = 0
    for (let from = 0; from <= maxId; from += REKEYED_IDS) {
      const rows = await sql<NamedRow>`SELECT id, status, first_name, last_name, sort_first,
          sort_last FROM beneficiaries WHERE id >= ${from} AND id < ${from + REKEYED_IDS}
          AND (first_name GLOB '*[^ -~]*' OR last_name GLOB '*[^ -~]*')`.execute(db)
      const rekeyed: [id: number, first: string, last: string, words: string, status: string][] = []
      for (const row of rows.rows) {
        const keys = nameKeys(row)
        if (keys.sort_first === row.sort_first && keys.sort_last === row.sort_last) continue
        rekeyed.push([row.id, keys.sort_first, keys.sort_last, keys.words, row.status])
      }
      if (rekeyed.length === 0) continue
      changed += rekeyed.length
      const json = JSON.stringify(rekeyed)
      await sql`UPDATE beneficiaries SET sort_first = r.value ->> 1, sort_last = r.value ->> 2
          FROM json_each(${json}) AS r WHERE beneficiaries.id = r.value ->> 0`.execute(db)
      await sql`DELETE FROM beneficiary_search
          WHERE rowid IN (SELECT value ->> 0 FROM json_each(${json}))`.execute(db)
      await sql`INSERT INTO beneficiary_search (rowid, words, status)
          SELECT value ->> 0, value ->> 3, value ->> 4 FROM json_each(${json})`.execute(db)
    }
    if (changed === 0) return
    // The sort key is a function of the raw name, which the counters' key holds too: no two
    // rows of the counters become one.
    const counted = await sql<CountedName>`SELECT name, block, status, sort_key, raw_name
        FROM beneficiary_name_key_counts WHERE raw_name GLOB '*[^ -~]*'`.execute(db)
    for (const row of counted.rows) {
      const key = nameSortKey(row.raw_name)
      if (key === row.sort_key) continue
      await sql`UPDATE beneficiary_name_key_counts SET sort_key = ${key}
          WHERE name = ${row.name} AND block = ${row.block} AND status = ${row.status}
          AND sort_key = ${row.sort_key} AND raw_name = ${row.raw_name}`.execute(db)
    }
    await sql`INSERT INTO beneficiary_counter_log (changes) VALUES ('null')`.execute(db)
    await sql`INSERT INTO beneficiary_write_log (ids) VALUES ('null')`.execute(db)
  },
}

// A delete takes a record's words out of the search index itself, so that no name of an
// erased record stays readable in the file (D27). FTS5's `secure-delete` removes a row's
// entries from the segments that hold them, but not in a `contentless_delete` table, whose
// deletes only mark the row as gone until a merge drops it: the table becomes a plain
// contentless one, whose rows are deleted with their words (the `delete` command, which the
// store gives the old words and status). Made anew from the records, which also drops whatever
// the old segments kept of the records deleted before (`secure_delete` zeroes the pages
// freed). FTS5 older than SQLite 3.42 can no longer open the table.
const searchSecureDelete: Migration = {
  async up(db) {
    await sql`DROP TABLE beneficiary_search`.execute(db)
    await sql`CREATE VIRTUAL TABLE beneficiary_search USING fts5(
      words, status, content = '', tokenize = 'ascii', prefix = '1 2 3'
    )`.execute(db)
    await sql`INSERT INTO beneficiary_search (beneficiary_search, rank)
        VALUES ('secure-delete', 1)`.execute(db)
    // The words as `nameKeys()` joins the two sort keys.
    await sql`INSERT INTO beneficiary_search (rowid, words, status)
        SELECT id, CASE WHEN sort_first <> '' AND sort_last <> ''
          THEN sort_first || ' ' || sort_last ELSE sort_first || sort_last END, status
        FROM beneficiaries ORDER BY id`.execute(db)
  },
}

/**
 * Every migration of the schema, by name; names sort in the order they apply. A released
 * migration is never edited: a change to the schema is a new entry.
 */
export const SQLITE_MIGRATIONS: Readonly<Record<string, Migration>> = Object.freeze({
  '0001_core_schema': coreSchema,
  '0002_list_counters': listCounters,
  '0003_status_totals': statusTotals,
  '0004_covering_list_indexes': coveringListIndexes,
  '0005_name_key_counters': nameKeyCounters,
  '0006_write_log': writeLog,
  '0007_name_keys_folded': nameKeysFolded,
  '0008_search_secure_delete': searchSecureDelete,
})

/** Options of {@link migrateSqlite}. */
export interface MigrateSqliteOptions {
  /** Stop after this migration instead of applying all of them (older schemas, for tests). */
  readonly to?: string
  /** The migrations to apply; {@link SQLITE_MIGRATIONS} unless given (for tests). */
  readonly migrations?: Readonly<Record<string, Migration>>
}

/**
 * Brings the schema of `db` up to date with Kysely's `Migrator`; `openSqliteStorage` calls it,
 * and so does the CLI's `migrate` command. All pending migrations run in one `BEGIN IMMEDIATE`
 * transaction: when one fails, the file is left exactly as it was and the error is thrown.
 * Another process migrating the same file at the same time waits (busy timeout) and then finds
 * nothing left to do.
 *
 * Run it before anything else uses `db`: while it awaits, the connection is inside its
 * transaction.
 *
 * @returns The names of the migrations applied now, in order (empty when up to date).
 * @throws Error with the failed migration's error as `cause`.
 *
 * @example
 * const db = new Database('data.db')
 * await migrateSqlite(db) // ['0001_core_schema', '0002_list_counters'] on a new file
 */
export async function migrateSqlite(
  db: BetterSqlite3.Database,
  options: MigrateSqliteOptions = {},
): Promise<string[]> {
  const migrations = options.migrations ?? SQLITE_MIGRATIONS
  if (
    options.to === undefined &&
    pendingMigrations(db, migrations).length === 0 &&
    unknownMigrations(db, migrations).length === 0
  ) {
    return []
  }

  // Kysely runs SQLite migrations outside a transaction (its adapter claims no transactional
  // DDL); this one wraps the whole run, the migrator's own bookkeeping included.
  const kysely = new Kysely<unknown>({ dialect: new SqliteDialect({ database: db }) })
  const migrator = new Migrator({
    db: kysely,
    provider: { getMigrations: async () => ({ ...migrations }) },
  })
  db.exec('BEGIN IMMEDIATE')
  let outcome: Awaited<ReturnType<Migrator['migrateToLatest']>>
  try {
    outcome =
      options.to === undefined
        ? await migrator.migrateToLatest()
        : await migrator.migrateTo(options.to)
  } catch (error) {
    db.exec('ROLLBACK')
    throw error
  }
  if (outcome.error !== undefined) {
    db.exec('ROLLBACK')
    throw new Error('The SQLite schema migration failed; nothing was changed.', {
      cause: outcome.error,
    })
  }
  db.exec('COMMIT')
  return (outcome.results ?? [])
    .filter((result) => result.status === 'Success')
    .map((result) => result.migrationName)
}

/** Names of `migrations` not yet applied to `db`, in order; read without taking a write lock. */
export function pendingMigrations(
  db: BetterSqlite3.Database,
  migrations: Readonly<Record<string, Migration>> = SQLITE_MIGRATIONS,
): string[] {
  const applied = new Set(appliedMigrations(db))
  return Object.keys(migrations)
    .sort()
    .filter((name) => !applied.has(name))
}

/**
 * Names of migrations applied to `db` that `migrations` does not know: the file was migrated by
 * a newer version of the adapter, and this one must not use it.
 */
export function unknownMigrations(
  db: BetterSqlite3.Database,
  migrations: Readonly<Record<string, Migration>> = SQLITE_MIGRATIONS,
): string[] {
  return appliedMigrations(db).filter((name) => !Object.hasOwn(migrations, name))
}

function appliedMigrations(db: BetterSqlite3.Database): string[] {
  const table = db
    .prepare<[string], { name: string }>(`SELECT name FROM sqlite_master WHERE name = ?`)
    .get(MIGRATION_TABLE)
  if (table === undefined) return []
  return db
    .prepare<[], { name: string }>(`SELECT name FROM ${MIGRATION_TABLE} ORDER BY name`)
    .all()
    .map((row) => row.name)
}
