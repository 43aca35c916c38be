import type BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import type { ListQuery } from '../../core/ports/beneficiary-store.js'
import { DAY_MS } from '../../core/time.js'
import { BLOCK_SIZE } from './sqlite-counters.js'
import type { PageRead, Seek } from './sqlite-list-plan.js'
import { isDayBound, NO_LOWER, NO_UPPER } from './sqlite-list-range.js'
import { queryBuilder, slot, SqliteQuery } from './sqlite-query.js'

/** Below this offset a plain OFFSET is cheaper than finding the page through the counters. */
export const DEEP_OFFSET = 2_000

type Bucket = { key: number | string; n: number; minId: number; maxId: number }
type Buckets = SqliteQuery<Bucket>

/**
 * Where a deep page of an `order` plan starts, from the counters: the block of ids, the day, or
 * the two-letter name prefix where it begins, so that OFFSET skips at most one bucket instead
 * of up to a million rows. Filtered sorts that no counter covers (a name sort within a date
 * range, say) skip along their index.
 */
export class SqliteListSeek {
  readonly #blocks: Readonly<Record<'asc' | 'desc', Buckets>>
  readonly #blocksByStatus: Readonly<Record<'asc' | 'desc', Buckets>>
  readonly #days: Readonly<Record<'asc' | 'desc', Buckets>>
  readonly #daysByStatus: Readonly<Record<'asc' | 'desc', Buckets>>
  readonly #updatedDays: Buckets
  readonly #updatedDaysByStatus: Buckets
  readonly #namePrefixes: Buckets
  readonly #namePrefixesByStatus: Buckets

  constructor(db: BetterSqlite3.Database) {
    const buckets = (
      table: 'beneficiary_block_counts' | 'beneficiary_day_counts',
      byStatus: boolean,
      direction: 'asc' | 'desc',
    ): Buckets => {
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
        .orderBy(key, direction)
      if (byStatus) query = query.where('status', '=', slot('status'))
      return new SqliteQuery(db, query)
    }
    this.#blocks = {
      asc: buckets('beneficiary_block_counts', false, 'asc'),
      desc: buckets('beneficiary_block_counts', false, 'desc'),
    }
    this.#blocksByStatus = {
      asc: buckets('beneficiary_block_counts', true, 'asc'),
      desc: buckets('beneficiary_block_counts', true, 'desc'),
    }
    this.#days = {
      asc: buckets('beneficiary_day_counts', false, 'asc'),
      desc: buckets('beneficiary_day_counts', false, 'desc'),
    }
    this.#daysByStatus = {
      asc: buckets('beneficiary_day_counts', true, 'asc'),
      desc: buckets('beneficiary_day_counts', true, 'desc'),
    }
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
      .orderBy('day')
    this.#updatedDays = new SqliteQuery(db, updated)
    this.#updatedDaysByStatus = new SqliteQuery(db, updated.where('status', '=', slot('status')))
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
      .orderBy('prefix')
    this.#namePrefixes = new SqliteQuery(db, prefixes)
    this.#namePrefixesByStatus = new SqliteQuery(db, prefixes.where('status', '=', slot('status')))
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
    const found = skipBuckets(
      blocks.all({ keyFrom: NO_LOWER, keyBefore: NO_UPPER, status: page.status }),
      page.offset,
    )
    if (found === undefined) return false
    const block = Number(found.key)
    values.seek = (page.descending ? block + 1 : block) * BLOCK_SIZE
    values.offset = found.rest
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
    let buckets: readonly Bucket[]
    switch (page.sort) {
      case 'created_at':
        buckets = this.#dayBuckets(page, from, before)
        break
      case 'updated_at':
        buckets = (status === undefined ? this.#updatedDays : this.#updatedDaysByStatus).all({
          status,
        })
        break
      default: {
        const name = page.sort === 'first_name' ? 'first' : 'last'
        buckets = (status === undefined ? this.#namePrefixes : this.#namePrefixesByStatus).all({
          name,
          status,
        })
      }
    }
    const found = skipBuckets(buckets, page.offset)
    if (found === undefined) return false
    values.seek = typeof found.key === 'number' ? found.key * DAY_MS : found.key
    values.offset = found.rest
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
    const days = this.#dayBuckets(page, from, before)
    for (let i = 1; i < days.length; i++) {
      const earlier = page.descending ? days[i]! : days[i - 1]!
      const later = page.descending ? days[i - 1]! : days[i]!
      if (earlier.maxId >= later.minId) return false
    }
    const found = skipBuckets(days, page.offset)
    if (found === undefined) return false
    values.seek = page.descending ? found.bucket.maxId + 1 : found.bucket.minId
    values.offset = found.rest
    return true
  }

  /** The days within [from, before) that hold matching records, in the page's order. */
  #dayBuckets(page: ListQuery, from: number, before: number): readonly Bucket[] {
    const direction = page.descending ? 'desc' : 'asc'
    const days = (page.status === undefined ? this.#days : this.#daysByStatus)[direction]
    return days.all({
      keyFrom: from === NO_LOWER ? NO_LOWER : from / DAY_MS,
      keyBefore: before === NO_UPPER ? NO_UPPER : before / DAY_MS,
      status: page.status,
    })
  }
}

/** The bucket holding the row at `offset` (counting across buckets in order), and its rank in it. */
function skipBuckets(
  buckets: readonly Bucket[],
  offset: number,
): { key: number | string; bucket: Bucket; rest: number } | undefined {
  let rest = offset
  for (const bucket of buckets) {
    if (rest < bucket.n) return { key: bucket.key, bucket, rest }
    rest -= bucket.n
  }
  return undefined
}
