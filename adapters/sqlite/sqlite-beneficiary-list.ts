import type BetterSqlite3 from 'better-sqlite3'
import type { BeneficiarySummary } from '../../core/beneficiary.js'
import type { ListQuery, Page } from '../../core/ports/beneficiary-store.js'
import { SqliteCounterMirror } from './sqlite-counter-mirror.js'
import type { SqliteDataVersion } from './sqlite-data-version.js'
import { SqliteListItems } from './sqlite-list-items.js'
import { SqliteListNameRange } from './sqlite-list-name-range.js'
import { choosePlan, fromNearerEnd, type Seek, type Shape } from './sqlite-list-plan.js'
import { NO_LOWER, NO_UPPER } from './sqlite-list-range.js'
import { SqliteListSearch } from './sqlite-list-search.js'
import { DEEP_OFFSET, SqliteListSeek } from './sqlite-list-seek.js'
import { SqliteListTotals } from './sqlite-list-totals.js'
import { SqliteRowKeys, type IdRange } from './sqlite-row-keys.js'

/**
 * Ids between a date range's bounds up to which its pages sorted by anything but id come from
 * the copy of the records' keys: about 0.2 ms to filter and sort them, where SQL took 0.3–3 ms.
 */
const COPY_SPAN = 65_536
/**
 * Writes of this storage after which the copies catch up between requests, in a snapshot of
 * their own, if no listing has since. A listing catches them up first, reading the rows written
 * since: a burst of writes with no list between them made the next list wait for every one (100
 * ms after 2,000 updates at a million records, 230 ms after 13,000), and past the generations the
 * logs keep (`LOG_KEPT`), for the copies to load anew (about 2 s). Every 256 writes, a catch-up
 * reads at most that many rows: a few milliseconds between two turns of the event loop.
 */
const KEEP_UP_EVERY = 256

/**
 * The listing of `SqliteBeneficiaryStore`: filters, sorts (D15), search (D16) and exact totals,
 * each query shape compiled once by Kysely and kept as a prepared statement.
 *
 * Totals without a search come from the connection's copy of the counters
 * (`SqliteCounterMirror`, plus an index count for partial days). Every page, with a search or
 * not, is answered from the connection's copy of the records (`SqliteRowKeys`;
 * `SqliteListSearch`) where it can be; the rest (a name order over many names, creation order
 * once records were not created in id order) walk the list indexes for their ids, and every
 * page's rows come from that copy. A page in the second half is read from the other end. A
 * deep page starts where the counters say it begins (the block of ids, the day, the bucket of a
 * name order), so OFFSET skips at most one bucket instead of up to a million rows. Where no copy
 * is kept (ids far sparser than records), SQL and FTS5 answer everything; a name sort within a
 * date range over many ids that the copy cannot walk name by name is counted name by name in SQL
 * (`SqliteListNameRange`).
 */
