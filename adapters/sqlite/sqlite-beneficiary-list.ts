import type BetterSqlite3 from 'better-sqlite3'
import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely'
import type { BeneficiarySummary, SortField } from '../../core/beneficiary.js'
import type { ListQuery, Page } from '../../core/ports/beneficiary-store.js'
import { DAY_MS } from '../../core/time.js'
import { BLOCK_SIZE } from './sqlite-counters.js'
import type { SqliteDataVersion } from './sqlite-data-version.js'
import { queryBuilder, slot, SqliteQuery } from './sqlite-query.js'
import type { SqliteSchema } from './sqlite-schema.js'

/** Below this offset a plain OFFSET is cheaper than finding the page through the counters. */
const DEEP_OFFSET = 2_000
/** Rows visited per matching row when a plan collects every match and sorts them. */
const SORT_COST = 4
/** Totals remembered at most between two changes of the database. */
const MAX_REMEMBERED_TOTALS = 1_000
/** Prepared page queries kept at most (shapes × page sizes); past it they are prepared anew. */
const MAX_ITEMS_QUERIES = 512
const NO_LOWER = Number.MIN_SAFE_INTEGER
const NO_UPPER = Number.MAX_SAFE_INTEGER

/**
 * `order` walks the index that gives the sort order and checks the filters row by row (cheap
 * when the filters keep many rows); `filter` reads the rows the filters select through their
 * index and sorts them (cheap when they keep few). The counters tell which, before the query.
 */
type Plan = 'order' | 'filter'

/**
 * Where an `order` plan starts: at the top; at an id the counters found (`id`, either
 * direction); or, ascending only, at a value of the sort's first column (`key`: a day of
 * `created_at` or `updated_at`, the first two characters of a name's sort key).
 */
type Seek = 'none' | 'id' | 'key'

interface Shape {
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

type Items = SqliteQuery<BeneficiarySummary>
type Count = SqliteQuery<{ n: number }>
type Bucket = { key: number | string; n: number; minId: number; maxId: number }

const SUMMARY_COLUMNS = [
  'beneficiaries.id',
  'beneficiaries.first_name',
  'beneficiaries.last_name',
  'beneficiaries.email',
  'beneficiaries.phone',
  'beneficiaries.status',
  'beneficiaries.created_at',
  'beneficiaries.updated_at',
] as const

const ORDER_COLUMNS: Readonly<Record<SortField, readonly (keyof SqliteSchema['beneficiaries'])[]>> =
  {
    id: ['id'],
    created_at: ['created_at', 'id'],
    updated_at: ['updated_at', 'id'],
    last_name: ['sort_last', 'last_name', 'id'],
    first_name: ['sort_first', 'first_name', 'id'],
  }

/** `+column`: the same value, but SQLite will not use an index for it, which picks the plan. */
function unindexed<T>(column: string): RawBuilder<T> {
  return sql<T>`+${sql.ref(`beneficiaries.${column}`)}`
}

/**
 * The FTS5 query for search terms: each a quoted prefix of a word, all required (D16), and the
 * status when given. Quotes inside a term are doubled, so no input is read as FTS5 syntax.
 */
function matchExpression(terms: readonly string[], status: string | undefined): string {
  const quote = (text: string): string => `"${text.replaceAll('"', '""')}"`
  const words = [...new Set(terms)].map((term) => `words : ${quote(term)}*`)
  if (status !== undefined) words.push(`status : ${quote(status)}`)
  return words.join(' AND ')
}

/**
 * The listing of `SqliteBeneficiaryStore`: filters, sorts (D15), search (D16) and exact totals,
 * each query shape compiled once by Kysely and kept as a prepared statement.
 *
 * Totals without a search come from `beneficiary_day_counts` (a sum over at most a few thousand
 * rows, plus an index count for partial days); a search counts its matches in the FTS5 index.
 * A page in the second half is read from the other end. A deep page starts where the counters
 * say it begins (the block of ids, the day, the two-letter name prefix), so OFFSET skips at most
 * one bucket instead of up to a million rows; only filtered sorts that no counter covers (a
 * name sort within a date range, say) skip along their index.
 */
export class SqliteBeneficiaryList {
  readonly #db: BetterSqlite3.Database
  readonly #items = new Map<string, Items>()
  readonly #counts = new Map<string, Count>()
  readonly #dayTotal: Count
  readonly #statusTotal: Count
  readonly #statusTotalByStatus: Count
  readonly #dayTotalByStatus: Count
  readonly #idBounds: SqliteQuery<{ lo: number | null; hi: number | null }>
  readonly #idBoundsByStatus: SqliteQuery<{ lo: number | null; hi: number | null }>
  readonly #blocks: Readonly<Record<'asc' | 'desc', SqliteQuery<Bucket>>>
  readonly #blocksByStatus: Readonly<Record<'asc' | 'desc', SqliteQuery<Bucket>>>
  readonly #days: Readonly<Record<'asc' | 'desc', SqliteQuery<Bucket>>>
  readonly #daysByStatus: Readonly<Record<'asc' | 'desc', SqliteQuery<Bucket>>>
  readonly #updatedDays: SqliteQuery<Bucket>
  readonly #updatedDaysByStatus: SqliteQuery<Bucket>
  readonly #namePrefixes: SqliteQuery<Bucket>
  readonly #namePrefixesByStatus: SqliteQuery<Bucket>
  readonly #edgeCount: Count
  readonly #edgeCountByStatus: Count
  readonly #snapshot: BetterSqlite3.Transaction<(query: ListQuery) => Page<BeneficiarySummary>>
  readonly #dataVersion: SqliteDataVersion
  readonly #totalChanges: BetterSqlite3.Statement<[], number>
  readonly #totals = new Map<string, number>()
  #totalsVersion = -1
  #totalsChanges = -1

