import { sql } from 'kysely'
import type { NewBeneficiary } from '../../core/ports/beneficiary-store.js'
import {
  sortKeys,
  toColumns,
  WRITTEN_COLUMNS,
  type ColumnValues,
} from './postgres-beneficiary-columns.js'
import { integerOption } from './postgres-config.js'
import { addCounts, table } from './postgres-counters.js'
import type { PostgresPoolClient } from './postgres-driver.js'
import { PostgresQuery, slot, type Queryable } from './postgres-query.js'
import type { PostgresStorage } from './postgres-storage.js'
import { translateStorageFailure } from './postgres-storage-failure.js'

/** Records per transaction unless `batchSize` says otherwise. */
const BATCH = 10_000

/**
 * The longest delay a Node.js timer takes (about 24.8 days): in effect no client-side timeout.
 * node-postgres reads a query's own `query_timeout` before the pool's, but not a zero.
 */
const NO_READ_TIMEOUT = 2_147_483_647

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

/** Options of {@link seedPostgres}. */
export interface PostgresSeedOptions {
  /**
   * Names the load, so that it can resume: called again with the same name and the same
   * records, a load that stopped part-way (killed, or a failure) goes on after the records it
   * committed, and one that finished adds nothing. At most 200 characters. Without a name,
   * every call adds its records, and a load that stops keeps the batches it committed.
   */
  readonly name?: string
  /** Records per transaction, 1 to 100,000. Default 10,000. */
  readonly batchSize?: number
  /** Called after each committed batch with the number of records of the load committed. */
  readonly onProgress?: (count: number) => void
}

/** Where a load stands when {@link seedPostgres} starts on it. */
export interface PostgresSeedStart {
  /**
   * When the load first started, epoch ms: a generator of made-up records takes it as its
   * clock, so that a resumed load makes the records the first call made.
   */
  readonly startedAt: number
  /** Records committed by earlier calls, which `seedPostgres` passes over. */
  readonly done: number
}

/**
 * The records of a load, from the first: an iterable, or a function that makes one from where
 * the load stands (for records that depend on when the load first started).
 */
export type PostgresSeedSource =
  Iterable<NewBeneficiary> | ((start: PostgresSeedStart) => Iterable<NewBeneficiary>)

/** What {@link seedPostgres} loaded. */
export interface PostgresSeedResult {
  /** Id of the first record of the load (0 when it has none); the others have higher ids. */
  readonly firstId: number
  /** Id of the last record of the load. */
  readonly lastId: number
  /** Records of the load, those committed by earlier calls of a named load included. */
  readonly count: number
  /** Records this call added. */
  readonly added: number
}

/**
 * Adds records to a PostgreSQL storage in bulk, for demonstrations and benchmarks (the CLI's
 * `seed` passes made-up ones). Each is stored as created pending and, unless still pending,
 * changed to its status at its `updated_at`: version 1 or 2, a `created` history entry, and a
 * `status_changed` one unless pending, all by the client `seed`.
 *
 * It bypasses the port, on one connection, with no statement timeout on either side: the
 * records go in batches (`batchSize`, default 10,000), each column one array parameter
 * (`unnest`), and each batch is one transaction with its history entries, its counters and,
 * for a named load, the load's progress in `bulk_loads`. A failure loses only the batch in
 * progress; called again, a named load goes on after its last committed batch (two calls at
 * once cannot both add the same batch: the second fails). The records are made as they are
 * read, so memory stays flat whatever their number. Once the records are in, it runs
 * `VACUUM ANALYZE` on the tables, so that the planner knows them and index-only scans need not
 * visit the rows; only then is a named load finished. A million records take about a minute.
 *
 * @throws TypeError for invalid options; Error when another call added to the same load
 * meanwhile, or when `records` yield fewer records than the load already has; the driver's
 * Error when a record breaks a constraint, such as a fiscal code that is taken (its batch is
 * not added); `StorageUnavailableError` when the database cannot be reached.
 *
 * @example
 * const storage = await openPostgresStorage({ connectionString })
 * await seedPostgres(storage, ({ startedAt }) => fakeBeneficiaries({ count: 1e6, now: startedAt }), {
 *   name: 'demo',
 *   onProgress: (n) => console.log(n),
 * })
 */
