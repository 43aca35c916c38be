import { sql, type RawBuilder } from 'kysely'
import type { BeneficiaryRecord } from '../../core/beneficiary.js'
import {
  WRITTEN_COLUMNS,
  type ColumnValues,
  type WrittenColumn,
} from './postgres-beneficiary-columns.js'
import { addCounts, recordCounts, shardOf, table } from './postgres-counters.js'
import { appendEntry, eraseEntries } from './postgres-history.js'
import { claimKey } from './postgres-idempotency-claims.js'
import { PostgresQuery, slot } from './postgres-query.js'

/** The SQL type of each written column: every value is sent as text and cast once. */
export const COLUMN_TYPES: { readonly [C in WrittenColumn]: string } = {
  first_name: 'text',
  last_name: 'text',
  email: 'text',
  phone: 'text',
  date_of_birth: 'text',
  fiscal_code: 'text',
  address_street: 'text',
  address_city: 'text',
  address_postal_code: 'text',
  address_country: 'text',
  metadata: 'json',
  status: 'text',
  created_at: 'bigint',
  updated_at: 'bigint',
  version: 'integer',
  sort_first: 'text',
  sort_last: 'text',
}

/** What the counters of a record look at, as the counted CTEs return it. */
const COUNTED = sql.raw('id, status, created_at, updated_at, sort_first, sort_last')

function value(column: WrittenColumn): RawBuilder<unknown> {
  return sql`${slot(column)}::${sql.raw(COLUMN_TYPES[column])}`
}

/** The values a record's counters look at before or after an update, for {@link updateStatement}. */
export interface CountedValues {
  readonly status: string
  readonly created_at: number
  readonly updated_at: number
  readonly sort_first: string
  readonly sort_last: string
}

/**
 * The statements that write beneficiaries, each one statement (one round trip, one
 * transaction) that changes the record, appends its history entry and moves its counters, with
 * data-modifying CTEs; built once per schema.
 */
export class PostgresBeneficiaryWrites {
  /** Slots: the written columns and the entry. Returns the new id. */
  readonly create: PostgresQuery
  /** Also the claim's slots. Returns the new id, or nothing when a live claim holds the key. */
  readonly createClaimed: PostgresQuery
  /** Slots: `id`, `expected_version`, the written columns, the entry, `old_*`, `bump`. */
  readonly update: PostgresQuery
  /** Slots: `id`, `expected_version` (null for any), the entry. Returns the id when deleted. */
  readonly remove: PostgresQuery
  /** Slots: `id`. The stored version, to tell `missing` from `conflict`. */
  readonly version: PostgresQuery

  constructor(schema: string) {
    const beneficiaries = table(schema, 'beneficiaries')
    const columns = sql.join(WRITTEN_COLUMNS.map((column) => sql.ref(column)))
    const values = sql.join(WRITTEN_COLUMNS.map(value))
    const created = (record: RawBuilder<unknown>): RawBuilder<unknown> => sql`
      WITH ${record},
      history AS (${appendEntry(schema, 'record')}),
      counted AS (${addCounts(schema, recordCounts(schema, 'record', 1))})
      SELECT id FROM record`

    this.create = new PostgresQuery(
      created(sql`record AS (
        INSERT INTO ${beneficiaries} (${columns}) VALUES (${values}) RETURNING ${COUNTED})`),
    )
    // The claim comes first: a live one wins over everything else, a taken fiscal code included.
    this.createClaimed = new PostgresQuery(
      created(sql`claim AS (${claimKey(schema)}),
      record AS (
        INSERT INTO ${beneficiaries} (id, ${columns})
        SELECT beneficiary_id, ${values} FROM claim RETURNING ${COUNTED})`),
    )

    const keysOf = (prefix: string): RawBuilder<unknown> =>
      sql`${table(schema, 'beneficiary_count_keys')}(${slot('id')}::bigint,
        ${slot(`${prefix}status`)}::text, ${slot(`${prefix}created_at`)}::bigint,
        ${slot(`${prefix}updated_at`)}::bigint, ${slot(`${prefix}sort_first`)}::text,
        ${slot(`${prefix}sort_last`)}::text)`
    const set = sql.join(
      WRITTEN_COLUMNS.map((column) => sql`${sql.ref(column)} = ${value(column)}`),
    )
    // The counters move by the difference between the record's rows before and after: most
    // updates move only the day of updated_at, or nothing.
    this.update = new PostgresQuery(sql`
      WITH updated AS (
        UPDATE ${beneficiaries} SET ${set}
        WHERE id = ${slot('id')} AND version = ${slot('expected_version')}
        RETURNING id),
      history AS (${appendEntry(schema, 'updated')}),
      counted AS (${addCounts(
        schema,
        sql`SELECT kind, status, key, prefix, shard, sum(n)::bigint,
            ${slot('id')}::bigint, ${slot('id')}::bigint
          FROM (
            SELECT k.*, -1 AS n FROM ${keysOf('old_')} k
            UNION ALL SELECT k.*, 1 FROM ${keysOf('')} k
            UNION ALL SELECT 'v', '', 0, '', ${slot('shard')}::smallint, 1 WHERE ${slot('bump')}::boolean
          ) d
          WHERE EXISTS (SELECT 1 FROM updated)
          GROUP BY kind, status, key, prefix, shard HAVING sum(n) <> 0
          ORDER BY kind, status, key, prefix, shard`,
      )})
      SELECT id FROM updated`)

    this.remove = new PostgresQuery(sql`
      WITH deleted AS (
        DELETE FROM ${beneficiaries}
        WHERE id = ${slot('id')}
          AND version = coalesce(${slot('expected_version')}::integer, version)
        RETURNING ${COUNTED}),
      erased AS (${eraseEntries(schema, 'deleted')}),
      history AS (${appendEntry(schema, 'deleted')}),
      counted AS (${addCounts(schema, recordCounts(schema, 'deleted', -1))})
      SELECT id FROM deleted`)

    this.version = new PostgresQuery(
      sql`SELECT version FROM ${beneficiaries} WHERE id = ${slot('id')}`,
    )
  }

  /** The slot values of {@link update} beyond the entry's. */
  static updateValues(
    previous: BeneficiaryRecord,
    columns: ColumnValues,
    before: CountedValues,
    bump: boolean,
  ): Record<string, unknown> {
    return {
      ...columns,
      id: previous.id,
      expected_version: previous.version,
      old_status: before.status,
      old_created_at: before.created_at,
      old_updated_at: before.updated_at,
      old_sort_first: before.sort_first,
      old_sort_last: before.sort_last,
      shard: shardOf(previous.id),
      bump,
    }
  }
}
