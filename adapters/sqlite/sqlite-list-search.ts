import type BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import type { BeneficiarySummary } from '../../core/beneficiary.js'
import type { ListQuery, Page } from '../../core/ports/beneficiary-store.js'
import type { SqliteListItems } from './sqlite-list-items.js'
import { fromNearerEnd, type Shape } from './sqlite-list-plan.js'
import { NO_LOWER, NO_UPPER } from './sqlite-list-range.js'
import type { SqliteListTotals } from './sqlite-list-totals.js'
import { selectPage } from './sqlite-page-selection.js'
import { queryBuilder, slot, SqliteQuery } from './sqlite-query.js'
import type { SqliteRowKeys } from './sqlite-row-keys.js'
import { unindexed } from './sqlite-unindexed.js'

type Count = SqliteQuery<{ n: number }>

/**
 * Match ids kept at most, across searches, between two changes of the database (16 MB): a
 * search's next page, or its next sort, needs not ask FTS5 for them again.
 */
const MAX_KEPT_MATCH_IDS = 4_000_000

/**
 * The listing with a search (D16): the matches come from the FTS5 index, which also counts
 * them, and filters by status inside the index. Sorted by id, a page is read in the index's
 * order; sorted otherwise or filtered by dates, the matches' ids are sorted and filtered on the
 * connection's copy of the records' keys (`SqliteRowKeys`).
 */
export class SqliteListSearch {
  readonly #db: BetterSqlite3.Database
  readonly #totals: SqliteListTotals
  readonly #items: SqliteListItems
  readonly #keys: SqliteRowKeys
  readonly #counts = new Map<string, Count>()
  readonly #matchIds: BetterSqlite3.Statement<[string], string | null>
  /** Match ids by search and date range, from the totals' `epoch` (`#keptEpoch`). */
  readonly #kept = new Map<string, Int32Array>()
  #keptIds = 0
  #keptEpoch = -1

  constructor(
    db: BetterSqlite3.Database,
    totals: SqliteListTotals,
    items: SqliteListItems,
    keys: SqliteRowKeys,
  ) {
    this.#db = db
    this.#totals = totals
    this.#items = items
    this.#keys = keys
    // One string of every match's id: 75 ns a match, where reading them as rows took 140.
    this.#matchIds = db
      .prepare<[string], string | null>(
        'SELECT group_concat(rowid) FROM beneficiary_search WHERE beneficiary_search MATCH ?',
      )
      .pluck()
  }

  /** One page of the records matching `query` and every term, and the exact number of them. */
  page(query: ListQuery, terms: readonly string[]): Page<BeneficiarySummary> {
    if (terms.length === 0 || !terms.every(isSearchable)) return { items: [], total: 0 }
    const dates = query.createdFrom !== undefined || query.createdBefore !== undefined
    const values: Record<string, unknown> = {
      match: matchExpression(terms, query.status),
      from: query.createdFrom ?? NO_LOWER,
      before: query.createdBefore ?? NO_UPPER,
    }
    if ((query.sort !== 'id' || dates) && this.#keys.refresh()) {
      return this.#sortedPage(query, values, dates)
    }
    const total = this.#total(dates, values)
    if (total === 0 || query.offset >= total) return { items: [], total }
    const { page, reversed } = fromNearerEnd(query, total)
    values.limit = page.limit
    values.offset = page.offset
    // Sorted by id, the page is read from the index in rowid order, from the nearest match whose
    // place is known, and teaches where its own first and last matches stand.
    const inRowidOrder = page.sort === 'id' && !dates
    const places = inRowidOrder && page.offset > 0 ? this.#places(values) : undefined
    // Where the page's first row stands among the matches in ascending order.
    const first = page.descending ? total - 1 - page.offset : page.offset
    const from = places?.nearest(first, page.descending)
    if (from !== undefined) {
      values.seek = from.rowid
      values.offset = Math.abs(first - from.place)
    }
    // The status is part of the FTS5 query: the index itself filters by it.
    const shape: Shape = {
      limit: page.limit,
      sort: page.sort,
      descending: page.descending,
      status: false,
      dates,
      search: true,
      fromStart: values.offset === 0,
      plan: 'filter',
      seek: from === undefined ? 'none' : 'id',
    }
    const items = this.#items.page(shape, values)
    if (places !== undefined && items.length > 0) {
      const step = page.descending ? -1 : 1
      places.learn(first, items[0]!.id)
      places.learn(first + step * (items.length - 1), items.at(-1)!.id)
    }
    return { items: reversed ? items.reverse() : items, total }
  }

