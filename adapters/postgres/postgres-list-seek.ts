import { sql } from 'kysely'
import { BENEFICIARY_STATUSES } from '../../core/beneficiary-fields.js'
import type { ListQuery } from '../../core/ports/beneficiary-store.js'
import { DAY_MS } from '../../core/time.js'
import { BLOCK_SIZE, table, type CounterKind } from './postgres-counters.js'
import { isDayBound, NO_LOWER, NO_UPPER, type PageRead, type Seek } from './postgres-list-plan.js'
import { PostgresQuery, slot, type Queryable } from './postgres-query.js'
import type { Filters } from './postgres-list-totals.js'

/** Below this offset a plain OFFSET is cheaper than finding the page through the counters. */
export const DEEP_OFFSET = 2_000

type Bucket = { key: number | string; n: number; minId: number; maxId: number }

/**
 * Where a deep page of an `order` plan starts, from the counters: the block of ids, the day, or
 * the two-letter name prefix where it begins, so that OFFSET skips at most one bucket instead
 * of up to a million rows. Filtered sorts that no counter covers (a name sort within a date
 * range, say) skip along their index.
 */
export class PostgresListSeek {
  readonly #numeric: Readonly<Record<'asc' | 'desc', PostgresQuery>>
  readonly #prefixes: PostgresQuery

  constructor(schema: string) {
    const counts = table(schema, 'beneficiary_counts')
    // The shards of a key summed; keys whose records are all gone left out.
    const numeric = (direction: 'ASC' | 'DESC') =>
      new PostgresQuery(sql`
        SELECT key, sum(n)::bigint, min(min_id), max(max_id) FROM ${counts}
        WHERE kind = ${slot('kind')}::text AND status = ANY(${slot('statuses')}::text[])
          AND key >= ${slot('key_from')}::bigint AND key < ${slot('key_before')}::bigint
          AND prefix = ''
        GROUP BY key HAVING sum(n) > 0 ORDER BY key ${sql.raw(direction)}`)
    this.#numeric = { asc: numeric('ASC'), desc: numeric('DESC') }
    // Grouped and ordered by code point, the collation of the name indexes.
    this.#prefixes = new PostgresQuery(sql`
      SELECT prefix, sum(n)::bigint, 0, 0 FROM ${counts}
      WHERE kind = ${slot('kind')}::text AND status = ANY(${slot('statuses')}::text[])
        AND key = 0
      GROUP BY prefix HAVING sum(n) > 0 ORDER BY prefix`)
  }

  /**
   * Where a page of an `order` plan over `total` matches, at {@link DEEP_OFFSET} or deeper,
   * starts. One that a counter covers seeks (`values.seek`, with `values.offset` the rest within
   * the bucket); any other reads from the top. A descending page that seeks by key is read as
   * its ascending mirror.
   */
  async find(
    db: Queryable,
    read: PageRead,
    filters: Filters,
    total: number,
    values: Record<string, unknown>,
  ): Promise<PageRead & { seek: Seek }> {
    let { page, reversed } = read
    let seek: Seek = 'none'
    const { from, before, dates } = filters
    const aligned = isDayBound(from) && isDayBound(before)
    const keyed = page.sort === 'created_at' ? aligned : page.sort !== 'id' && !dates
    if (page.sort === 'id' && !dates) {
      const found = skipBuckets(await this.#buckets(db, 'b', page, NO_LOWER, NO_UPPER), page.offset)
      if (found !== undefined) {
        const block = Number(found.key)
        values.seek = (page.descending ? block + 1 : block) * BLOCK_SIZE
        values.offset = found.rest
        seek = 'id'
      }
    } else if (page.sort === 'id' && aligned) {
      seek = (await this.#seekIdByDay(db, page, from, before, values)) ? 'id' : 'none'
    } else if (keyed) {
      // Key seeks count ascending: a descending page is read as its ascending mirror.
      if (page.descending) {
        page = { ...page, descending: false, offset: total - page.offset - page.limit }
        reversed = !reversed
        values.offset = page.offset
      }
      seek = (await this.#seekKey(db, page, from, before, values)) ? 'key' : 'none'
    }
    return { page, reversed, seek }
  }

  /**
   * Finds the bucket of the sort's first column (day, name prefix) where an ascending page
   * starts; sets `seek` to the bucket's first value and the offset within it.
   */
  async #seekKey(
    db: Queryable,
    page: ListQuery,
    from: number,
    before: number,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    let buckets: readonly Bucket[]
    switch (page.sort) {
      case 'created_at':
        buckets = await this.#buckets(db, 'd', page, from, before)
        break
      case 'updated_at':
        buckets = await this.#buckets(db, 'u', page, NO_LOWER, NO_UPPER)
        break
      default: {
        const rows = await this.#prefixes.arrays(db, {
          kind: page.sort === 'first_name' ? 'f' : 'l',
          statuses: statusesOf(page),
        })
        buckets = rows.map(toBucket)
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
  async #seekIdByDay(
    db: Queryable,
    page: ListQuery,
    from: number,
    before: number,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    const days = await this.#buckets(db, 'd', page, from, before)
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

  /** The buckets of a numeric kind within [from, before) (days, for `d`), in the page's order. */
  async #buckets(
    db: Queryable,
    kind: CounterKind,
    page: ListQuery,
    from: number,
    before: number,
  ): Promise<readonly Bucket[]> {
    const rows = await this.#numeric[page.descending ? 'desc' : 'asc'].arrays(db, {
      kind,
      statuses: statusesOf(page),
      key_from: from === NO_LOWER ? NO_LOWER : from / DAY_MS,
      key_before: before === NO_UPPER ? NO_UPPER : before / DAY_MS,
    })
    return rows.map(toBucket)
  }
}

function statusesOf(page: ListQuery): readonly string[] {
  return page.status === undefined ? BENEFICIARY_STATUSES : [page.status]
}

function toBucket(row: readonly unknown[]): Bucket {
  return {
    key: row[0] as number | string,
    n: row[1] as number,
    minId: row[2] as number,
    maxId: row[3] as number,
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
