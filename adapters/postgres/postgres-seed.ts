import { sql } from 'kysely'
import type { NewBeneficiary } from '../../core/ports/beneficiary-store.js'
import {
  sortKeys,
  toColumns,
  WRITTEN_COLUMNS,
  type ColumnValues,
} from './postgres-beneficiary-columns.js'
import { addCounts, table } from './postgres-counters.js'
import type { PostgresPoolClient } from './postgres-driver.js'
import { PostgresQuery, slot } from './postgres-query.js'
import type { PostgresStorage } from './postgres-storage.js'
import { translateStorageFailure } from './postgres-storage-failure.js'

/** Records sent per statement, each column as one array parameter. */
const BATCH = 10_000

/** The array type of each written column's parameter. */
const ARRAY_TYPES: { readonly [C in keyof ColumnValues]: string } = {
  first_name: 'text[]',
  last_name: 'text[]',
  email: 'text[]',
  phone: 'text[]',
  date_of_birth: 'text[]',
  fiscal_code: 'text[]',
  address_street: 'text[]',
  address_city: 'text[]',
  address_postal_code: 'text[]',
  address_country: 'text[]',
  metadata: 'json[]',
  status: 'text[]',
  created_at: 'bigint[]',
  updated_at: 'bigint[]',
  version: 'integer[]',
  sort_first: 'text[]',
  sort_last: 'text[]',
}

/** What {@link seedPostgres} added. */
export interface PostgresSeedResult {
  /** Id of the first record added; the others have higher ids. */
  readonly firstId: number
  /** Id of the last record added. */
  readonly lastId: number
  /** How many records were added. */
  readonly count: number
}

/**
 * Adds `records` to a PostgreSQL storage in bulk, for demonstrations and benchmarks (the CLI's
 * `seed` passes made-up ones). Each is stored as created pending and, unless still pending,
 * changed to its status at its `updated_at`: version 1 or 2, a `created` history entry, and a
 * `status_changed` one unless pending, all by the client `seed`.
 *
 * It writes in one transaction on one connection, bypassing the port: the records go in
 * batches of ten thousand, each column one array parameter (`unnest`); the history entries and
 * the counters follow from the rows, one `INSERT … SELECT` each, after the last batch. Then it
 * runs `VACUUM ANALYZE` on the tables, so that the planner knows them and index-only scans need
 * not visit the rows. A million records take about a minute.
 *
 * @param onProgress Called after each batch with the number of records added so far.
 * @throws Error (the driver's) when a record breaks a constraint, such as a fiscal code that is
 * taken; nothing is added then. `StorageUnavailableError` when the database cannot be reached.
 *
 * @example
 * const storage = await openPostgresStorage({ connectionString })
 * await seedPostgres(storage, fakeBeneficiaries({ count: 1_000_000 }), (n) => console.log(n))
 */
export async function seedPostgres(
  storage: PostgresStorage,
  records: Iterable<NewBeneficiary>,
  onProgress?: (count: number) => void,
): Promise<PostgresSeedResult> {
  await storage.ping()
  const schema = storage.schema
  const beneficiaries = table(schema, 'beneficiaries')
  const columns = WRITTEN_COLUMNS.map((column) => sql.ref(column))
  const arrays = WRITTEN_COLUMNS.map(
    (column) => sql`${slot(column)}::${sql.raw(ARRAY_TYPES[column])}`,
  )
  const insert = new PostgresQuery(sql`
    WITH added AS (
      INSERT INTO ${beneficiaries} (${sql.join(columns)})
      SELECT * FROM unnest(${sql.join(arrays)})
      RETURNING id)
    SELECT min(id), max(id), count(*) FROM added`)
  const seeded = sql`FROM ${beneficiaries} WHERE id BETWEEN ${slot('first')} AND ${slot('last')}`
  const history = table(schema, 'beneficiary_history')
  const created = new PostgresQuery(sql`
    INSERT INTO ${history} (beneficiary_id, at, action, client_id, request_id, changes)
    SELECT id, created_at, 'created', 'seed', 'seed-' || id, json_build_array(
      json_build_object('field', 'first_name', 'old', NULL, 'new', first_name),
      json_build_object('field', 'last_name', 'old', NULL, 'new', last_name))
    ${seeded}`)
  const statusChanged = new PostgresQuery(sql`
    INSERT INTO ${history} (beneficiary_id, at, action, client_id, request_id, changes)
    SELECT id, updated_at, 'status_changed', 'seed', 'seed-' || id || '-status',
      json_build_array(json_build_object('field', 'status', 'old', 'pending', 'new', status))
    ${seeded} AND status <> 'pending'`)
  // Counted in shard 0, the bulk loader's, one row per key.
  const counted = new PostgresQuery(
    addCounts(
      schema,
      sql`SELECT k.kind, k.status, k.key, k.prefix, 0::smallint, count(*), min(b.id), max(b.id)
        FROM ${beneficiaries} b CROSS JOIN LATERAL ${table(schema, 'beneficiary_count_keys')}(
          b.id, b.status, b.created_at, b.updated_at, b.sort_first, b.sort_last) k
        WHERE b.id BETWEEN ${slot('first')} AND ${slot('last')}
        GROUP BY 1, 2, 3, 4
        UNION ALL SELECT 'v', '', 0, '', 0::smallint, ${slot('count')}::bigint, 0, 0
        ORDER BY 1, 2, 3, 4, 5`,
    ),
  )

  let client: PostgresPoolClient
  try {
    client = await storage.pool.connect()
  } catch (error) {
    throw translateStorageFailure(error)
  }
  let result: PostgresSeedResult
  let failure: unknown
  try {
    // Bulk statements run longer than the storage's statement_timeout allows a request.
    await client.query('SET statement_timeout = 0')
    await client.query('BEGIN')
    let firstId = 0
    let lastId = 0
    let count = 0
    // The names come from short lists: their keys are worth computing once.
    const keysByName = new Map<string, ReturnType<typeof sortKeys>>()
    let batch: ColumnValues[] = []
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return
      const values: Record<string, unknown[]> = {}
      for (const column of WRITTEN_COLUMNS) values[column] = batch.map((row) => row[column])
      const [min, max, n] = (await insert.arrays(client, values))[0] as [number, number, number]
      if (count === 0) firstId = min
      lastId = max
      count += n
      batch = []
      onProgress?.(count)
    }
    for (const record of records) {
      const name = `${record.first_name}\u0000${record.last_name}`
      let keys = keysByName.get(name)
      if (keys === undefined) {
        keys = sortKeys(record)
        keysByName.set(name, keys)
      }
      batch.push(toColumns(record, record.status === 'pending' ? 1 : 2, keys))
      if (batch.length >= BATCH) await flush()
    }
    await flush()
    if (count > 0) {
      const range = { first: firstId, last: lastId, count }
      await created.run(client, range)
      await statusChanged.run(client, range)
      await counted.run(client, range)
    }
    await client.query('COMMIT')
    result = { firstId, lastId, count }
    if (count > 0) {
      const names = ['beneficiaries', 'beneficiary_history', 'beneficiary_counts']
      await client.query(
        `VACUUM (ANALYZE) ${names.map((name) => `"${schema}".${name}`).join(', ')}`,
      )
    }
    await client.query('RESET statement_timeout')
  } catch (error) {
    failure = error
    await client.query('ROLLBACK').catch(() => undefined)
    throw translateStorageFailure(error)
  } finally {
    client.release(failure instanceof Error ? failure : undefined)
  }
  return result
}
