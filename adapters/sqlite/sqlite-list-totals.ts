import type BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import { DAY_MS } from '../../core/time.js'
import type { SqliteDataVersion } from './sqlite-data-version.js'
import { NO_LOWER, NO_UPPER } from './sqlite-list-range.js'
import { queryBuilder, slot, SqliteQuery } from './sqlite-query.js'
import { unindexed } from './sqlite-unindexed.js'

/** Totals remembered at most between two changes of the database. */
const MAX_REMEMBERED_TOTALS = 1_000

type Count = SqliteQuery<{ n: number }>
type IdBounds = { lo: number | null; hi: number | null }

/**
 * The exact totals of the listing without a search, from the counters: a sum over
 * `beneficiary_day_counts` (at most a few thousand rows) plus an index count for partial days,
 * or `beneficiary_status_counts` alone without dates. Every total, a search's too, is
 * remembered until the database changes (`remembered`).
 */
export class SqliteListTotals {
  readonly #dayTotal: Count
  readonly #statusTotal: Count
  readonly #statusTotalByStatus: Count
  readonly #dayTotalByStatus: Count
  readonly #idBounds: SqliteQuery<IdBounds>
  readonly #idBoundsByStatus: SqliteQuery<IdBounds>
  readonly #edgeCount: Count
  readonly #edgeCountByStatus: Count
  readonly #dataVersion: SqliteDataVersion
  readonly #totalChanges: BetterSqlite3.Statement<[], number>
  readonly #totals = new Map<string, number>()
  #totalsVersion = -1
  #totalsChanges = -1

  constructor(db: BetterSqlite3.Database, dataVersion: SqliteDataVersion) {
    this.#dataVersion = dataVersion
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

  /** Exact number of records with `status` (any when undefined) created in [from, before). */
  total(status: string | undefined, from: number, before: number): number {
    const key = `t\u0000${status ?? ''}\u0000${from}\u0000${before}`
    return this.remembered(key, () => this.#count(status, from, before))
  }

  /** The bounds of the ids of the records with `status` on the days that [from, before) touches. */
  idBounds(status: string | undefined, from: number, before: number): IdBounds | undefined {
    return (status === undefined ? this.#idBounds : this.#idBoundsByStatus).get({
      dayFrom: Math.floor(from / DAY_MS),
      dayBefore: Math.floor((before - 1) / DAY_MS) + 1,
      status,
    })
  }

  /**
   * A total, remembered until the database changes: counting a common search prefix visits every
   * match (65,000 for `ros` at a million records, 3 ms), a date range sums its days, and the same
   * lists come back page after page. `forgetIfChanged` forgets every remembered total as soon as
   * anything was written: by this connection (`total_changes()`, at once) or by another process
   * (`data_version`, from the next turn of the event loop, see `SqliteDataVersion`).
   */
  remembered(key: string, count: () => number): number {
    let total = this.#totals.get(key)
    if (total === undefined) {
      total = count()
      if (this.#totals.size >= MAX_REMEMBERED_TOTALS) this.#totals.clear()
      this.#totals.set(key, total)
    }
    return total
  }

  /** Called first by every listing, inside its snapshot. */
  forgetIfChanged(): void {
    const version = this.#dataVersion.current()
    const changes = this.#totalChanges.get()!
    if (version !== this.#totalsVersion || changes !== this.#totalsChanges) {
      this.#totalsVersion = version
      this.#totalsChanges = changes
      this.#totals.clear()
    }
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
}
