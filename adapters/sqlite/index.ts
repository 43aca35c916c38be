/**
 * SQLite storage on better-sqlite3 and Kysely: durable, safe for several processes on one file,
 * fast at a million beneficiaries.
 *
 * `openSqliteStorage(config)` is all most hosts need. A host that opens its own connection
 * passes it through `applySqlitePragmas` and `migrateSqlite` to `new SqliteStorage(db)`.
 * `backupSqlite` copies a live database; `seedBeneficiaries` loads records in bulk.
 *
 * `better-sqlite3` and `kysely` are optional peer dependencies, installed by the host that uses
 * this adapter: without them, importing this module fails with a `MissingPeerDependencyError`
 * naming both and the command that installs them (rather than the module loader's message about
 * whichever file it met first). The adapter's modules are therefore loaded here with a dynamic
 * import, and this entry point uses top-level `await`: load it with `import`, not `require`.
 *
 * @example
 * import { openSqliteStorage } from 'beneficiary-service/sqlite'
 * const storage = await openSqliteStorage({ path: 'data.db' })
 */
import { importWithPeers } from '../../core/missing-peer-dependency-error.js'
import { SQLITE_PEERS } from './sqlite-config.js'
import type { SqliteStorage as SqliteStorageClass } from './sqlite-storage.js'

const [storage, pragmas, migrations, backup, seed] = await importWithPeers(
  'beneficiary-service/sqlite',
  SQLITE_PEERS,
  () =>
    Promise.all([
      import('./sqlite-storage.js'),
      import('./sqlite-pragmas.js'),
      import('./migrations/sqlite-migrations.js'),
      import('./sqlite-storage.js'),
      import('./sqlite-seed.js'),
    ]),
)

/** Opens (creating it) a database file, sets its pragmas and migrates it. See `SqliteStorage`. */
export const openSqliteStorage = storage.openSqliteStorage
/** Every storage port on one better-sqlite3 connection (documented in `sqlite-storage.ts`). */
export const SqliteStorage = storage.SqliteStorage
export type SqliteStorage = SqliteStorageClass
/** Sets a connection up the way the adapter relies on (WAL, `synchronous=FULL`, …). */
export const applySqlitePragmas = pragmas.applySqlitePragmas
/** Brings the schema of a connection up to date, in one transaction. */
export const migrateSqlite = migrations.migrateSqlite
/** Copies a live database to a file with SQLite's online backup API. */
export const backupSqlite = backup.backupSqlite
/** Loads records in bulk. */
export const seedBeneficiaries = seed.seedBeneficiaries
export type { SqliteStorageOptions } from './sqlite-storage.js'
export type { SqliteConfig } from './sqlite-config.js'
export type { SqlitePragmaOptions } from './sqlite-pragmas.js'
export type { MigrateSqliteOptions } from './migrations/sqlite-migrations.js'
export type { SeedResult } from './sqlite-seed.js'
export type { WriterSettings } from './threads/sqlite-writer-protocol.js'
// Beyond the port: `retainedHistory`, for audits.
export type { SqliteBeneficiaryStore } from './writes/sqlite-beneficiary-store.js'
