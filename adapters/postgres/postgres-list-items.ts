import { sql, type RawBuilder } from 'kysely'
import type { SortField } from '../../core/beneficiary.js'
import { SUMMARY_COLUMNS } from './postgres-beneficiary-columns.js'
import { statusIs, table } from './postgres-counters.js'
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
 * The status in a collation its index does not have: the planner cannot use the index for a
 * condition that is not meant to use it, and still estimates how many rows the condition keeps
 * from the column's statistics.
 */
const UNINDEXED_STATUS = sql`(${column('status')} COLLATE "C")`

/**
 * `created_at <op> value` as a condition no index can serve. The planner takes such an opaque
 * condition to keep half the rows, for any value: it never sees a walk along another index as
 * too costly (`choosePlan` already knows better), and it costs a statement planned once for
 * every value (a named one) the same as one planned for its values, so PostgreSQL keeps the
 * plan it made once instead of planning again at every run.
 */
function unindexedCreated(op: '>=' | '<', name: string): RawBuilder<unknown> {
  return sql`coalesce((${column('created_at')} + 0) ${sql.raw(op)} ${slot(name)}::bigint, false)`
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
 * The lowest (`min`) or highest (`max`) id of the records with the status (`one`) or any created
 * on the days [`bounds_from`, `bounds_before`), from the day counters; 0 when there is none.
 * Deletes never narrow the bounds of a day: they stay bounds, if loose ones.
 */
export function idBound(schema: string, bound: 'min' | 'max', one: boolean): RawBuilder<number> {
  const field = sql.raw(bound === 'min' ? 'min_id' : 'max_id')
  return sql<number>`(SELECT coalesce(${sql.raw(bound)}(${field}), 0)
    FROM ${table(schema, 'beneficiary_counts')}
    WHERE kind = 'd' AND ${statusIs(sql.ref('status'), one)}
      AND key >= ${slot('bounds_from')}::bigint AND key < ${slot('bounds_before')}::bigint
      AND prefix = '')`
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
    conditions.push(sql`${usable ? column('status') : UNINDEXED_STATUS} = ${slot('status')}::text`)
  }
  if (dates) {
    const usable = !search && (filterPlan || sort === 'created_at')
    if (usable) {
      conditions.push(sql`${column('created_at')} >= ${slot('from')}::bigint`)
      conditions.push(sql`${column('created_at')} < ${slot('before')}::bigint`)
    } else {
      conditions.push(unindexedCreated('>=', 'from'))
      conditions.push(unindexedCreated('<', 'before'))
    }
  }
  if (sort === 'id' && dates && !filterPlan && !search) {
    // Ids in the range of the days the dates touch: the walk starts where they do.
    conditions.push(sql`${column('id')} >= ${idBound(schema, 'min', shape.status)}`)
    conditions.push(sql`${column('id')} <= ${idBound(schema, 'max', shape.status)}`)
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
  const records = table(schema, 'beneficiaries')
  const offset = shape.fromStart ? sql`` : sql`OFFSET ${slot('offset')}::bigint`
  if (!shape.fromStart && covered(shape)) {
    // The rows an OFFSET skips are read from the index alone (an index-only scan), and only
    // the page's rows from the table: a skipped row costs an index entry, not a heap fetch.
    const keys = ORDER_COLUMNS[sort]
    const walked = sql`SELECT ${sql.join(keys.map((name) => column(name)))} FROM ${records} b
      ${where} ORDER BY ${sql.join(order)} LIMIT ${sql.lit(shape.limit)} ${offset}`
    return sql`SELECT ${SELECTED} FROM (${walked}) k JOIN ${records} b ON b.id = k.id
      ORDER BY ${sql.join(keys.map((name) => sql`${sql.ref(`k.${name}`)} ${direction}`))}`
  }
  return sql`SELECT ${SELECTED} FROM ${records} b ${where}
    ORDER BY ${sql.join(order)} LIMIT ${sql.lit(shape.limit)} ${offset}`
}

/**
 * Whether an `order` plan reads every column its conditions and order need from the index it
 * walks (the sort's, or the status's for ids within a status): no search, a status only by id,
 * dates only by creation.
 */
function covered(shape: Shape): boolean {
  return (
    shape.plan === 'order' &&
    !shape.search &&
    (!shape.status || shape.sort === 'id') &&
    (!shape.dates || shape.sort === 'created_at')
  )
}
