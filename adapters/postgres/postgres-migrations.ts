import {
  Kysely,
  Migrator,
  PostgresDialect,
  sql,
  type Migration,
  type PostgresPool as KyselyPostgresPool,
  type PostgresPoolClient as KyselyPostgresPoolClient,
} from 'kysely'
import type { PostgresPool } from './postgres-driver.js'
import { schemaOf } from './postgres-config.js'
import { sortKeys } from './postgres-beneficiary-columns.js'
import { addCounts, recordCounts, SHARDS, table } from './postgres-counters.js'
import { translateStorageFailure } from './postgres-storage-failure.js'
import { eventsMigration } from './postgres-event-migration.js'
import { webhooksMigration } from './postgres-webhook-store.js'
import { matchKeysMigration } from './postgres-match-keys.js'
import { BULK_JOBS_STATEMENTS } from './postgres-0007-bulk-jobs.js'

const MIGRATION_TABLE = 'kysely_migration'

/** The UTC day of an epoch-millisecond bigint expression, rounded down also before 1970. */
function dayOf(expression: string): string {
  return `((${expression} - ((${expression} % 86400000) + 86400000) % 86400000) / 86400000)`
}

/** A migration that runs these statements, with `%s.` standing for the schema. */
function statements(texts: readonly string[]): (schema: string) => Migration {
  return (schema) => ({
    async up(db: Kysely<unknown>): Promise<void> {
      for (const text of texts) await sql.raw(text.replaceAll('%s.', `"${schema}".`)).execute(db)
    },
  })
}