  constructor(db: BetterSqlite3.Database, dataVersion: SqliteDataVersion) {
    this.#db = db
    this.#dataVersion = dataVersion
    this.#snapshot = db.transaction((query: ListQuery) => this.#listNow(query))
    this.#totalChanges = db.prepare<[], number>('SELECT total_changes()').pluck()
    const days = queryBuilder
      .selectFrom('beneficiary_day_counts')
      .where('day', '>=', slot('dayFrom'))
      .where('day', '<', slot('dayBefore'))
    this.#dayTotal = new SqliteQuery(db, days.select(sql<number>`coalesce(sum(n), 0)`.as('n')))
    this.#dayTotalByStatus = new SqliteQuery(
      db,
      days.where('status', '=', slot('status')).select(sql<number>`coalesce(sum(n), 0)`.as('n')),
    )
    const statuses = queryBuilder
      .selectFrom('beneficiary_status_counts')
      .select(sql<number>`coalesce(sum(n), 0)`.as('n'))
    this.#statusTotal = new SqliteQuery(db, statuses)
    this.#statusTotalByStatus = new SqliteQuery(db, statuses.where('status', '=', slot('status')))
    // Days with no record left keep stale bounds; skipping them keeps the bounds tight.
    const bounds = days
      .where('n', '>', 0)
      .select([sql<number | null>`min(min_id)`.as('lo'), sql<number | null>`max(max_id)`.as('hi')])
    this.#idBounds = new SqliteQuery(db, bounds)
    this.#idBoundsByStatus = new SqliteQuery(db, bounds.where('status', '=', slot('status')))

    const buckets = (
      table: 'beneficiary_block_counts' | 'beneficiary_day_counts',
      byStatus: boolean,
      direction: 'asc' | 'desc',
    ): SqliteQuery<Bucket> => {
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

    const edge = queryBuilder
      .selectFrom('beneficiaries')
      .select(sql<number>`count(*)`.as('n'))
      .where('created_at', '>=', slot('from'))
      .where('created_at', '<', slot('before'))
    this.#edgeCount = new SqliteQuery(db, edge)
    this.#edgeCountByStatus = new SqliteQuery(
      db,
      edge.where(unindexed('status'), '=', slot('status')),
    )
  }

