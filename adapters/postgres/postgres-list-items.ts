import { sql, type RawBuilder } from 'kysely'
import type { SortField } from '../../core/beneficiary.js'
import { SUMMARY_COLUMNS } from './postgres-beneficiary-columns.js'
import { table } from './postgres-counters.js'
import type { Shape } from './postgres-list-plan.js'
import { slot } from './postgres-query.js'

/** The columns of each sort, in order; the last is always the id (D15). */
const ORDER_COLUMNS: Readonly<Record<SortField, readonly string[]>> = {
  id: ['id'],
  created_at: ['created_at', 'id'],
  updated_at: ['updated_at', 'id'],
  last_name: ['sort_last', 'last_name', 'id'],
  first_name: ['sort_first', 'first_name', 'id'],
}

const NUMERIC = new Set(['id', 'created_at', 'updated_at'])

/** `b.column`. */
function column(name: string): RawBuilder<unknown> {
  return sql.ref(`b.${name}`)
}

/**
 * `b.column` as an expression no index has, so that the planner cannot use an index for a
 * condition that is not meant to use one, and can still estimate how many rows the condition
 * keeps: text in a collation its index does not have (the column's own statistics apply), a
 * number plus zero (the migration keeps statistics of `created_at + 0`).
 */
function unindexed(name: string): RawBuilder<unknown> {
  return NUMERIC.has(name) ? sql`(${column(name)} + 0)` : sql`(${column(name)} COLLATE "C")`
}

/**
 * `b.column` for an ORDER BY that no index may serve. The name columns are already in the
 * collation of their indexes, so text is concatenated with nothing instead (sorting needs no
 * statistics).
 */
function unordered(name: string): RawBuilder<unknown> {
  return NUMERIC.has(name) ? sql`(${column(name)} + 0)` : sql`((${column(name)} || '') COLLATE "C")`
}

/** The summary columns a page selects, in the order `summaryReader` reads them. */
export const SELECTED = sql.join(SUMMARY_COLUMNS.map((name) => column(name)))

/**
 * The lowest (`min`) or highest (`max`) id of the records with the statuses `statuses` created
 * on the days [`bounds_from`, `bounds_before`), from the day counters; 0 when there is none. A
 * day whose records are all gone is left out, so its stale bounds do not widen the range.
 */
export function idBound(schema: string, bound: 'min' | 'max'): RawBuilder<number> {
  const field = sql.raw(bound === 'min' ? 'min_id' : 'max_id')
  return sql<number>`(SELECT coalesce(${sql.raw(bound)}(d.id), 0) FROM (
      SELECT ${sql.raw(bound)}(${field}) AS id, sum(n) AS n
      FROM ${table(schema, 'beneficiary_counts')}
      WHERE kind = 'd' AND status = ANY(${slot('statuses')}::text[])
        AND key >= ${slot('bounds_from')}::bigint AND key < ${slot('bounds_before')}::bigint
        AND prefix = ''
      GROUP BY key) d
    WHERE d.n > 0)`
}

/**
 * The page query of a {@link Shape}: the summaries of the page, in order. Slots: `status`,
 * `from`, `before` (epoch ms), `q` (a tsquery), `offset`, `seek`, and for an `order` plan by id
 * within dates the slots of {@link idBound}.
 */
export function itemsQuery(schema: string, shape: Shape): RawBuilder<unknown> {
  const conditions: RawBuilder<unknown>[] = []
  const filterPlan = shape.plan === 'filter'
  const { sort, search, dates } = shape
  if (search) {
    // The GIN index finds a filter plan's rows; an order plan checks each row it walks.
    conditions.push(
      filterPlan
        ? sql`${column('words')} @@ ${slot('q')}::tsquery`
        : sql`ts_match_vq(${column('words')}, ${slot('q')}::tsquery)`,
    )
  }
  if (shape.status) {
    const usable = (filterPlan && !search) || (!filterPlan && sort === 'id')
    conditions.push(
      sql`${usable ? column('status') : unindexed('status')} = ${slot('status')}::text`,
    )
  }
  if (dates) {
    const usable = !search && (filterPlan || sort === 'created_at')
    const created = usable ? column('created_at') : unindexed('created_at')
    conditions.push(sql`${created} >= ${slot('from')}::bigint`)
    conditions.push(sql`${created} < ${slot('before')}::bigint`)
  }
  if (sort === 'id' && dates && !filterPlan && !search) {
    // Ids in the range of the days the dates touch: the walk starts where they do.
    conditions.push(sql`${column('id')} >= ${idBound(schema, 'min')}`)
    conditions.push(sql`${column('id')} <= ${idBound(schema, 'max')}`)
  }
  if (shape.seek === 'id') {
    conditions.push(
      sql`${column('id')} ${sql.raw(shape.descending ? '<' : '>=')} ${slot('seek')}::bigint`,
    )
  }
  if (shape.seek === 'key') {
    const first = ORDER_COLUMNS[sort][0]!
    const type = sql.raw(NUMERIC.has(first) ? 'bigint' : 'text')
    conditions.push(sql`${column(first)} >= ${slot('seek')}::${type}`)
  }

  const direction = sql.raw(shape.descending ? 'DESC' : 'ASC')
  const order = ORDER_COLUMNS[sort].map(
    (name) => sql`${filterPlan ? unordered(name) : column(name)} ${direction}`,
  )
  const where = conditions.length > 0 ? sql`WHERE ${sql.join(conditions, sql` AND `)}` : sql``
  return sql`SELECT ${SELECTED} FROM ${table(schema, 'beneficiaries')} b ${where}
    ORDER BY ${sql.join(order)} LIMIT ${sql.lit(shape.limit)} OFFSET ${slot('offset')}::bigint`
}
