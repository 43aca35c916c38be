import type BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import type { BeneficiarySummary } from '../../core/beneficiary.js'
import type { ListQuery, Page } from '../../core/ports/beneficiary-store.js'
import type { SqliteListItems } from './sqlite-list-items.js'
import { fromNearerEnd, type Shape } from './sqlite-list-plan.js'
import { NO_LOWER, NO_UPPER } from './sqlite-list-range.js'
import type { SqliteListTotals } from './sqlite-list-totals.js'
import { queryBuilder, slot, SqliteQuery } from './sqlite-query.js'
import { unindexed } from './sqlite-unindexed.js'

type Count = SqliteQuery<{ n: number }>

/**
 * The listing with a search (D16): the matches come from the FTS5 index, which also counts
 * them, and filters by status inside the index.
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
  page(query: ListQuery, terms: readonly string[]): Page<BeneficiarySummary> {
    if (terms.length === 0 || !terms.every(isSearchable)) return { items: [], total: 0 }
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
    const items = this.#items.page(shape, values)
    return { items: reversed ? items.reverse() : items, total }
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
