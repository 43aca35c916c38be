import { createHash } from 'node:crypto'
import pg from 'pg'
import { openPostgresStorage } from '../../adapters/postgres/index.js'
import type { Storage } from '../../core/index.js'
import {
  ACCESS_LOG_TABLES,
  openSqliteWorld,
  storageDigest,
  type SqliteWorld,
} from './hostile-fixtures.js'
import { postgresSkip, POSTGRES_URL } from '../support/postgres-database.js'
import { FakeClock, createBeneficiaryService } from '../../core/index.js'
import { createHandler } from '../../server/handler.js'
import { nodeSha256 } from '../../server/node-sha256.js'
import { NO_LIMITS, T0 } from './hostile-fixtures.js'

/**
 * A world of the hostile suites on any storage: the `SqliteWorld`'s service, handler and
 * clients, and a digest of everything the storage holds.
 */
export type HostileWorld = Omit<SqliteWorld, 'storage' | 'directory'> & {
  readonly storage: Storage
  /** Equal digests mean nothing was stored, changed or removed in between. */
  digest(): Promise<string>
}

/** A storage the hostile suites run on: how to open its world, or why it is skipped. */
export interface HostileStorage {
  readonly name: string
  readonly skip: string | false
  open(prefix: string): Promise<HostileWorld>
}

/** SQLite on disk, the production default, and PostgreSQL in a schema of its own. */
export async function hostileStorages(): Promise<HostileStorage[]> {
  return [
    {
      name: 'SQLite',
      skip: false,
      open: async (prefix) => {
        const world = await openSqliteWorld(prefix)
        return { ...world, digest: () => Promise.resolve(storageDigest(world.storage.database)) }
      },
    },
    { name: 'PostgreSQL', skip: await postgresSkip(), open: openPostgresWorld },
  ]
}

async function openPostgresWorld(prefix: string): Promise<HostileWorld> {
  const schema = `hostile_${prefix.replace(/[^a-z0-9]/g, '_')}_${Math.random().toString(36).slice(2, 8)}`
  const storage = await openPostgresStorage({ connectionString: POSTGRES_URL, schema, poolSize: 4 })
  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  await admin.connect()
  const clock = new FakeClock(T0)
  const service = await createBeneficiaryService({
    storage,
    clock,
    limits: NO_LIMITS,
    sha256: nodeSha256,
  })
  const writer = await service.clients.create({ name: 'writer', scopes: ['read', 'write'] })
  const reader = await service.clients.create({ name: 'reader', scopes: ['read'] })
  return {
    storage,
    clock,
    service,
    handler: createHandler(service),
    writer,
    reader,
    digest: () => postgresDigest(admin, schema),
    close: async () => {
      await storage.close()
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await admin.end()
    },
  }
}

/**
 * Every row of every table of the schema, each table's rows in a fixed order, hashed: the
 * PostgreSQL counterpart of `storageDigest` (counters and claims included, the access log left
 * out).
 */
async function postgresDigest(client: pg.Client, schema: string): Promise<string> {
  const tables = await client.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY table_name`,
    [schema],
  )
  const hash = createHash('sha256')
  for (const { name } of tables.rows) {
    if (ACCESS_LOG_TABLES.has(name)) continue
    const rows = await client.query<{ digest: string | null }>(
      `SELECT md5(string_agg(t::text, E'\\n' ORDER BY t::text)) AS digest FROM "${schema}"."${name}" t`,
    )
    hash.update(`${name}\u0000${rows.rows[0]?.digest ?? ''}\u0001`)
  }
  return hash.digest('hex')
}