  /**
   * One page of summaries matching `query` and the exact number of matches, read from one
   * snapshot: another connection's commit cannot fall between the count and the page.
   */
  list(query: ListQuery): Page<BeneficiarySummary> {
    // Written into the SQL (see `Shape.limit`): only a whole number may get there.
    if (!Number.isSafeInteger(query.limit) || query.limit < 0) {
      throw new TypeError('limit must be a whole number of at least 0')
    }
    return this.#snapshot(query)
  }

  #listNow(query: ListQuery): Page<BeneficiarySummary> {
    this.#forgetTotalsIfChanged()
    if (query.search !== undefined) return this.#search(query, query.search)
    const from = query.createdFrom ?? NO_LOWER
    const before = query.createdBefore ?? NO_UPPER
    const dates = query.createdFrom !== undefined || query.createdBefore !== undefined
    const total = this.#total(query.status, from, before)
    if (total === 0 || query.offset >= total) return { items: [], total }
    let { page, reversed } = fromNearerEnd(query, total)
    const values: Record<string, unknown> = {
      from,
      before,
      status: page.status,
      limit: page.limit,
      offset: page.offset,
    }

    // How many rows an `order` plan visits per match: the filters' selectivity, or for ids
    // between the bounds of a date range, the density of matches between those bounds.
    const filtered = page.status !== undefined || dates
    let span = filtered ? this.#total(undefined, NO_LOWER, NO_UPPER) : total
    if (page.sort === 'id' && dates) {
      const bounds = (page.status === undefined ? this.#idBounds : this.#idBoundsByStatus).get({
        dayFrom: Math.floor(from / DAY_MS),
        dayBefore: Math.floor((before - 1) / DAY_MS) + 1,
        status: page.status,
      })
      values.lo = bounds?.lo ?? 0
      values.hi = bounds?.hi ?? 0
      span = (bounds?.hi ?? 0) - (bounds?.lo ?? 0) + 1
    }
    const orderCost = ((page.offset + page.limit) * span) / total
    const plan: Plan = filtered && SORT_COST * total < orderCost ? 'filter' : 'order'

    let seek: Seek = 'none'
    if (plan === 'order' && page.offset >= DEEP_OFFSET) {
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
    }

    const shape: Shape = {
      limit: page.limit,
      sort: page.sort,
      descending: page.descending,
      status: page.status !== undefined,
      dates,
      search: false,
      fromStart: false,
      plan,
      seek,
    }
    const items = summariesOf(this.#itemsQuery(shape).allValues(values))
    return { items: reversed ? items.reverse() : items, total }
  }

  /** Exact number of records with `status` (any when undefined) created in [from, before). */
  #total(status: string | undefined, from: number, before: number): number {
    const key = `t\u0000${status ?? ''}\u0000${from}\u0000${before}`
    return this.#remembered(key, () => this.#count(status, from, before))
  }

  #count(status: string | undefined, from: number, before: number): number {
    const dayFrom = from === NO_LOWER ? NO_LOWER : Math.ceil(from / DAY_MS)
    const dayBefore = before === NO_UPPER ? NO_UPPER : Math.floor(before / DAY_MS)
    const edge = status === undefined ? this.#edgeCount : this.#edgeCountByStatus
    if (dayFrom >= dayBefore) return edge.get({ from, before, status })?.n ?? 0
    if (from === NO_LOWER && before === NO_UPPER) {
      const totals = status === undefined ? this.#statusTotal : this.#statusTotalByStatus
      return totals.get({ status })?.n ?? 0
    }
    const days = status === undefined ? this.#dayTotal : this.#dayTotalByStatus
    let total = days.get({ dayFrom, dayBefore, status })?.n ?? 0
    if (from !== NO_LOWER && from < dayFrom * DAY_MS) {
      total += edge.get({ from, before: dayFrom * DAY_MS, status })?.n ?? 0
    }
    if (before !== NO_UPPER && dayBefore * DAY_MS < before) {
      total += edge.get({ from: dayBefore * DAY_MS, before, status })?.n ?? 0
    }
    return total
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

  #search(query: ListQuery, terms: readonly string[]): Page<BeneficiarySummary> {
    if (terms.length === 0 || !terms.every(isSearchable)) return { items: [], total: 0 }
    const dates = query.createdFrom !== undefined || query.createdBefore !== undefined
    const values: Record<string, unknown> = {
      match: matchExpression(terms, query.status),
      from: query.createdFrom ?? NO_LOWER,
      before: query.createdBefore ?? NO_UPPER,
    }
    const total = this.#searchTotal(dates, values)
    if (total === 0 || query.offset >= total) return { items: [], total }
    const { page, reversed } = fromNearerEnd(query, total)
    values.limit = page.limit
    values.offset = page.offset
    // The status is part of the FTS5 query: the index itself filters by it.
    const shape: Shape = {
      limit: page.limit,
      sort: page.sort,
      descending: page.descending,
      status: false,
      dates,
      search: true,
      fromStart: page.offset === 0,
      plan: 'filter',
      seek: 'none',
    }
    const items = summariesOf(this.#itemsQuery(shape).allValues(values))
    return { items: reversed ? items.reverse() : items, total }
  }

  #searchTotal(dates: boolean, values: Record<string, unknown>): number {
    const key = `s\u0000${dates}\u0000${String(values['match'])}\u0000${String(values['from'])}\u0000${String(values['before'])}`
    return this.#remembered(key, () => this.#searchCount(dates).get(values)?.n ?? 0)
  }

  /**
   * A total, remembered until the database changes: counting a common search prefix visits every
   * match (65,000 for `ros` at a million records, 3 ms), a date range sums its days, and the same
   * lists come back page after page. `#listNow` forgets every remembered total as soon as
   * anything was written: by this connection (`total_changes()`, at once) or by another process
   * (`data_version`, from the next turn of the event loop, see `SqliteDataVersion`).
   */
  #remembered(key: string, count: () => number): number {
    let total = this.#totals.get(key)
    if (total === undefined) {
      total = count()
      if (this.#totals.size >= MAX_REMEMBERED_TOTALS) this.#totals.clear()
      this.#totals.set(key, total)
    }
    return total
  }

  #forgetTotalsIfChanged(): void {
    const version = this.#dataVersion.current()
    const changes = this.#totalChanges.get()!
    if (version !== this.#totalsVersion || changes !== this.#totalsChanges) {
      this.#totalsVersion = version
      this.#totalsChanges = changes
      this.#totals.clear()
    }
  }

  #searchCount(dates: boolean): Count {
    const key = String(dates)
    let query = this.#counts.get(key)
    if (query === undefined) {
      let builder = queryBuilder
        .selectFrom('beneficiary_search')
        .select(sql<number>`count(*)`.as('n'))
        .where('beneficiary_search', 'match', slot('match'))
      if (dates) {
        builder = builder
          .innerJoin('beneficiaries', 'beneficiaries.id', 'beneficiary_search.rowid')
          .where(unindexed('created_at'), '>=', slot('from'))
          .where(unindexed('created_at'), '<', slot('before'))
      }
      query = new SqliteQuery(this.#db, builder)
      this.#counts.set(key, query)
    }
    return query
  }

  #itemsQuery(shape: Shape): Items {
    const key = JSON.stringify(shape)
    let query = this.#items.get(key)
    if (query === undefined) {
      query = new SqliteQuery<BeneficiarySummary>(this.#db, buildItemsQuery(shape))
      // A page size is part of the key: the statements kept stay few whatever the requests.
      if (this.#items.size >= MAX_ITEMS_QUERIES) this.#items.clear()
      this.#items.set(key, query)
    }
    return query
  }
}

