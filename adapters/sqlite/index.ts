/**
 * SQLite storage on better-sqlite3 and Kysely: durable, safe for several processes on one file,
 * fast at a million beneficiaries.
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
export {
  migrateSqlite,
  pendingMigrations,
  SQLITE_MIGRATIONS,
  unknownMigrations,
} from './sqlite-migrations.js'
export type { MigrateSqliteOptions } from './sqlite-migrations.js'
export { backupSqlite } from './sqlite-backup.js'
export { seedBeneficiaries } from './sqlite-seed.js'
export type { SeedResult } from './sqlite-seed.js'
export type { SqliteBeneficiaryStore } from './sqlite-beneficiary-store.js'
export type { SqliteClientStore } from './sqlite-client-store.js'
export type { SqliteSessionStore } from './sqlite-session-store.js'
export type { SqliteSigningKeyStore } from './sqlite-signing-key-store.js'
