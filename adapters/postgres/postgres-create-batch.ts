import { sql, type RawBuilder } from 'kysely'
import { StorageUnavailableError } from '../../core/errors.js'
import { WRITTEN_COLUMNS, type WrittenColumn } from './postgres-beneficiary-columns.js'
import { COLUMN_TYPES, type PostgresBeneficiaryWrites } from './postgres-beneficiary-writes.js'
import { PostgresBatcher, type Batching } from './postgres-batcher.js'
import { addCounts, recordCounts, SHARDS, table } from './postgres-counters.js'
import { PostgresQuery, slot, type Queryable, type SlotValues } from './postgres-query.js'

/**
 * A create waiting for its batch: the slot values of `PostgresBeneficiaryWrites.create` (the
 * written columns and the entry's), with the claim's (`claim_*`) when it has one.
 */
export interface PendingCreate {
  readonly values: SlotValues
  readonly claimed: boolean
}

/**
 * What a create of a batch did: the new record's id; `undefined` when a live claim holds its
 * key (nothing written); or the error that kept it from writing (a fiscal code taken, say).
 */
export type CreateResult = { readonly id: number | undefined } | { readonly error: unknown }

/** The SQL type of each written column in the batch's JSON: JSON values travel as text. */
const INPUT_TYPES: { readonly [C in WrittenColumn]: string } = { ...COLUMN_TYPES, metadata: 'text' }

/** The columns of the batch's JSON beyond the record's: its place, the entry, the claim. */
const OTHER_INPUT = `n integer, at bigint, action text, client_id text, request_id text,
  changes text, claim_client_id text, claim_key text, claim_fingerprint text,
  claim_expires_at bigint`

/** The keys of one create's slot values that the batch's JSON carries. */
const INPUT_KEYS = [
  ...WRITTEN_COLUMNS,
  'at',
  'action',
  'client_id',
  'request_id',
  'changes',
  'claim_client_id',
  'claim_key',
  'claim_fingerprint',
  'claim_expires_at',
] as const

/**
 * Creates that arrive together, written by one statement (one round trip, one transaction, one
 * commit) instead of one each, with `PostgresBatcher`: the claims, the records, their entries
 * and their counters, as the single statements of `PostgresBeneficiaryWrites` write them. A batch
 * of one runs the single statement. When the batch's statement fails for any reason other than
 * the storage being out of reach (a fiscal code taken, two creates of the batch with one key, a
 * deadlock with another batch), it wrote nothing, and each create runs again alone, so that each
 * fails or succeeds on its own, as it would have without the batch.
 */
export class PostgresCreates {
  readonly #pool: Queryable
  readonly #writes: PostgresBeneficiaryWrites
  readonly #many: PostgresQuery
  readonly #batcher: PostgresBatcher<PendingCreate, CreateResult>
  /** Batches written so far: each adds to the counter rows of shard `1 + batches % SHARDS`. */
  #batches = 0

  constructor(
    pool: Queryable,
    schema: string,
    writes: PostgresBeneficiaryWrites,
    batching: Batching,
  ) {
    this.#pool = pool
    this.#writes = writes
    this.#many = new PostgresQuery(createManyStatement(schema))
    this.#batcher = new PostgresBatcher((creates) => this.#runAll(creates), batching.limits, {
      onSend: (size) => batching.observe('create', size),
    })
  }

  /** Writes `create` in the next batch. */
  submit(create: PendingCreate): Promise<CreateResult> {
    return this.#batcher.submit(create)
  }

  /** Writes `create` alone, now. */
  async one(create: PendingCreate): Promise<CreateResult> {
    try {
      const statement = create.claimed ? this.#writes.createClaimed : this.#writes.create
      const rows = await statement.arrays(this.#pool, create.values)
      return { id: rows[0]?.[0] as number | undefined }
    } catch (error) {
      return { error }
    }
  }

  async #runAll(creates: readonly PendingCreate[]): Promise<CreateResult[]> {
    if (creates.length === 1) return [await this.one(creates[0]!)]
    try {
      return await this.#together(creates)
    } catch (error) {
      if (unavailable(error)) throw error
      return Promise.all(creates.map((create) => this.one(create)))
    }
  }

  async #together(creates: readonly PendingCreate[]): Promise<CreateResult[]> {
    let now = Infinity
    const items = creates.map((create, n) => {
      const item: Record<string, unknown> = { n }
      for (const key of INPUT_KEYS) item[key] = create.values[key] ?? null
      if (create.claimed) now = Math.min(now, create.values['claim_now'] as number)
      return item
    })
    // Every claim of the batch is replaced only if expired for the earliest create of the batch:
    // a later one that finds its expired claim still held is told so, and tries again alone.
    const rows = await this.#many.arrays(this.#pool, {
      items: JSON.stringify(items),
      claim_now: now === Infinity ? null : now,
      shard: 1 + (this.#batches++ % SHARDS),
    })
    const results: CreateResult[] = creates.map(() => ({ id: undefined }))
    for (const [n, id] of rows)
      results[n as number] = { id: (id ?? undefined) as number | undefined }
    return results
  }
}