const coreSchema = statements([
  // An id is never handed out twice, even after the highest one is deleted (a sequence).
  'CREATE SEQUENCE %s.beneficiary_ids',
  `CREATE TABLE %s.beneficiaries (
    id bigint PRIMARY KEY DEFAULT nextval('%s.beneficiary_ids'),
    first_name text COLLATE "C" NOT NULL,
    last_name text COLLATE "C" NOT NULL,
    email text NOT NULL,
    phone text,
    date_of_birth text,
    fiscal_code text,
    address_street text,
    address_city text,
    address_postal_code text,
    address_country text,
    metadata json NOT NULL,
    status text NOT NULL CHECK (status IN ('active', 'inactive', 'pending')),
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    version integer NOT NULL,
    sort_first text COLLATE "C" NOT NULL,
    sort_last text COLLATE "C" NOT NULL,
    words tsvector NOT NULL GENERATED ALWAYS AS (array_to_tsvector(
      string_to_array(sort_first, ' ') || string_to_array(sort_last, ' ')
    )) STORED,
    CONSTRAINT beneficiaries_address_whole CHECK (
      (address_street IS NULL) = (address_city IS NULL)
      AND (address_city IS NULL) = (address_postal_code IS NULL)
      AND (address_postal_code IS NULL) = (address_country IS NULL))
  )`,
  'ALTER SEQUENCE %s.beneficiary_ids OWNED BY %s.beneficiaries.id',
  // The fiscal-code uniqueness is the database's (D8); most records have none.
  `CREATE UNIQUE INDEX beneficiaries_fiscal_code ON %s.beneficiaries (fiscal_code)
    WHERE fiscal_code IS NOT NULL`,
  // Each index ends with the id, so it also serves the tie-break by id (D15).
  'CREATE INDEX beneficiaries_status ON %s.beneficiaries (status, id)',
  'CREATE INDEX beneficiaries_created_at ON %s.beneficiaries (created_at, id)',
  'CREATE INDEX beneficiaries_updated_at ON %s.beneficiaries (updated_at, id)',
  'CREATE INDEX beneficiaries_last_name ON %s.beneficiaries (sort_last, last_name, id)',
  'CREATE INDEX beneficiaries_first_name ON %s.beneficiaries (sort_first, first_name, id)',
  // Without a pending list, a search never reads megabytes of unmerged entries.
  `CREATE INDEX beneficiaries_words ON %s.beneficiaries USING gin (words)
    WITH (fastupdate = off)`,

  `CREATE TABLE %s.beneficiary_history (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    beneficiary_id bigint NOT NULL,
    at bigint NOT NULL,
    action text NOT NULL,
    client_id text NOT NULL,
    request_id text NOT NULL,
    changes json NOT NULL
  )`,
  `CREATE INDEX beneficiary_history_beneficiary
    ON %s.beneficiary_history (beneficiary_id, id)`,

  `CREATE TABLE %s.idempotency_keys (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    client_id text NOT NULL,
    key text NOT NULL,
    fingerprint text NOT NULL,
    beneficiary_id bigint NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    CONSTRAINT idempotency_keys_client_key UNIQUE (client_id, key)
  )`,
  'CREATE INDEX idempotency_keys_expires_at ON %s.idempotency_keys (expires_at)',

  // Updated by every write, a few rows at a time: room on each page for HOT updates.
  `CREATE TABLE %s.beneficiary_counts (
    kind text NOT NULL,
    status text NOT NULL,
    key bigint NOT NULL,
    prefix text COLLATE "C" NOT NULL,
    shard smallint NOT NULL,
    n bigint NOT NULL,
    min_id bigint NOT NULL,
    max_id bigint NOT NULL,
    CONSTRAINT beneficiary_counts_key PRIMARY KEY (kind, status, key, prefix, shard)
  ) WITH (fillfactor = 50)`,
  // The counter rows of one record: see postgres-counters.ts. Shard 0 is the bulk loader's.
  `CREATE FUNCTION %s.beneficiary_count_keys(
    bigint, text, bigint, bigint, text, text
  ) RETURNS TABLE (kind text, status text, key bigint, prefix text, shard smallint)
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT k.kind, $2, k.key, k.prefix, (1 + $1 % ${SHARDS})::smallint FROM (VALUES
      ('s', 0::bigint, ''),
      ('d', ${dayOf('$3')}, ''),
      ('b', $1 >> 10, ''),
      ('u', ${dayOf('$4')}, ''),
      ('f', 0::bigint, left($5, 2)),
      ('l', 0::bigint, left($6, 2))
    ) AS k (kind, key, prefix)
  $$`,

  `CREATE TABLE %s.clients (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE,
    name text NOT NULL,
    secret_hash text NOT NULL,
    scopes json NOT NULL,
    created_at bigint NOT NULL,
    revoked_at bigint
  )`,
  `CREATE TABLE %s.sessions (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE,
    client_id text NOT NULL REFERENCES %s.clients (id),
    refresh_token_hash text NOT NULL UNIQUE,
    scopes json NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    revoked_at bigint
  )`,
  `CREATE TABLE %s.revoked_tokens (
    jti text PRIMARY KEY,
    expires_at bigint NOT NULL
  )`,
  'CREATE INDEX revoked_tokens_expires_at ON %s.revoked_tokens (expires_at)',
  `CREATE TABLE %s.signing_keys (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kid text NOT NULL UNIQUE,
    secret text NOT NULL,
    created_at bigint NOT NULL
  )`,
])

/**
 * Where each named bulk load of `seedPostgres` stands: how many of its records are committed,
 * written in the transaction of each batch, so that a load stopped part-way resumes after them.
 */
const bulkLoads = statements([
  `CREATE TABLE %s.bulk_loads (
    name text PRIMARY KEY,
    started_at bigint NOT NULL,
    done bigint NOT NULL,
    first_id bigint,
    last_id bigint,
    finished_at bigint
  )`,
])

/**
 * The access log (D35): one row per answer that carried personal data, ids only, and one row
 * per record named in it, keyed to read one person's log in order; no foreign key, as the log
 * of a deleted record outlives it until its retention. The index on the history's `at` lets
 * retention (D37) find expired history entries.
 */
