import type { ListQuery } from '../../../core/ports/beneficiary-store.js'
import { DAY_MS } from '../../../core/time.js'
import type { CountedKeys, FoundBucket } from './sqlite-counted-keys.js'
import type { SqliteCounterMirror } from './sqlite-counter-mirror.js'
import { BLOCK_SIZE, NAME_BLOCK_SIZE } from '../writes/sqlite-counters.js'
import { type PageRead, type Seek, isDayBound } from './sqlite-list-plan.js'
import { dayIndexes, idsFollowDays } from './sqlite-list-totals.js'

/** Below this offset a plain OFFSET is cheaper than finding the page through the counters. */
export const DEEP_OFFSET = 2_000

/**
 * Where a deep page of an `order` plan starts, from the connection's copy of the counters: the
 * block of ids, the day, or the bucket of a name order (sort key, raw name, block of ids) where
 * it begins, so that OFFSET skips at most one bucket instead of up to a million rows. Filtered
 * sorts that no counter covers (`updated_at` within a date range) skip along their index; a name
 * sort within one is `SqliteListNameRange`'s.
 */
export class SqliteListSeek {
  readonly #mirror: SqliteCounterMirror

  constructor(mirror: SqliteCounterMirror) {
    this.#mirror = mirror
  }

  /**
   * Where a page of an `order` plan over `total` matches, at {@link DEEP_OFFSET} or deeper,
   * starts. One that a counter covers seeks (`values.seek` and, for a name, `values.seekName`
   * and `values.seekId`, with `values.offset` the rest within the bucket); any other reads from
   * the top. A descending page that seeks by key is read as its ascending mirror.
   *
   * Where the sort's column already has a bound from the date filter (ids between `values.lo`
   * and `values.hi`, `created_at` from `values.from`), the seek narrows that bound instead of
   * adding a second one: SQLite walks the index from one lower (or upper) bound only and checks
   * the other on every row it passes, which made such a page cost as much as reading from the top.
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
      this.#seekIdByDay(page, from, before, values)
    } else if (keyed) {
      // Key seeks count ascending: a descending page is read as its ascending mirror.
      if (page.descending) {
        page = { ...page, descending: false, offset: total - page.offset - page.limit }
        reversed = !reversed
        values.offset = page.offset
      }
      seek = this.#seekKey(page, from, before, dates, values)
    }
    return { page, reversed, seek }
  }

  /** Finds the block of ids where the page starts; sets `seek` and the offset within it. */
  #seekBlock(page: ListQuery, values: Record<string, unknown>): boolean {
    const blocks = this.#mirror.blocks(page.status)
    const bucket = blocks.find(page.offset, 0, blocks.size, page.descending)
    if (bucket === undefined) return false
    const block = blocks.key(bucket.index)
    values.seek = (page.descending ? block + 1 : block) * BLOCK_SIZE
    values.offset = page.offset - bucket.before
    return true
  }

  /**
   * Finds the bucket of the sort's order (day, name bucket) where an ascending page starts; sets
   * the seek's values and the offset within the bucket.
   */
  #seekKey(
    page: ListQuery,
    from: number,
    before: number,
    dates: boolean,
    values: Record<string, unknown>,
  ): Seek {
    const { status, offset } = page
    let bucket: FoundBucket | undefined
    switch (page.sort) {
      case 'created_at': {
        const days = this.#mirror.days(status)
        bucket = this.#dayBucket(days, page, from, before)
        if (bucket === undefined) return 'none'
        values.offset = offset - bucket.before
        const start = days.key(bucket.index) * DAY_MS
        if (!dates) {
          values.seek = start
          return 'key'
        }
        // The date filter's bound, raised: the query's only lower bound on `created_at`.
        values.from = Math.max(from, start)
        return 'none'
      }
      case 'updated_at': {
        const days = this.#mirror.updated(status)
        bucket = days.find(offset, 0, days.size, false)
        if (bucket !== undefined) values.seek = days.key(bucket.index) * DAY_MS
        break
      }
      default: {
        const names = this.#mirror.names(page.sort === 'first_name' ? 'first' : 'last', status)
        bucket = names.find(offset, 0, names.size, false)
        if (bucket === undefined) return 'none'
        const [sortKey, rawName, block] = names.key(bucket.index)
        values.offset = offset - bucket.before
        values.seek = sortKey
        values.seekName = rawName
        values.seekId = block * NAME_BLOCK_SIZE
        return 'name'
      }
    }
    if (bucket === undefined) return 'none'
    values.offset = offset - bucket.before
    return 'key'
  }

  /**
   * For ids within a date range: when the ids of successive days do not overlap (records get
   * ids in creation order, as they usually do), the day where the page starts also tells from
   * which id to count: `values.lo` (or `values.hi`, descending) moves there. Any overlap, and the
   * page is found by OFFSET instead.
   */
  #seekIdByDay(
    page: ListQuery,
    from: number,
    before: number,
    values: Record<string, unknown>,
  ): boolean {
    const days = this.#mirror.days(page.status)
    if (!idsFollowDays(days, ...dayIndexes(days, from, before))) return false
    const bucket = this.#dayBucket(days, page, from, before)
    if (bucket === undefined) return false
    if (page.descending) values.hi = Math.min(Number(values.hi), days.maxId(bucket.index))
    else values.lo = Math.max(Number(values.lo), days.minId(bucket.index))
    values.offset = page.offset - bucket.before
    return true
  }

  /** The day within [from, before) where the page starts, counting in the page's order. */
  #dayBucket(
    days: CountedKeys<number>,
    page: ListQuery,
    from: number,
    before: number,
  ): FoundBucket | undefined {
    const [first, end] = dayIndexes(days, from, before)
    return days.find(page.offset, first, end, page.descending)
  }
}
