import type BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import type { BeneficiarySummary } from '../../../core/beneficiary.js'
import type { ListQuery, Page } from '../../../core/ports/beneficiary-store.js'
import type { SqliteListItems } from './sqlite-list-items.js'
import { fromNearerEnd, type Shape, NO_LOWER, NO_UPPER, unindexed } from './sqlite-list-plan.js'
import type { SqliteListTotals } from './sqlite-list-totals.js'
import { queryBuilder, slot, SqliteQuery } from '../sqlite-query.js'

type Count = SqliteQuery<{ n: number }>

/**
 * The listing with a search (D16), from the FTS5 index, which also counts the matches and
 * filters them by status inside the index. Sorted by id, a page is read in rowid order from the
 * nearest match whose place among the matches is known; otherwise the matches are collected and
 * sorted (ids and sort keys only), and the page's rows read afterwards.
 */
export class SqliteListSearch {
  readonly #db: BetterSqlite3.Database
  readonly #totals: SqliteListTotals
  readonly #items: SqliteListItems
  readonly #counts = new Map<string, Count>()

  constructor(db: BetterSqlite3.Database, totals: SqliteListTotals, items: SqliteListItems) {
    this.#db = db
    this.#totals = totals
    this.#items = items
  }

  /** One page of the records matching `query` and every term, and the exact number of them. */
  page(query: ListQuery, searched: readonly string[]): Page<BeneficiarySummary> {
    if (searched.length === 0 || !searched.every(isSearchable)) return { items: [], total: 0 }
    const terms = narrowestTerms(searched)
    const dates = query.createdFrom !== undefined || query.createdBefore !== undefined
    const values: Record<string, unknown> = {
      match: matchExpression(terms, query.status),
      from: query.createdFrom ?? NO_LOWER,
      before: query.createdBefore ?? NO_UPPER,
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

/**
 * The terms of a search that narrow it, distinct, in their order: a term that begins another is
 * held by every record the other matches (the word that starts with the longer starts with the
 * shorter too), so `m ma` is `ma`, one term, whose matches the word index keeps.
 */
export function narrowestTerms(terms: readonly string[]): string[] {
  const distinct = [...new Set(terms)]
  return distinct.filter(
    (term) => !distinct.some((other) => other !== term && other.startsWith(term)),
  )
}