export async function seedPostgres(
  storage: PostgresStorage,
  records: PostgresSeedSource,
  options: PostgresSeedOptions = {},
): Promise<PostgresSeedResult> {
  const batchSize = integerOption('batchSize', options.batchSize, BATCH, 1, 100_000)
  const name = options.name
  if (name !== undefined && (typeof name !== 'string' || name === '' || name.length > 200)) {
    throw new TypeError('name must be a string of 1 to 200 characters')
  }
  await storage.ping()
  const statements = seedStatements(storage.schema)

  let client: PostgresPoolClient
  try {
    client = await storage.pool.connect()
  } catch (error) {
    throw translateStorageFailure(error)
  }
  // Every statement of the load may run for as long as it needs.
  const db: Queryable = {
    query: (config) => client.query({ ...config, query_timeout: NO_READ_TIMEOUT }),
  }
  const run = async (text: string): Promise<void> => {
    await db.query({ text })
  }
  let failure: unknown
  try {
    let started = { startedAt: Date.now(), done: 0, firstId: 0, lastId: 0, finished: false }
    if (name !== undefined) {
      await statements.open.run(db, { name, now: started.startedAt })
      const [row] = await statements.read.arrays(db, { name })
      const [startedAt, done, firstId, lastId, finishedAt] = row as (number | null)[]
      started = {
        startedAt: startedAt!,
        done: done!,
        firstId: firstId ?? 0,
        lastId: lastId ?? 0,
        finished: finishedAt !== null,
      }
    }
    let { firstId, lastId, done } = started
    if (started.finished) return { firstId, lastId, count: done, added: 0 }
    await run('SET statement_timeout = 0')

    // The names come from short lists: their keys are worth computing once.
    const keysByName = new Map<string, ReturnType<typeof sortKeys>>()
    let batch: ColumnValues[] = []
    let added = 0
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return
      const values: Record<string, unknown> = { name: name ?? null }
      for (const column of WRITTEN_COLUMNS) values[column] = batch.map((row) => row[column])
      await run('BEGIN')
      if (name !== undefined) {
        const [row] = await statements.lock.arrays(db, { name })
        if (row?.[0] !== done) {
          throw new Error(`another call added to the load "${name}" meanwhile; nothing more added`)
        }
      }
      const [row] = await statements.insert.arrays(db, values)
      await run('COMMIT')
      const [min, max, n] = row as [number, number, number]
      if (firstId === 0) firstId = min
      lastId = max
      done += n
      added += n
      batch = []
      options.onProgress?.(done)
    }

    let skip = started.done
    const source =
      typeof records === 'function'
        ? records({ startedAt: started.startedAt, done: started.done })
        : records
    for (const record of source) {
      if (skip > 0) {
        skip--
        continue
      }
      const key = `${record.first_name}\u0000${record.last_name}`
      let keys = keysByName.get(key)
      if (keys === undefined) {
        keys = sortKeys(record)
        keysByName.set(key, keys)
      }
      batch.push(toColumns(record, record.status === 'pending' ? 1 : 2, keys))
      if (batch.length >= batchSize) await flush()
    }
    await flush()
    if (skip > 0) {
      throw new Error(
        `the records end before the ${started.done} the load "${String(name)}" already has: they are not its records`,
      )
    }
    const names = ['beneficiaries', 'beneficiary_history', 'beneficiary_counts']
    await run(`VACUUM (ANALYZE) ${names.map((table) => `"${storage.schema}".${table}`).join(', ')}`)
    if (name !== undefined) await statements.finish.run(db, { name, now: Date.now() })
    await run('RESET statement_timeout')
    return { firstId, lastId, count: done, added }
  } catch (error) {
    failure = error
    await client.query('ROLLBACK').catch(() => undefined)
    throw translateStorageFailure(error)
  } finally {
    // A connection that failed, with the load's settings, is dropped rather than reused.
    client.release(failure instanceof Error ? failure : undefined)
  }
}

