/**
 * PostgreSQL storage on node-postgres (`pg`, an optional peer dependency loaded only here) and
 * Kysely: several stateless instances of the service on one database, every rule holding as
 * for one (D30), fast at a million beneficiaries.
 *
 * `openPostgresStorage(options)` is all most hosts need. `migratePostgres` brings a schema up
 * to date on a pool of the host's; `seedPostgres` loads records in bulk.
 *
 * @example
 * import { openPostgresStorage } from 'beneficiary-service/postgres'
 * const storage = await openPostgresStorage({ connectionString: process.env.DATABASE_URL })
 */
export { openPostgresStorage, PostgresStorage } from './postgres-storage.js'
export type { PostgresPoolUsage } from './postgres-storage.js'
export type { PostgresStorageOptions } from './postgres-config.js'
export type {
  PostgresPool,
  PostgresPoolClient,
  PostgresQueryConfig,
  PostgresQueryResult,
  PostgresTypes,
  PostgresTypeParser,
} from './postgres-driver.js'
export { migratePostgres } from './postgres-migrations.js'
export type { MigratePostgresOptions } from './postgres-migrations.js'
export { seedPostgres } from './postgres-seed.js'
export type { PostgresSeedResult } from './postgres-seed.js'
// Beyond the port: `retainedHistory`, for audits.
export type { PostgresBeneficiaryStore } from './postgres-beneficiary-store.js'
