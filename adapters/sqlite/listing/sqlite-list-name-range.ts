import type BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import type { BeneficiarySummary } from '../../../core/beneficiary.js'
import type { ListQuery } from '../../../core/ports/beneficiary-store.js'
import { SUMMARY_COLUMNS, summaryOf } from '../writes/sqlite-beneficiary-columns.js'
import type { SqliteCounterMirror } from './sqlite-counter-mirror.js'
import { NAME_BLOCK_SIZE } from '../writes/sqlite-counters.js'
import { isDayBound, unindexed } from './sqlite-list-plan.js'
import { idsFollowDays } from './sqlite-list-totals.js'
import { queryBuilder, slot, SqliteQuery } from '../sqlite-query.js'

/** A name of the order: sort key and raw name, all of whose records sort together by id. */
type Name = readonly [sortKey: string, rawName: string]

type ByStatus<T> = Readonly<Record<'any' | 'status', T>>
type Statements = Readonly<{
  count: ByStatus<SqliteQuery<{ n: number }>>
  rows: Readonly<Record<'ascending' | 'descending', ByStatus<SqliteQuery<BeneficiarySummary>>>>
}>

/**
 * A page sorted by first or last name within a creation date range, name after name: the name
 * index keeps the records of one name (sort key and raw name) in id order, and the ids of a date
 * range lie between the bounds its days' counters keep, so the records of one name in the range
 * are one short stretch of the index. Counting them name by name until the page's offset is
 * reached passes only the range's records before the page (a 30-day range: 27,000 at most, where
 * walking the name index from the top passed up to a million, and sorting the range's records
 * took 20 ms), from whichever end of the order is nearer; the page is then read from the name
 * where it starts, and the next ones.
 *
 * The creation date and the status are checked in the index too, so the answer does not depend
 * on ids following creation days; where they do not, the stretches are only longer.
 */
export class SqliteListNameRange {
  readonly #mirror: SqliteCounterMirror
  readonly #statements: Readonly<Record<'first' | 'last', Statements>>

  constructor(db: BetterSqlite3.Database, mirror: SqliteCounterMirror) {
    this.#mirror = mirror
    this.#statements = { first: statements(db, 'first'), last: statements(db, 'last') }
  }

  /**
   * The page of `query` (sorted by a name, within [from, before)) among `total` matches whose
   * ids lie in [lo, hi], counted from the nearer end of the order.
   */
  page(
    query: ListQuery,
    from: number,
    before: number,
    lo: number,
    hi: number,
    total: number,
  ): BeneficiarySummary[] {
    const name = query.sort === 'first_name' ? 'first' : 'last'
    const limit = Math.min(query.limit, total - query.offset)
    // The page's rows in ascending order are [start, start + limit).
    const start = query.descending ? total - query.offset - limit : query.offset
    const after = total - start - limit
    const backwards = after < start
    const names = this.#names(name, query.status, lo, hi)
    if (backwards) names.reverse()
    const { count, rows } = this.#statements[name]
    const status = query.status === undefined ? 'any' : 'status'
    const read = rows[backwards ? 'descending' : 'ascending'][status]
    const values: Record<string, unknown> = { from, before, lo, hi, status: query.status }
    let offset = backwards ? after : start
    // Where no other day's ids fall among the range's, a whole block of ids inside [lo, hi] holds
    // only records of the range: its counter counts them, and only the two blocks at the ends
    // of the range are counted in the index.
    const blocks = this.#idsFollowDays(query.status, from, before)
    const items: BeneficiarySummary[] = []
    for (const [sortKey, rawName] of names) {
      values.sortKey = sortKey
      values.rawName = rawName
      if (items.length === 0) {
        const n = blocks
          ? this.#countByBlocks(name, query.status, sortKey, rawName, values)
          : (count[status].get(values)?.n ?? 0)
        if (offset >= n) {
          offset -= n
          continue
        }
      }
      values.limit = limit - items.length
      values.offset = items.length === 0 ? offset : 0
      for (const row of read.allValues(values)) items.push(summaryOf(row))
      if (items.length === limit) break
    }
    // Read backwards, the rows came in descending order already.
    return backwards === query.descending ? items : items.reverse()
  }