const accessLog = statements([
  `CREATE TABLE %s.access_log (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at bigint NOT NULL,
    client_id text NOT NULL,
    request_id text NOT NULL,
    operation text NOT NULL,
    purpose text,
    beneficiary_ids text NOT NULL
  )`,
  'CREATE INDEX access_log_at ON %s.access_log (at, id)',
  'CREATE INDEX access_log_client ON %s.access_log (client_id, at, id)',
  `CREATE TABLE %s.access_log_records (
    beneficiary_id bigint NOT NULL,
    at bigint NOT NULL,
    entry_id bigint NOT NULL,
    PRIMARY KEY (beneficiary_id, at, entry_id)
  )`,
  'CREATE INDEX access_log_records_entry ON %s.access_log_records (entry_id)',
  'CREATE INDEX beneficiary_history_at ON %s.beneficiary_history (at, id)',
])

/** Records per statement of `nameKeysFolded`. */
const REKEYED_ROWS = 10_000

interface NamedRow {
  readonly id: string
  readonly first_name: string
  readonly last_name: string
  readonly sort_first: string
  readonly sort_last: string
}

/**
 * `searchTerms()` now folds letters that keep their mark when decomposed (`ł`, `ø`, `đ`) and
 * ligatures (`æ`, `œ`, `ß`): the sort keys of every record whose names hold a letter outside
 * ASCII are computed again, and those that changed are written (the search words follow, being
 * generated from them), with their counters moved from the old keys to the new as an update
 * moves them, the version of searches' totals included.
 */
function nameKeysFolded(schema: string): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const beneficiaries = table(schema, 'beneficiaries')
      for (let after = 0; ;) {
        const { rows } = await sql<NamedRow>`
          SELECT id, first_name, last_name, sort_first, sort_last FROM ${beneficiaries}
          WHERE id > ${after} AND (first_name ~ '[^ -~]' OR last_name ~ '[^ -~]')
          ORDER BY id LIMIT ${REKEYED_ROWS}`.execute(db)
        if (rows.length === 0) return
        after = Number(rows.at(-1)!.id)
        const rekeyed = rows
          .map((row) => ({ id: Number(row.id), row, keys: sortKeys(row) }))
          .filter(
            ({ row, keys }) =>
              keys.sort_first !== row.sort_first || keys.sort_last !== row.sort_last,
          )
          .map(({ id, keys }) => ({ id, ...keys }))
        if (rekeyed.length === 0) continue
        await sql`
          WITH input AS (
            SELECT * FROM json_to_recordset(${JSON.stringify(rekeyed)}::json)
              AS r (id bigint, sort_first text, sort_last text)),
          old AS (
            SELECT b.id, b.status, b.created_at, b.updated_at, b.sort_first, b.sort_last
            FROM ${beneficiaries} b JOIN input USING (id)),
          renamed AS (
            UPDATE ${beneficiaries} b
            SET sort_first = input.sort_first, sort_last = input.sort_last
            FROM input WHERE b.id = input.id
            RETURNING b.id, b.status, b.created_at, b.updated_at, b.sort_first, b.sort_last)
          ${addCounts(
            schema,
            sql`SELECT kind, status, key, prefix, shard, sum(n)::bigint, min(min_id), max(max_id)
              FROM ((${recordCounts(schema, 'old', -1)})
                UNION ALL (${recordCounts(schema, 'renamed', 1)}))
                AS c (kind, status, key, prefix, shard, n, min_id, max_id)
              GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0
              ORDER BY 1, 2, 3, 4, 5`,
          )}`.execute(db)
      }
    },
  }
}

/**
 * Every migration of the schema, by name, for the tables of `schema`; names sort in the order
 * they apply. A released migration is never edited: a change to the schema is a new entry.
 */
export function postgresMigrations(schema: string): Readonly<Record<string, Migration>> {
  return Object.freeze({
    '0001_core_schema': coreSchema(schema),
    '0002_name_keys_folded': nameKeysFolded(schema),
    '0003_bulk_loads': bulkLoads(schema),
    '0004_events': eventsMigration(schema),
    '0005_access_log': accessLog(schema),
    '0006_match_keys': matchKeysMigration(schema),
    '0007_bulk_jobs': statements(BULK_JOBS_STATEMENTS)(schema),
    '0008_webhooks': webhooksMigration(schema),
  })
}

