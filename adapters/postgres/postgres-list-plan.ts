import type { SortField } from '../../core/beneficiary.js'
import type { ListQuery } from '../../core/ports/beneficiary-store.js'
import { DAY_MS } from '../../core/time.js'

/** Rows visited per matching row when a plan collects every match and sorts them. */
const SORT_COST = 4

/** The lower bound of a date range without one: below every epoch-ms time. */
export const NO_LOWER = Number.MIN_SAFE_INTEGER
/** The upper bound of a date range without one. */
export const NO_UPPER = Number.MAX_SAFE_INTEGER

/** Whether a bound of a date filter is absent or a UTC midnight, as the core's always are (D17). */
export function isDayBound(time: number): boolean {
  return time === NO_LOWER || time === NO_UPPER || time % DAY_MS === 0
}

/**
 * `order` walks the index that gives the sort order and checks the filters row by row (cheap
 * when the filters keep many rows); `filter` reads the rows the filters select through their
 * index (the search's GIN index, the status's or the creation time's) and sorts them (cheap
 * when they keep few). The totals tell which, before the query. The SQL of each leaves the
 * planner the one index path meant for it: a condition that must not use an index is written
 * as an expression no index has (`status COLLATE "C"`, `coalesce(created_at + 0 >= $1, false)`).
 */
export type Plan = 'order' | 'filter'

/**
 * Where an `order` plan starts: at the top; at an id the counters found (`id`, either
 * direction); or, ascending only, at a value of the sort's first column (`key`: a day of
 * `created_at` or `updated_at`, the first two characters of a name's sort key).
 */
export type Seek = 'none' | 'id' | 'key'

/** What decides the SQL of a page query: one statement per shape. */
export interface Shape {
  /** Written into the SQL, not bound, so that the planner knows it. */
  readonly limit: number
  readonly sort: SortField
  readonly descending: boolean
  readonly status: boolean
  readonly dates: boolean
  readonly search: boolean
  readonly plan: Plan
  readonly seek: Seek
  /**
   * A page from the first match, without a seek: written without OFFSET and prepared once, as a
   * named statement (PostgreSQL then plans it once for every value of its parameters). Any
   * other page binds its offset and is planned with it, unnamed: an OFFSET PostgreSQL does not
   * know could make it plan a deep page as if it were the first.
   */
  readonly fromStart: boolean
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
  const orderCost = ((page.offset + page.limit) * span) / Math.max(1, total)
  return filtered && SORT_COST * total < orderCost ? 'filter' : 'order'
}

/**
 * A page in the second half of the matches is the mirror of one in the first half, read in the
 * opposite direction and reversed: ties go by id in the sort's direction, so the order reverses
 * exactly, and no page skips more than half of the matches.
 */
export function fromNearerEnd(query: ListQuery, total: number): PageRead {
  const mirrored = total - query.offset - query.limit
  // A first page is read forward whatever the total: it skips nothing, and a stale prediction
  // of the total cannot make it wrong.
  if (mirrored >= query.offset || query.offset === 0) return { page: query, reversed: false }
  const page: ListQuery = {
    ...query,
    offset: Math.max(0, mirrored),
    limit: Math.min(query.limit, total - query.offset),
    descending: !query.descending,
  }
  return { page, reversed: true }
}