/**
 * Whether a term can be the prefix of an indexed word: words are `searchTerms()` output, only
 * letters and digits, lower case. Any other term matches nothing, as in the memory adapter, and
 * never reaches FTS5 (which would stop at a NUL and fold ASCII capitals).
 */
function isSearchable(term: string): boolean {
  return SEARCHABLE.test(term) && !ASCII_CAPITALS.test(term)
}

const SEARCHABLE = /^[\p{L}\p{N}]+$/u
const ASCII_CAPITALS = /[A-Z]/

/** Whether a bound of a date filter is absent or a UTC midnight, as the core's always are (D17). */
function isDayBound(time: number): boolean {
  return time === NO_LOWER || time === NO_UPPER || time % DAY_MS === 0
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

/**
 * A page in the second half of the matches is the mirror of one in the first half, read in the
 * opposite direction and reversed: ties go by id in the sort's direction, so the order reverses
 * exactly, and no page skips more than half of the matches.
 */
function fromNearerEnd(query: ListQuery, total: number): { page: ListQuery; reversed: boolean } {
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

type ItemsBuilder = SelectQueryBuilder<SqliteSchema, 'beneficiaries', BeneficiarySummary>

/** Rows of `SUMMARY_COLUMNS` values, in that order, as summaries. */
function summariesOf(rows: readonly unknown[][]): BeneficiarySummary[] {
  return rows.map(
    ([id, first_name, last_name, email, phone, status, created_at, updated_at]) =>
      ({
        id,
        first_name,
        last_name,
        email,
        phone,
        status,
        created_at,
        updated_at,
      }) as BeneficiarySummary,
  )
}

function buildItemsQuery(shape: Shape): ItemsBuilder {
  const direction = shape.descending ? 'desc' : 'asc'
  if (shape.search && shape.sort === 'id' && !shape.status && !shape.dates) {
    // The FTS index yields its matches in rowid order: page there, then read only those rows.
    const page = queryBuilder
      .selectFrom('beneficiary_search')
      .select('rowid')
      .where('beneficiary_search', 'match', slot('match'))
      .orderBy('rowid', direction)
      .limit(sql.lit(shape.limit))
    return queryBuilder
      .selectFrom('beneficiaries')
      .select(SUMMARY_COLUMNS)
      .where('id', 'in', shape.fromStart ? page : page.offset(slot('offset')))
      .orderBy('id', direction) as ItemsBuilder
  }

  let query = queryBuilder.selectFrom('beneficiaries').select(SUMMARY_COLUMNS) as ItemsBuilder
  if (shape.search) {
    query = query.where('beneficiaries.id', 'in', (eb) =>
      eb
        .selectFrom('beneficiary_search')
        .select('rowid')
        .where('beneficiary_search', 'match', slot('match')),
    )
  }

  const indexed = (column: string, usable: boolean): RawBuilder<number> =>
    usable ? sql<number>`${sql.ref(`beneficiaries.${column}`)}` : unindexed<number>(column)
  const filterPlan = shape.plan === 'filter' && !shape.search
  if (shape.status) {
    const usable = filterPlan || (shape.sort === 'id' && !shape.dates && !shape.search)
    query = query.where(indexed('status', usable), '=', slot('status'))
  }
  if (shape.dates) {
    const usable = !shape.search && (filterPlan || shape.sort === 'created_at')
    query = query
      .where(indexed('created_at', usable), '>=', slot('from'))
      .where(indexed('created_at', usable), '<', slot('before'))
  }
  if (shape.sort === 'id' && shape.dates && shape.plan === 'order' && !shape.search) {
    query = query
      .where('beneficiaries.id', '>=', slot('lo'))
      .where('beneficiaries.id', '<=', slot('hi'))
  }
  if (shape.seek === 'id') {
    query = query.where('beneficiaries.id', shape.descending ? '<' : '>=', slot('seek'))
  }
  if (shape.seek === 'key') {
    query = query.where(
      sql.ref(`beneficiaries.${ORDER_COLUMNS[shape.sort][0]}`),
      '>=',
      slot('seek'),
    )
  }

  // A filter plan or a search sorts the rows it collected; a `+` keeps SQLite from walking the
  // sort's index instead.
  const [first, ...rest] = ORDER_COLUMNS[shape.sort]
  const sortsCollected = filterPlan || shape.search
  if (first !== undefined) {
    query = query.orderBy(
      sortsCollected ? unindexed(first) : sql.ref(`beneficiaries.${first}`),
      direction,
    )
  }
  for (const column of rest) query = query.orderBy(sql.ref(`beneficiaries.${column}`), direction)
  return query.limit(sql.lit(shape.limit)).offset(slot('offset'))
}
