import type { SortField } from '../../../core/beneficiary.js'
import type { ListQuery } from '../../../core/ports/beneficiary-store.js'
import { sql, type RawBuilder } from 'kysely'
import { DAY_MS } from '../../../core/time.js'

/**
 * What collecting and sorting a match costs (`filter`: a row lookup, about 1 µs), in index
 * entries an `order` walk passes (about 25 ns each: the indexes carry the filtered columns, so
 * the walk checks them without leaving the index).
 */
const SORT_COST = 30

/**
 * `order` walks the index that gives the sort order and checks the filters row by row (cheap
 * when the filters keep many rows); `filter` reads the rows the filters select through their
 * index and sorts them (cheap when they keep few). The counters tell which, before the query.
 */
export type Plan = 'order' | 'filter'

/**
 * Where an `order` plan starts: at the top; at an id the counters found (`id`, either
 * direction); or, ascending only, at a value of the sort's first column (`key`: a day of
 * `created_at` or `updated_at`) or at a bucket of a name order (`name`: a sort key, a raw name
 * and the first id of a block).
 */
export type Seek = 'none' | 'id' | 'key' | 'name'

/** What decides the SQL of a page query: one prepared statement per shape. */
export interface Shape {
  /**
   * Written into the SQL, not bound: SQLite prepares a statement with a bound LIMIT again at
   * every run (3–8 µs each time, measured), while the page sizes in use are few.
   */
  readonly limit: number
  /**
   * A search page that starts at the first match: its FTS5 subquery then has no OFFSET, which,
   * bound on a virtual table, also makes SQLite prepare the statement again at every run.
   */
  readonly fromStart: boolean
  readonly sort: SortField
  readonly descending: boolean
  readonly status: boolean
  readonly dates: boolean
  readonly search: boolean
  readonly plan: Plan
  readonly seek: Seek
}

/** The page a query reads, and whether its rows then come back in reverse. */
export interface PageRead {
  readonly page: ListQuery
  readonly reversed: boolean
}

/**
 * The plan of a page of `total` matches whose `order` plan visits `span` rows per match (the
 * filters' selectivity): `filter` only when a filter applies and sorting every match costs less
 * than walking to the end of the page.
 */
export function choosePlan(page: ListQuery, filtered: boolean, span: number, total: number): Plan {
  const orderCost = ((page.offset + page.limit) * span) / total
  return filtered && SORT_COST * total < orderCost ? 'filter' : 'order'
}

/**
 * A page in the second half of the matches is the mirror of one in the first half, read in the
 * opposite direction and reversed: ties go by id in the sort's direction, so the order reverses
 * exactly, and no page skips more than half of the matches.
 */
export function fromNearerEnd(query: ListQuery, total: number): PageRead {
  const mirrored = total - query.offset - query.limit
  if (mirrored >= query.offset) return { page: query, reversed: false }
  const page: ListQuery = {
    ...query,
    offset: Math.max(0, mirrored),
    limit: Math.min(query.limit, total - query.offset),
    descending: !query.descending,
  }
  return { page, reversed: true }
}

/** `+column`: the same value, but SQLite will not use an index for it, which picks the plan. */
export function unindexed<T>(column: string): RawBuilder<T> {
  return sql<T>`+${sql.ref(`beneficiaries.${column}`)}`
}

/** The lower bound of a date range without one: below every epoch-ms time. */
export const NO_LOWER = Number.MIN_SAFE_INTEGER
/** The upper bound of a date range without one. */
export const NO_UPPER = Number.MAX_SAFE_INTEGER

/** Whether a bound of a date filter is absent or a UTC midnight, as the core's always are (D17). */
export function isDayBound(time: number): boolean {
  return time === NO_LOWER || time === NO_UPPER || time % DAY_MS === 0
}
