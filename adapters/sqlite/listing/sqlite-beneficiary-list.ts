import type BetterSqlite3 from 'better-sqlite3'
import type { BeneficiarySummary } from '../../../core/beneficiary.js'
import type { ListQuery, Page } from '../../../core/ports/beneficiary-store.js'
import { SqliteCounterMirror } from './sqlite-counter-mirror.js'
import type { SqliteDataVersion } from '../sqlite-data-version.js'
import { SqliteListItems } from './sqlite-list-items.js'
import { SqliteListNameRange } from './sqlite-list-name-range.js'
import {
  choosePlan,
  fromNearerEnd,
  type Seek,
  type Shape,
  NO_LOWER,
  NO_UPPER,
} from './sqlite-list-plan.js'
import { SqliteListSearch } from './sqlite-list-search.js'
import { DEEP_OFFSET, SqliteListSeek } from './sqlite-list-seek.js'
import { SqliteListTotals } from './sqlite-list-totals.js'

/**
 * The listing of `SqliteBeneficiaryStore`: filters, sorts (D15), search (D16) and exact totals,
 * each query shape compiled once by Kysely and kept as a prepared statement. Everything is read
 * from SQLite's own indexes; nothing is kept per record in memory.
 *
 * Totals without a search come from the counters kept in each write's transaction (their copy
 * in `SqliteCounterMirror`, plus an index count for partial days); a search's from FTS5. A page
 * in the second half of the matches is read from the other end. A deep page starts where the
 * counters say it begins (the block of ids, the day, the bucket of a name order), so OFFSET skips
 * at most one bucket instead of up to a million rows. A name sort within a date range is counted
 * name by name (`SqliteListNameRange`).
 */
export class SqliteBeneficiaryList {
  readonly #totals: SqliteListTotals
  readonly #seek: SqliteListSeek
  readonly #items: SqliteListItems
  readonly #search: SqliteListSearch
  readonly #mirror: SqliteCounterMirror
  readonly #nameRange: SqliteListNameRange
  readonly #snapshot: BetterSqlite3.Transaction<(query: ListQuery) => Page<BeneficiarySummary>>

  constructor(db: BetterSqlite3.Database, dataVersion: SqliteDataVersion) {
    this.#snapshot = db.transaction((query: ListQuery) => this.#listNow(query))
    this.#mirror = new SqliteCounterMirror(db)
    this.#totals = new SqliteListTotals(db, dataVersion, this.#mirror)
    this.#seek = new SqliteListSeek(this.#mirror)
    this.#nameRange = new SqliteListNameRange(db, this.#mirror)
    this.#items = new SqliteListItems(db)
    this.#search = new SqliteListSearch(db, this.#totals, this.#items)
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
    // Both inside the snapshot: the counters' copy and the remembered totals are this snapshot's.
    this.#mirror.refresh()
    this.#totals.forgetIfChanged()
    if (query.search !== undefined) return this.#search.page(query, query.search)
    let from = query.createdFrom ?? NO_LOWER
    let before = query.createdBefore ?? NO_UPPER
    let dates = query.createdFrom !== undefined || query.createdBefore !== undefined
    const total = this.#totals.total(query.status, from, before)
    if (total === 0 || query.offset >= total) return { items: [], total }
    // A date range that holds every record (of the status) filters nothing: listed without it,
    // its deep pages start where the counters say (an index walk checking each row's date, else).
    if (dates && total === this.#totals.total(query.status, NO_LOWER, NO_UPPER)) {
      ;[from, before, dates] = [NO_LOWER, NO_UPPER, false]
    }
    if (dates && (query.sort === 'first_name' || query.sort === 'last_name')) {
      const { lo, hi } = this.#totals.idBounds(query.status, from, before)
      if (lo !== null && hi !== null) {
        return { items: this.#nameRange.page(query, from, before, lo, hi, total), total }
      }
    }
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
    let span = filtered ? this.#totals.total(undefined, NO_LOWER, NO_UPPER) : total
    if (page.sort === 'id' && dates) {
      const bounds = this.#totals.idBounds(page.status, from, before)
      values.lo = bounds?.lo ?? 0
      values.hi = bounds?.hi ?? 0
      span = (bounds?.hi ?? 0) - (bounds?.lo ?? 0) + 1
    }
    const plan = choosePlan(page, filtered, span, total)

    let seek: Seek = 'none'
    if (plan === 'order' && page.offset >= DEEP_OFFSET) {
      ;({ page, reversed, seek } = this.#seek.find(
        { page, reversed },
        from,
        before,
        dates,
        total,
        values,
      ))
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
    const items = this.#items.page(shape, values)
    return { items: reversed ? items.reverse() : items, total }
  }
}