/**
 * Whether a batch's failure is the storage's, not its creates': PostgreSQL or a connection out of
 * reach (then running each create alone would only fail again, later). A deadlock between two
 * batches is not: each create alone then takes its locks in the single statement's order.
 */
function unavailable(error: unknown): boolean {
  if (!(error instanceof StorageUnavailableError)) return false
  const code = (error.cause as { code?: unknown } | undefined)?.code
  return code !== '40P01' && code !== '40001'
}

/**
 * The statement of a batch: `items` is a JSON array of {@link INPUT_KEYS} (and `n`, its place),
 * `claim_now` the earliest `now` of its claims, `shard` the counter shard of the batch. Claims
 * are taken in key order and records written in fiscal-code order, so that two batches never
 * wait on each other in a cycle. The batch adds to one shard of each counter row it moves, not
 * to the shard of each record's id: a batch of 50 then moves 20 to 130 counter rows (one per key)
 * instead of 50 × 7, and touches far fewer pages; consecutive batches take consecutive shards,
 * so the batches one storage runs at once never wait on each other's counter rows.
 * Returns `n` and the new id of each create, null where a live claim holds its key.
 */
function createManyStatement(schema: string): RawBuilder<unknown> {
  const ids = sql.lit(`"${schema}".beneficiary_ids`)
  const recordColumns = sql.join(WRITTEN_COLUMNS.map((column) => sql.ref(column)))
  const recordValues = sql.join(
    WRITTEN_COLUMNS.map((column) =>
      column === 'metadata' ? sql`i.metadata::json` : sql.ref(`i.${column}`),
    ),
  )
  const input = sql.raw(
    `${WRITTEN_COLUMNS.map((column) => `${column} ${INPUT_TYPES[column]}`).join(', ')}, ${OTHER_INPUT}`,
  )
  return sql`
    WITH input AS (SELECT * FROM json_to_recordset(${slot('items')}::json) AS x(${input})),
    claim AS (
      INSERT INTO ${table(schema, 'idempotency_keys')} AS k
        (client_id, key, fingerprint, beneficiary_id, created_at, expires_at)
      SELECT claim_client_id, claim_key, claim_fingerprint, nextval(${ids}::regclass),
        created_at, claim_expires_at
      FROM input WHERE claim_key IS NOT NULL ORDER BY claim_client_id, claim_key
      ON CONFLICT ON CONSTRAINT idempotency_keys_client_key DO UPDATE SET
        fingerprint = excluded.fingerprint,
        beneficiary_id = excluded.beneficiary_id,
        created_at = excluded.created_at,
        expires_at = excluded.expires_at
      WHERE k.expires_at <= ${slot('claim_now')}::bigint
      RETURNING client_id, key, beneficiary_id),
    ids AS MATERIALIZED (
      SELECT i.n, CASE WHEN i.claim_key IS NULL THEN nextval(${ids}::regclass)
        ELSE c.beneficiary_id END AS id
      FROM input i
      LEFT JOIN claim c ON c.client_id = i.claim_client_id AND c.key = i.claim_key),
    record AS (
      INSERT INTO ${table(schema, 'beneficiaries')} (id, ${recordColumns})
      SELECT d.id, ${recordValues} FROM ids d JOIN input i USING (n)
      WHERE d.id IS NOT NULL ORDER BY i.fiscal_code
      RETURNING id, status, created_at, updated_at, sort_first, sort_last),
    history AS (
      INSERT INTO ${table(schema, 'beneficiary_history')}
        (beneficiary_id, at, action, client_id, request_id, changes)
      SELECT d.id, i.at, i.action, i.client_id, i.request_id, i.changes::json
      FROM ids d JOIN input i USING (n) WHERE d.id IS NOT NULL ORDER BY d.id),
    counted AS (${addCounts(
      schema,
      sql`SELECT kind, status, key, prefix, ${slot('shard')}::smallint, sum(n)::bigint,
          min(min_id), max(max_id)
        FROM (${recordCounts(schema, 'record', 1)}) c(kind, status, key, prefix, shard, n, min_id, max_id)
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`,
    )})
    SELECT n, id FROM ids ORDER BY n`
}