export class SqliteBeneficiaryList {
  readonly #totals: SqliteListTotals
  readonly #seek: SqliteListSeek
  readonly #items: SqliteListItems
  readonly #search: SqliteListSearch
  readonly #mirror: SqliteCounterMirror
  readonly #nameRange: SqliteListNameRange
  readonly #keys: SqliteRowKeys
  readonly #snapshot: BetterSqlite3.Transaction<(query: ListQuery) => Page<BeneficiarySummary>>
  readonly #warmUp: BetterSqlite3.Transaction<() => void>
  readonly #assertOpen: () => void
  /** Whether the copies were loaded (by `warmUp` or a listing): only then are they kept up. */
  #loaded = false
  /** Writes since the last catch-up `wrote` asked for. */
  #written = 0
  readonly #keepUp = (): void => {
    try {
      this.#assertOpen()
      this.#warmUp()
    } catch {
      // Closed since, or failing: the next listing catches up, and reports what fails.
    }
  }

  /** @param assertOpen Throws once the owning storage is closed. */
  constructor(db: BetterSqlite3.Database, dataVersion: SqliteDataVersion, assertOpen: () => void) {
    this.#assertOpen = assertOpen
    this.#snapshot = db.transaction((query: ListQuery) => this.#listNow(query))
    this.#warmUp = db.transaction(() => {
      this.#mirror.refresh()
      this.#keys.refresh()
    })
    this.#mirror = new SqliteCounterMirror(db)
    this.#totals = new SqliteListTotals(db, dataVersion, this.#mirror)
    this.#seek = new SqliteListSeek(this.#mirror)
    this.#nameRange = new SqliteListNameRange(db, this.#mirror)
    this.#items = new SqliteListItems(db)
    const records = () => this.#totals.total(undefined, NO_LOWER, NO_UPPER)
    this.#keys = new SqliteRowKeys(db, records)
    this.#search = new SqliteListSearch(db, this.#totals, this.#items, this.#keys)
  }

  /** Loads the counters' copy and the records' copy now (`SqliteBeneficiaryStore.warmUp`). */
  warmUp(): void {
    this.#warmUp()
    this.#loaded = true
  }

  /**
   * Tells the listing that this storage wrote (or may have written) a record: every
   * {@link KEEP_UP_EVERY} writes, the copies catch up after the I/O of this turn.
   */
  wrote(): void {
    if (!this.#loaded || ++this.#written < KEEP_UP_EVERY) return
    this.#written = 0
    setImmediate(this.#keepUp)
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
    this.#loaded = true
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
    // From the copy when one is kept; SQL's plans otherwise, and for what the copy leaves to them.
    const copy = this.#keys.refresh()
    const { lo, hi } = this.#totals.idBounds(query.status, from, before)
    if (lo !== null && hi !== null) {
      const range = { lo, hi, status: query.status, from, before }
      const items = copy ? this.#fromCopy(query, range) : undefined
      if (items !== undefined) return { items, total }
      if (dates && (query.sort === 'first_name' || query.sort === 'last_name')) {
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
    // The rows from the copy when one is kept: the index walk then reads no row of the table.
    const items = copy
      ? this.#keys.summaries(this.#items.pageIds(shape, values))
      : this.#items.page(shape, values)
    return { items: reversed ? items.reverse() : items, total }
  }

  /**
   * A list without a search (any status, dates and sort), from the copy of the records' keys,
   * brought up to date. Sorted by id (or creation, in id order), from the records' counts by
   * bucket of ids (`SqliteRowKeys.idPage`); by a name, from each name's ids while names are few
   * against the range's ids (`namePage`); by update, from the order by update kept as writes come
   * (`updatePage`) unless the range is narrow; else, for a date range, the records of its ids
   * (between the bounds its days' counters keep, about 2 ns each) sorted at the page's places
   * (`selectPage`, about 5 ns each): when those ids are few, where SQL's plans cost a millisecond
   * or more for a few thousand matches (a name order counted name by name, a status filter
   * checked along the creation index), and for `updated_at` whenever the update order cannot
   * answer, since its index walk passes rows by the hundred thousand when the range's records
   * were updated together: 56 ms for a page 6,000 rows deep in 128,000. `undefined` for a name
   * or creation order over many ids (SQL's plans then).
   */
  #fromCopy(query: ListQuery, range: IdRange): BeneficiarySummary[] | undefined {
    const dates = range.from !== NO_LOWER || range.before !== NO_UPPER
    const ids =
      this.#keys.idPage(range, query) ??
      (query.sort === 'first_name' || query.sort === 'last_name'
        ? this.#keys.namePage(range, query)
        : undefined) ??
      (query.sort === 'updated_at' ? this.#keys.updatePage(range, query) : undefined) ??
      (dates && (range.hi - range.lo < COPY_SPAN || query.sort === 'updated_at')
        ? this.#keys.rangePage(range, query)
        : undefined)
    return ids === undefined ? undefined : this.#keys.summaries(ids)
  }
}
