import { sql, type RawBuilder } from 'kysely'
import { BENEFICIARY_STATUSES } from '../../core/beneficiary-fields.js'
import { slot } from './postgres-query.js'

// The counters answer the totals of the status and date filters and say where a deep page
// starts, so that a list never counts or skips a million rows. One table, `beneficiary_counts`,
// holds every kind, keyed by the record's status and:
//
//   s  nothing (records per status)         b  the block of 1024 ids (`id >> 10`)
//   d  the UTC day of created_at, with the  u  the UTC day of updated_at
//      bounds of the ids counted in         f  the first two characters of sort_first
//   v  nothing, status '' (a version: the   l  the first two characters of sort_last
//      number of writes that could change
//      a search's total)
//
// A write adds to its record's rows in the statement that writes the record, so in the same
// transaction. Concurrent creates of one day would all add to the same row and queue on its
// lock until each commits; so each row is split into shards, `1 + id % SHARDS`, and a reader
// sums them: consecutive ids, which concurrent creates get, never share a row. Shard 0 holds
// what the bulk loader counted. A write upserts its rows sorted by key, so two writes that
// share rows lock them in the same order and never deadlock.

/** Shards of each counter row written by the store (1 to `SHARDS`); shard 0 is the bulk loader's. */
export const SHARDS = 16

/** Ids per row of the `b` counters, whose key is `id >> 10`. */
export const BLOCK_SIZE = 1024

/** Kinds of counters, as the `kind` column holds them. */
export type CounterKind = 's' | 'd' | 'b' | 'u' | 'f' | 'l' | 'v'

/** The shard of a record's counter rows. */
export function shardOf(id: number): number {
  return 1 + (id % SHARDS)
}

/** `schema.name`, quoted. */
export function table(schema: string, name: string): RawBuilder<unknown> {
  return sql.table(`${schema}.${name}`)
}

/**
 * An INSERT into `beneficiary_counts` of the rows of `rows` (a query whose columns are, in order,
 * kind, status, key, prefix, shard, n, min_id, max_id, sorted by the first five), adding each
 * to the row of its key.
 */
export function addCounts(schema: string, rows: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`INSERT INTO ${table(schema, 'beneficiary_counts')} AS c
      (kind, status, key, prefix, shard, n, min_id, max_id)
    ${rows}
    ON CONFLICT ON CONSTRAINT beneficiary_counts_key DO UPDATE SET
      n = c.n + excluded.n,
      min_id = least(c.min_id, excluded.min_id),
      max_id = greatest(c.max_id, excluded.max_id)`
}

/**
 * The counter rows of the records of the CTE `source` (columns id, status, created_at,
 * updated_at, sort_first, sort_last), each counted `sign` times, and a bump of the version:
 * for {@link addCounts}.
 */
export function recordCounts(schema: string, source: string, sign: 1 | -1): RawBuilder<unknown> {
  const from = sql.table(source)
  return sql`SELECT k.kind, k.status, k.key, k.prefix, k.shard, ${sql.lit(sign)}::bigint,
        r.id, r.id
      FROM ${from} r CROSS JOIN LATERAL ${table(schema, 'beneficiary_count_keys')}(
        r.id, r.status, r.created_at, r.updated_at, r.sort_first, r.sort_last) k
    UNION ALL
    SELECT 'v', '', 0, '', (1 + r.id % ${sql.lit(SHARDS)})::smallint, 1, r.id, r.id FROM ${from} r
    ORDER BY 1, 2, 3, 4, 5`
}

/**
 * `column = $status` for a list of one status, or `column IN (…every status…)` for all: written
 * out, so that PostgreSQL knows how many values to look up even in a plan made for any value
 * (it assumes ten for an array parameter, which made it plan every list again at every run).
 */
export function statusIs(column: RawBuilder<unknown>, one: boolean): RawBuilder<unknown> {
  return one
    ? sql`${column} = ${slot('status')}::text`
    : sql`${column} IN (${sql.join(BENEFICIARY_STATUSES.map((status) => sql.lit(status)))})`
}

/** The version of the data a search total depends on, as an expression: see `v` above. */
export function versionExpression(schema: string): RawBuilder<number> {
  return sql<number>`(SELECT coalesce(sum(n), 0)::bigint FROM ${table(schema, 'beneficiary_counts')}
    WHERE kind = 'v' AND status = '' AND key = 0 AND prefix = '')`
}