/** Options of {@link migratePostgres}. */
export interface MigratePostgresOptions {
  /** The schema to migrate, created when missing. Default `public`. */
  readonly schema?: string
}

/**
 * Brings the schema up to date with Kysely's `Migrator` on its `PostgresDialect`:
 * `openPostgresStorage` calls it unless told not to, and so does the CLI's `migrate`. The
 * pending migrations run in one transaction, holding the migrator's advisory lock: two
 * processes that start at once on an empty database both come up, one migrating while the
 * other waits and then finds nothing left to do. When a migration fails, nothing is changed.
 *
 * @param pool A pool (a `pg.Pool`, say); it stays open.
 * @returns The names of the migrations applied now, in order (empty when up to date).
 * @throws Error with the failed migration's error as `cause`; `StorageUnavailableError` when
 * the database cannot be reached.
 *
 * @example
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 * await migratePostgres(pool) // ['0001_core_schema'] on a new database
 */
export async function migratePostgres(
  pool: PostgresPool,
  options: MigratePostgresOptions = {},
): Promise<string[]> {
  const schema = schemaOf(options)
  const migrations = postgresMigrations(schema)
  const applied = await appliedMigrations(pool, schema)
  const unknown = applied.filter((name) => !Object.hasOwn(migrations, name))
  if (unknown.length > 0) {
    throw new Error(
      `The database was migrated by a newer version (${unknown.join(', ')}): upgrade the adapter.`,
    )
  }
  if (Object.keys(migrations).every((name) => applied.includes(name))) return []

  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: kyselyPool(pool) }) })
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => ({ ...migrations }) },
    migrationTableSchema: schema,
  })
  let outcome: Awaited<ReturnType<Migrator['migrateToLatest']>>
  try {
    outcome = await migrator.migrateToLatest()
  } catch (error) {
    throw translateStorageFailure(error)
  }
  if (outcome.error !== undefined) {
    const failure = translateStorageFailure(outcome.error)
    if (failure !== outcome.error) throw failure
    throw new Error('The PostgreSQL schema migration failed; nothing was changed.', {
      cause: outcome.error,
    })
  }
  return (outcome.results ?? [])
    .filter((result) => result.status === 'Success')
    .map((result) => result.migrationName)
}

/**
 * The pool as Kysely's dialect takes it: connections that run text with parameters, and an
 * `end` that leaves the pool open (it is the caller's, or the storage's).
 */
function kyselyPool(pool: PostgresPool): KyselyPostgresPool {
  return {
    connect: async () => {
      const client = await pool.connect()
      return {
        query: (text: string, parameters: readonly unknown[]) =>
          client.query(text, [...parameters]),
        release: () => client.release(),
      } as unknown as KyselyPostgresPoolClient
    },
    end: async () => undefined,
  }
}

/** Names of the migrations of this adapter not yet applied to `schema`, in order. */
export async function pendingMigrations(pool: PostgresPool, schema: string): Promise<string[]> {
  const applied = new Set(await appliedMigrations(pool, schema))
  return Object.keys(postgresMigrations(schema))
    .sort()
    .filter((name) => !applied.has(name))
}

/** Names of migrations applied to `schema` that this adapter does not know. */
export async function unknownMigrations(pool: PostgresPool, schema: string): Promise<string[]> {
  const known = postgresMigrations(schema)
  return (await appliedMigrations(pool, schema)).filter((name) => !Object.hasOwn(known, name))
}

async function appliedMigrations(pool: PostgresPool, schema: string): Promise<string[]> {
  try {
    // `to_regclass` answers NULL, not an error, while the table does not exist.
    const table = `"${schema}".${MIGRATION_TABLE}`
    const found = await pool.query({
      text: 'SELECT to_regclass($1) IS NOT NULL AS found',
      values: [table],
    })
    if (!(found.rows[0] as { found: boolean }).found) return []
    const result = await pool.query({ text: `SELECT name FROM ${table} ORDER BY name` })
    return (result.rows as { name: string }[]).map((row) => row.name)
  } catch (error) {
    throw translateStorageFailure(error)
  }
}
