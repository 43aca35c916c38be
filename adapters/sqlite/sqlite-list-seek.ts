import type BetterSqlite3 from 'better-sqlite3'
import { sql, type SelectQueryBuilder } from 'kysely'
import type { ListQuery } from '../../core/ports/beneficiary-store.js'
import { DAY_MS } from '../../core/time.js'
import { BLOCK_SIZE } from './sqlite-counters.js'
import type { PageRead, Seek } from './sqlite-list-plan.js'
import { isDayBound, NO_LOWER, NO_UPPER } from './sqlite-list-range.js'
import { queryBuilder, slot, SqliteQuery } from './sqlite-query.js'

/** Below this offset a plain OFFSET is cheaper than finding the page through the counters. */
export const DEEP_OFFSET = 2_000

type Bucket = { key: number | string; n: number; minId: number; maxId: number }
/** The bucket holding the row at `offset`, and `before`, how many rows the buckets ahead of it hold. */
type Found = Bucket & { before: number }
type Buckets = SqliteQuery<Found>
type ByDirection = Readonly<Record<'asc' | 'desc', Buckets>>

/**
 * The bucket where the row at `:offset` falls, found by SQLite: a running sum over the buckets in
 * `direction`, of which only the one found comes back. Returning every bucket (a thousand blocks
 * or days at a million records) and adding them up in JavaScript cost a millisecond a page.
 */
function found(
  db: BetterSqlite3.Database,
  grouped: SelectQueryBuilder<any, any, Bucket>, // eslint-disable-line @typescript-eslint/no-explicit-any
  direction: 'asc' | 'desc',
): Buckets {
  const order = sql.raw(direction)
  const ranked = queryBuilder
    .selectFrom(grouped.as('bucket'))
    .select([
      'key',
      'n',
      'minId',
      'maxId',
      sql<number>`sum(n) OVER (ORDER BY key ${order} ROWS UNBOUNDED PRECEDING)`.as('through'),
    ])
  return new SqliteQuery(
    db,
    queryBuilder
      .selectFrom(ranked.as('ranked'))
      .select(['key', 'n', 'minId', 'maxId', sql<number>`through - n`.as('before')])
      .where('through', '>', slot('offset'))
      .orderBy('key', direction)
      .limit(1),
  )
}

/**
 * Where a deep page of an `order` plan starts, from the counters: the block of ids, the day, or
 * the two-letter name prefix where it begins, so that OFFSET skips at most one bucket instead
 * of up to a million rows. Filtered sorts that no counter covers (a name sort within a date
 * range, say) skip along their index.
 */
export class SqliteListSeek {
  readonly #blocks: ByDirection
  readonly #blocksByStatus: ByDirection
  readonly #days: ByDirection
  readonly #daysByStatus: ByDirection
  readonly #dayOverlap: SqliteQuery<{ overlap: number }>
  readonly #dayOverlapByStatus: SqliteQuery<{ overlap: number }>
  readonly #updatedDays: Buckets
  readonly #updatedDaysByStatus: Buckets
  readonly #namePrefixes: Buckets
  readonly #namePrefixesByStatus: Buckets

  constructor(db: BetterSqlite3.Database) {
    const grouped = (
      table: 'beneficiary_block_counts' | 'beneficiary_day_counts',
      byStatus: boolean,
    ) => {
      const key = table === 'beneficiary_day_counts' ? 'day' : 'block'
      // Days carry the bounds of their ids; blocks are their own bounds.
      const [minId, maxId] = key === 'day' ? ['min(min_id)', 'max(max_id)'] : ['0', '0']
      let query = queryBuilder
        .selectFrom(table)
        .select([
          sql<number>`${sql.ref(key)}`.as('key'),
          sql<number>`sum(n)`.as('n'),
          sql<number>`${sql.raw(minId)}`.as('minId'),
          sql<number>`${sql.raw(maxId)}`.as('maxId'),
        ])
        .where(sql.ref(key), '>=', slot('keyFrom'))
        .where(sql.ref(key), '<', slot('keyBefore'))
        .groupBy(key)
        .having(sql<number>`sum(n)`, '>', 0)
      if (byStatus) query = query.where('status', '=', slot('status'))
      return query
    }
    const bothWays = (
      table: 'beneficiary_block_counts' | 'beneficiary_day_counts',
      byStatus: boolean,
    ): ByDirection => ({
      asc: found(db, grouped(table, byStatus), 'asc'),
      desc: found(db, grouped(table, byStatus), 'desc'),
    })
    this.#blocks = bothWays('beneficiary_block_counts', false)
    this.#blocksByStatus = bothWays('beneficiary_block_counts', true)
    this.#days = bothWays('beneficiary_day_counts', false)
    this.#daysByStatus = bothWays('beneficiary_day_counts', true)
    const overlap = (byStatus: boolean): SqliteQuery<{ overlap: number }> =>
      new SqliteQuery(
        db,
        queryBuilder
          .selectFrom(
            grouped('beneficiary_day_counts', byStatus)
              .select(sql<number>`lag(max(max_id)) OVER (ORDER BY day)`.as('previousMaxId'))
              .as('day'),
          )
          .select(sql<number>`count(*)`.as('overlap'))
          .where(sql<boolean>`${sql.ref('previousMaxId')} >= ${sql.ref('minId')}`),
      )
    this.#dayOverlap = overlap(false)
    this.#dayOverlapByStatus = overlap(true)
    const updated = queryBuilder
      .selectFrom('beneficiary_updated_counts')
      .select([
        'day as key',
        sql<number>`sum(n)`.as('n'),
        sql<number>`0`.as('minId'),
        sql<number>`0`.as('maxId'),
      ])
      .groupBy('day')
      .having(sql<number>`sum(n)`, '>', 0)
    this.#updatedDays = found(db, updated, 'asc')
    this.#updatedDaysByStatus = found(db, updated.where('status', '=', slot('status')), 'asc')
    // Grouped and ordered by BINARY, the collation of the name indexes.
    const prefixes = queryBuilder
      .selectFrom('beneficiary_name_counts')
      .select([
        'prefix as key',
        sql<number>`sum(n)`.as('n'),
        sql<number>`0`.as('minId'),
        sql<number>`0`.as('maxId'),
      ])
      .where('name', '=', slot('name'))
      .groupBy('prefix')
      .having(sql<number>`sum(n)`, '>', 0)
    this.#namePrefixes = found(db, prefixes, 'asc')
    this.#namePrefixesByStatus = found(db, prefixes.where('status', '=', slot('status')), 'asc')
  }

