/**
 * SQLite storage on better-sqlite3 and Kysely: durable, safe for several processes on one file,
 * fast at a million beneficiaries.
 *
 * `openSqliteStorage(config)` is all most hosts need. A host that opens its own connection
 * passes it through `applySqlitePragmas` and `migrateSqlite` to `new SqliteStorage(db)`.
 * `backupSqlite` copies a live database; `seedBeneficiaries` loads records in bulk.
 *
 * @example
 * import { openSqliteStorage } from 'beneficiary-service/sqlite'
 * const storage = await openSqliteStorage({ path: 'data.db' })
 */
export { openSqliteStorage, SqliteStorage } from './sqlite-storage.js'
export type { SqliteStorageOptions } from './sqlite-storage.js'
export type { SqliteConfig } from './sqlite-config.js'
export { applySqlitePragmas } from './sqlite-pragmas.js'
export type { SqlitePragmaOptions } from './sqlite-pragmas.js'
export { migrateSqlite } from './sqlite-migrations.js'
export type { MigrateSqliteOptions } from './sqlite-migrations.js'
export { backupSqlite } from './sqlite-backup.js'
export { seedBeneficiaries } from './sqlite-seed.js'
export type { SeedResult } from './sqlite-seed.js'
// Beyond the port: `retainedHistory`, for audits.
export type { SqliteBeneficiaryStore } from './sqlite-beneficiary-store.js'
