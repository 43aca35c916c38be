/**
 * PostgreSQL storage on node-postgres (`pg`) and Kysely: several stateless instances of the
 * service on one database, every rule holding as for one (D30), fast at a million beneficiaries.
 *
 * `openPostgresStorage(options)` is all most hosts need. `migratePostgres` brings a schema up
 * to date on a pool of the host's; `seedPostgres` loads records in bulk.
 *
 * `pg` and `kysely` are optional peer dependencies, installed by the host that uses this
 * adapter: without `kysely`, importing this module fails with a `MissingPeerDependencyError`
 * naming both and the command that installs them; without `pg`, opening a storage from a
 * connection string does (`pg` is loaded only then: a host may pass a pool of its own). The
 * adapter's modules are therefore loaded here with a dynamic import, and this entry point uses
 * top-level `await`: load it with `import`, not `require`.
 *
 * @example
 * import { openPostgresStorage } from 'beneficiary-service/postgres'
 * const storage = await openPostgresStorage({ connectionString: process.env.DATABASE_URL })
 */
import { importWithPeers } from '../../core/missing-peer-dependency-error.js'
import { POSTGRES_PEERS } from './postgres-driver.js'
import type { PostgresStorage as PostgresStorageClass } from './postgres-storage.js'

const [storage, migrations, seed] = await importWithPeers(
  'beneficiary-service/postgres',
  POSTGRES_PEERS,
  () =>
    Promise.all([
      import('./postgres-storage.js'),
      import('./postgres-migrations.js'),
      import('./postgres-seed.js'),
    ]),
)

/** Opens a storage on a pool (its own, from a connection string, or the host's) and migrates it. */
export const openPostgresStorage = storage.openPostgresStorage
/** Every storage port on a PostgreSQL database (documented in `postgres-storage.ts`). */
export const PostgresStorage = storage.PostgresStorage
export type PostgresStorage = PostgresStorageClass
export type { PostgresPoolUsage } from './postgres-storage.js'
/** Brings a schema up to date on a pool of the host's, in one transaction. */
export const migratePostgres = migrations.migratePostgres
/** Loads records in bulk, in batches that commit; a named load resumes where it stopped. */
export const seedPostgres = seed.seedPostgres
export type { PostgresStorageOptions } from './postgres-config.js'
export type {
  PostgresPool,
  PostgresPoolClient,
  PostgresQueryConfig,
  PostgresQueryResult,
  PostgresTypes,
  PostgresTypeParser,
} from './postgres-driver.js'
export type { MigratePostgresOptions } from './postgres-migrations.js'
export type {
  PostgresSeedOptions,
  PostgresSeedResult,
  PostgresSeedSource,
  PostgresSeedStart,
} from './postgres-seed.js'
// Beyond the port: `retainedHistory`, for audits.
export type { PostgresBeneficiaryStore } from './postgres-beneficiary-store.js'