  /**
   * Where a page of an `order` plan over `total` matches, at {@link DEEP_OFFSET} or deeper,
   * starts. One that a counter covers seeks (`values.seek`, with `values.offset` the rest within
   * the bucket); any other reads from the top. A descending page that seeks by key is read as its
   * ascending mirror.
   */
  find(
    read: PageRead,
    from: number,
    before: number,
    dates: boolean,
    total: number,
    values: Record<string, unknown>,
  ): PageRead & { seek: Seek } {
    let { page, reversed } = read
    let seek: Seek = 'none'
    const aligned = isDayBound(from) && isDayBound(before)
    const keyed = page.sort === 'created_at' ? aligned : page.sort !== 'id' && !dates
    if (page.sort === 'id' && !dates) {
      seek = this.#seekBlock(page, values) ? 'id' : 'none'
    } else if (page.sort === 'id' && aligned) {
      seek = this.#seekIdByDay(page, from, before, values) ? 'id' : 'none'
    } else if (keyed) {
      // Key seeks count ascending: a descending page is read as its ascending mirror.
      if (page.descending) {
        page = { ...page, descending: false, offset: total - page.offset - page.limit }
        reversed = !reversed
        values.offset = page.offset
      }
      seek = this.#seekKey(page, from, before, values) ? 'key' : 'none'
    }
    return { page, reversed, seek }
  }

  /** Finds the block of ids where the page starts; sets `seek` and the offset within it. */
  #seekBlock(page: ListQuery, values: Record<string, unknown>): boolean {
    const direction = page.descending ? 'desc' : 'asc'
    const blocks = (page.status === undefined ? this.#blocks : this.#blocksByStatus)[direction]
    const bucket = blocks.get({
      keyFrom: NO_LOWER,
      keyBefore: NO_UPPER,
      status: page.status,
      offset: page.offset,
    })
    if (bucket === undefined) return false
    const block = Number(bucket.key)
    values.seek = (page.descending ? block + 1 : block) * BLOCK_SIZE
    values.offset = page.offset - bucket.before
    return true
  }

  /**
   * Finds the bucket of the sort's first column (day, name prefix) where an ascending page
   * starts; sets `seek` to the bucket's first value and the offset within it.
   */
  #seekKey(
    page: ListQuery,
    from: number,
    before: number,
    values: Record<string, unknown>,
  ): boolean {
    const status = page.status
    const offset = page.offset
    let bucket: Found | undefined
    switch (page.sort) {
      case 'created_at':
        bucket = this.#dayBucket(page, from, before)
        break
      case 'updated_at':
        bucket = (status === undefined ? this.#updatedDays : this.#updatedDaysByStatus).get({
          status,
          offset,
        })
        break
      default: {
        const name = page.sort === 'first_name' ? 'first' : 'last'
        bucket = (status === undefined ? this.#namePrefixes : this.#namePrefixesByStatus).get({
          name,
          status,
          offset,
        })
      }
    }
    if (bucket === undefined) return false
    values.seek = typeof bucket.key === 'number' ? bucket.key * DAY_MS : bucket.key
    values.offset = offset - bucket.before
    return true
  }

  /**
   * For ids within a date range: when the ids of successive days do not overlap (records get
   * ids in creation order, as they usually do), the day where the page starts also tells from
   * which id to count. Any overlap, and the page is found by OFFSET instead.
   */
  #seekIdByDay(
    page: ListQuery,
    from: number,
    before: number,
    values: Record<string, unknown>,
  ): boolean {
    const overlap = (page.status === undefined ? this.#dayOverlap : this.#dayOverlapByStatus).get(
      dayRange(page.status, from, before),
    )
    if (overlap === undefined || overlap.overlap > 0) return false
    const bucket = this.#dayBucket(page, from, before)
    if (bucket === undefined) return false
    values.seek = page.descending ? bucket.maxId + 1 : bucket.minId
    values.offset = page.offset - bucket.before
    return true
  }

  /** The day within [from, before) where the page starts, counting in the page's order. */
  #dayBucket(page: ListQuery, from: number, before: number): Found | undefined {
    const direction = page.descending ? 'desc' : 'asc'
    const days = (page.status === undefined ? this.#days : this.#daysByStatus)[direction]
    return days.get({ ...dayRange(page.status, from, before), offset: page.offset })
  }
}

/** The slot values of the days within [from, before). */
function dayRange(status: string | undefined, from: number, before: number) {
  return {
    keyFrom: from === NO_LOWER ? NO_LOWER : from / DAY_MS,
    keyBefore: before === NO_UPPER ? NO_UPPER : before / DAY_MS,
    status,
  }
}