  /**
   * A page sorted on the copy of the records' keys: every match's id from FTS5, those created
   * in the date range kept, then only the page's places sorted (`selectPage`).
   */
  #sortedPage(
    query: ListQuery,
    values: Record<string, unknown>,
    dates: boolean,
  ): Page<BeneficiarySummary> {
    const ids = this.#matchesOf(
      String(values.match),
      Number(values.from),
      Number(values.before),
      dates,
    )
    const total = ids.length
    if (total === 0 || query.offset >= total) return { items: [], total }
    // Descending is ascending read backwards: ties go by id in the sort's direction.
    const start = query.descending ? Math.max(0, total - query.offset - query.limit) : query.offset
    const end = query.descending ? total - query.offset : query.offset + query.limit
    const page = selectPage(this.#keys.sortKeys(ids, query.sort), ids, start, end)
    return { items: this.#items.byIds(query.descending ? page.reverse() : page), total }
  }

  /**
   * The ids of the matches of `match` created in [from, before) when `dates`, in no particular
   * order (`selectPage` reorders them), kept until the database changes.
   */
  #matchesOf(match: string, from: number, before: number, dates: boolean): Int32Array {
    if (this.#keptEpoch !== this.#totals.epoch) {
      this.#keptEpoch = this.#totals.epoch
      this.#kept.clear()
      this.#keptIds = 0
    }
    const key = dates ? `${match}\u0000${from}\u0000${before}` : match
    let ids = this.#kept.get(key)
    if (ids === undefined) {
      ids = parseIds(this.#matchIds.get(match) ?? '')
      if (dates) ids = ids.subarray(0, this.#keys.keepCreatedIn(ids, from, before))
      if (this.#keptIds + ids.length > MAX_KEPT_MATCH_IDS) {
        this.#kept.clear()
        this.#keptIds = 0
      }
      this.#kept.set(key, ids)
      this.#keptIds += ids.length
    }
    return ids
  }

  /** The known places of the matches of `values.match`, remembered as long as the totals. */
  #places(values: Record<string, unknown>): MatchPlaces {
    return this.#totals.remembered(`p\u0000${String(values['match'])}`, () => new MatchPlaces())
  }

  #total(dates: boolean, values: Record<string, unknown>): number {
    const key = `s\u0000${dates}\u0000${String(values['match'])}\u0000${String(values['from'])}\u0000${String(values['before'])}`
    return this.#totals.remembered(key, () => this.#count(dates).get(values)?.n ?? 0)
  }

  #count(dates: boolean): Count {
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
}

/** A match and its place (from 0) among a search's matches in ascending rowid order. */
interface Place {
  readonly place: number
  readonly rowid: number
}

/**
 * Places known at most per search, past which pages learn no more: 4 KB a search, and a place
 * about every 1,100 matches of the 281,000 of `m` (35 µs to pass) once all are learnt.
 */
const MAX_PLACES = 256

/**
 * Where some matches of one search stand among all of them, in rowid order, as pages read them:
 * the next page of a search, or any page near one already read, skips from there instead of
 * from the first match (FTS5 passes about 30 ns a match: 3.7 ms to the middle of the 281,000
 * matches of `m`; 33 µs from a place 300 matches before the page).
 */
class MatchPlaces {
  readonly #places: number[] = []
  readonly #rowids: number[] = []

  /** The known place nearest to `place` at or before it, or at or after it when `after`. */
  nearest(place: number, after: boolean): Place | undefined {
    const index = this.#lowerBound(place)
    if (after) {
      return index < this.#places.length
        ? { place: this.#places[index]!, rowid: this.#rowids[index]! }
        : undefined
    }
    const at = this.#places[index] === place ? index : index - 1
    return at >= 0 ? { place: this.#places[at]!, rowid: this.#rowids[at]! } : undefined
  }

  learn(place: number, rowid: number): void {
    const index = this.#lowerBound(place)
    if (this.#places[index] === place || this.#places.length >= MAX_PLACES) return
    this.#places.splice(index, 0, place)
    this.#rowids.splice(index, 0, rowid)
  }

  #lowerBound(place: number): number {
    let low = 0
    let high = this.#places.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (this.#places[middle]! < place) low = middle + 1
      else high = middle
    }
    return low
  }
}

/** The ids of `group_concat(rowid)`: decimal numbers joined by commas. */
function parseIds(text: string): Int32Array {
  if (text.length === 0) return new Int32Array(0)
  let count = 1
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === COMMA) count++
  const ids = new Int32Array(count)
  let id = 0
  let at = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === COMMA) {
      ids[at++] = id
      id = 0
    } else {
      id = id * 10 + code - ZERO
    }
  }
  ids[at] = id
  return ids
}

const COMMA = 44
const ZERO = 48

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
 * Whether a term can be the prefix of an indexed word: words are `searchTerms()` output, only
 * letters and digits, lower case. Any other term matches nothing, as in the memory adapter, and
 * never reaches FTS5 (which would stop at a NUL and fold ASCII capitals).
 */
function isSearchable(term: string): boolean {
  return SEARCHABLE.test(term) && !ASCII_CAPITALS.test(term)
}

const SEARCHABLE = /^[\p{L}\p{N}]+$/u
const ASCII_CAPITALS = /[A-Z]/