  /**
   * The records of one name in the range: its counters' blocks inside [lo, hi], and the index
   * for the blocks where the range begins and ends.
   */
  #countByBlocks(
    name: 'first' | 'last',
    status: string | undefined,
    sortKey: string,
    rawName: string,
    values: Record<string, unknown>,
  ): number {
    const lo = Number(values.lo)
    const hi = Number(values.hi)
    const firstBlock = Math.floor(lo / NAME_BLOCK_SIZE)
    const lastBlock = Math.floor(hi / NAME_BLOCK_SIZE)
    const count = this.#statements[name].count[status === undefined ? 'any' : 'status']
    const edge = (from: number, to: number): number => {
      values.lo = from
      values.hi = to
      const n = count.get(values)?.n ?? 0
      values.lo = lo
      values.hi = hi
      return n
    }
    if (firstBlock === lastBlock) return edge(lo, hi)
    const buckets = this.#mirror.names(name, status)
    const inside = buckets.sum(
      buckets.lowerBound([sortKey, rawName, firstBlock + 1]),
      buckets.lowerBound([sortKey, rawName, lastBlock]),
    )
    return (
      inside +
      edge(lo, (firstBlock + 1) * NAME_BLOCK_SIZE - 1) +
      edge(lastBlock * NAME_BLOCK_SIZE, hi)
    )
  }

  /**
   * Whether the records of `status` created in [from, before) are exactly those with ids between
   * the bounds of those days: the id bounds of successive days, over the whole table, do not
   * overlap, and the range's edges are whole days.
   */
  #idsFollowDays(status: string | undefined, from: number, before: number): boolean {
    if (!isDayBound(from) || !isDayBound(before)) return false
    const days = this.#mirror.days(status)
    return idsFollowDays(days, 0, days.size)
  }

  /** The names, in order, with records of `status` among ids [lo, hi] by the counters' blocks. */
  #names(name: 'first' | 'last', status: string | undefined, lo: number, hi: number): Name[] {
    const buckets = this.#mirror.names(name, status)
    const firstBlock = Math.floor(lo / NAME_BLOCK_SIZE)
    const lastBlock = Math.floor(hi / NAME_BLOCK_SIZE)
    const names: Name[] = []
    let last: Name | undefined
    for (let i = 0; i < buckets.size; i++) {
      const [sortKey, rawName, block] = buckets.key(i)
      if (block < firstBlock || block > lastBlock || buckets.count(i) <= 0) continue
      if (last !== undefined && last[0] === sortKey && last[1] === rawName) continue
      last = [sortKey, rawName]
      names.push(last)
    }
    return names
  }
}

/** The statements of one name: the records of one name in the range, counted and read. */
function statements(db: BetterSqlite3.Database, name: 'first' | 'last'): Statements {
  const [sortKey, rawName] =
    name === 'first' ? ['sort_first', 'first_name'] : ['sort_last', 'last_name']
  const within = (byStatus: boolean) => {
    const query = queryBuilder
      .selectFrom('beneficiaries')
      .where(sql.ref(`beneficiaries.${sortKey}`), '=', slot('sortKey'))
      .where(sql.ref(`beneficiaries.${rawName}`), '=', slot('rawName'))
      .where('beneficiaries.id', '>=', slot('lo'))
      .where('beneficiaries.id', '<=', slot('hi'))
      .where(unindexed('created_at'), '>=', slot('from'))
      .where(unindexed('created_at'), '<', slot('before'))
    return byStatus ? query.where(unindexed('status'), '=', slot('status')) : query
  }
  const count = (byStatus: boolean) =>
    new SqliteQuery<{ n: number }>(db, within(byStatus).select(sql<number>`count(*)`.as('n')))
  const rows = (byStatus: boolean, direction: 'asc' | 'desc') =>
    new SqliteQuery<BeneficiarySummary>(
      db,
      within(byStatus)
        .select(SUMMARY_COLUMNS.map((column) => `beneficiaries.${column}` as const))
        .orderBy('beneficiaries.id', direction)
        .limit(slot('limit'))
        .offset(slot('offset')),
    )
  return {
    count: { any: count(false), status: count(true) },
    rows: {
      ascending: { any: rows(false, 'asc'), status: rows(true, 'asc') },
      descending: { any: rows(false, 'desc'), status: rows(true, 'desc') },
    },
  }
}