/** The statements of a load into the tables of `schema`. */
function seedStatements(schema: string): {
  readonly open: PostgresQuery
  readonly read: PostgresQuery
  readonly lock: PostgresQuery
  readonly insert: PostgresQuery
  readonly finish: PostgresQuery
} {
  const loads = table(schema, 'bulk_loads')
  const beneficiaries = table(schema, 'beneficiaries')
  const columns = WRITTEN_COLUMNS.map((column) => sql.ref(column))
  const arrays = WRITTEN_COLUMNS.map(
    (column) => sql`${slot(column)}::${sql.raw(ARRAY_TYPES[column])}`,
  )
  // One statement per batch: the records, their history (`created`, then `status_changed` unless
  // pending, in that order of ids), their counters in shard 0, the bulk loader's, one row per
  // key, and the load's progress. Each part reads the records the batch added, never an id
  // range, which could hold records created meanwhile through the port.
  const insert = new PostgresQuery(sql`
    WITH added AS (
      INSERT INTO ${beneficiaries} (${sql.join(columns)})
      SELECT * FROM unnest(${sql.join(arrays)})
      RETURNING id, first_name, last_name, status, created_at, updated_at, sort_first, sort_last),
    history AS (
      INSERT INTO ${table(schema, 'beneficiary_history')}
        (beneficiary_id, at, action, client_id, request_id, changes)
      SELECT a.id, e.at, e.action, 'seed', e.request_id, e.changes
      FROM added a CROSS JOIN LATERAL (VALUES
        (1, a.created_at, 'created', 'seed-' || a.id, json_build_array(
          json_build_object('field', 'first_name', 'old', NULL, 'new', a.first_name),
          json_build_object('field', 'last_name', 'old', NULL, 'new', a.last_name))),
        (2, a.updated_at, 'status_changed', 'seed-' || a.id || '-status', json_build_array(
          json_build_object('field', 'status', 'old', 'pending', 'new', a.status)))
      ) AS e (n, at, action, request_id, changes)
      WHERE e.n = 1 OR a.status <> 'pending'
      ORDER BY a.id, e.n),
    counted AS (${addCounts(
      schema,
      sql`SELECT k.kind, k.status, k.key, k.prefix, 0::smallint, count(*), min(a.id), max(a.id)
        FROM added a CROSS JOIN LATERAL ${table(schema, 'beneficiary_count_keys')}(
          a.id, a.status, a.created_at, a.updated_at, a.sort_first, a.sort_last) k
        GROUP BY 1, 2, 3, 4
        UNION ALL SELECT 'v', '', 0, '', 0::smallint, count(*), 0, 0 FROM added
        ORDER BY 1, 2, 3, 4, 5`,
    )}),
    progress AS (
      UPDATE ${loads} SET
        done = done + (SELECT count(*) FROM added),
        first_id = coalesce(first_id, (SELECT min(id) FROM added)),
        last_id = (SELECT max(id) FROM added)
      WHERE name = ${slot('name')}::text)
    SELECT min(id), max(id), count(*) FROM added`)
  return {
    open: new PostgresQuery(sql`
      INSERT INTO ${loads} (name, started_at, done) VALUES (${slot('name')}, ${slot('now')}, 0)
      ON CONFLICT (name) DO NOTHING`),
    read: new PostgresQuery(sql`
      SELECT started_at, done, first_id, last_id, finished_at FROM ${loads}
      WHERE name = ${slot('name')}`),
    lock: new PostgresQuery(sql`SELECT done FROM ${loads} WHERE name = ${slot('name')} FOR UPDATE`),
    insert,
    finish: new PostgresQuery(
      sql`UPDATE ${loads} SET finished_at = ${slot('now')} WHERE name = ${slot('name')}`,
    ),
  }
}
