import type BetterSqlite3 from 'better-sqlite3'
import { Kysely, Migrator, SqliteDialect, type Migration } from 'kysely'
import { coreSchema } from './sqlite-0001-core-schema.js'
import { listCounters } from './sqlite-0002-list-counters.js'
import { statusTotals } from './sqlite-0003-status-totals.js'
import { coveringListIndexes } from './sqlite-0004-covering-list-indexes.js'
import { nameKeyCounters } from './sqlite-0005-name-key-counters.js'
import { writeLog } from './sqlite-0006-write-log.js'
import { nameKeysFolded } from './sqlite-0007-name-keys-folded.js'
import { writeLogDropped } from './sqlite-0008-write-log-dropped.js'
import { searchSecureDelete } from './sqlite-0009-search-secure-delete.js'
import { events } from './sqlite-0010-events.js'
import { accessLog } from './sqlite-0011-access-log.js'
import { matchKeys } from './sqlite-0012-match-keys.js'
import { bulkJobs } from './sqlite-0013-bulk-jobs.js'
import { webhooks } from './sqlite-0014-webhooks.js'

const MIGRATION_TABLE = 'kysely_migration'

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
  '0008_write_log_dropped': writeLogDropped,
  '0009_search_secure_delete': searchSecureDelete,
  '0010_events': events,
  '0011_access_log': accessLog,
  '0012_match_keys': matchKeys,
  '0013_bulk_jobs': bulkJobs,
  '0014_webhooks': webhooks,
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
