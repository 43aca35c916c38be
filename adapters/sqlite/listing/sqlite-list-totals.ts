import type BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import { DAY_MS } from '../../../core/time.js'
import type { CountedKeys } from './sqlite-counted-keys.js'
import type { SqliteCounterMirror } from './sqlite-counter-mirror.js'
import type { SqliteDataVersion } from '../sqlite-data-version.js'
import { NO_LOWER, NO_UPPER, unindexed } from './sqlite-list-plan.js'
import { queryBuilder, slot, SqliteQuery } from '../sqlite-query.js'

/**
 * Totals (and searches' known places, `SqliteListSearch`) remembered at most between two changes
 * of the database: a thousand searches with their places, 4 MB at most.
 */
const MAX_REMEMBERED_TOTALS = 2_000

type Count = SqliteQuery<{ n: number }>
type IdBounds = { lo: number | null; hi: number | null }

/**
 * The exact totals of the listing without a search, from the connection's copy of the counters
 * (`SqliteCounterMirror`): the blocks of a status, or the days of a date range plus an index count
 * for partial days. A search's total is remembered until the database changes (`remembered`).
 */
export class SqliteListTotals {
  readonly #mirror: SqliteCounterMirror
  readonly #edgeCount: Count
  readonly #edgeCountByStatus: Count
  readonly #dataVersion: SqliteDataVersion
  readonly #totalChanges: BetterSqlite3.Statement<[], number>
  readonly #totals = new Map<string, unknown>()
  #totalsVersion = -1
  #totalsChanges = -1
  #epoch = 0

  constructor(
    db: BetterSqlite3.Database,
    dataVersion: SqliteDataVersion,
    mirror: SqliteCounterMirror,
  ) {
    this.#dataVersion = dataVersion
    this.#mirror = mirror
    this.#totalChanges = db.prepare<[], number>('SELECT total_changes()').pluck()
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
    const dayFrom = from === NO_LOWER ? NO_LOWER : Math.ceil(from / DAY_MS)
    const dayBefore = before === NO_UPPER ? NO_UPPER : Math.floor(before / DAY_MS)
    const edge = status === undefined ? this.#edgeCount : this.#edgeCountByStatus
    if (dayFrom >= dayBefore) return edge.get({ from, before, status })?.n ?? 0
    if (from === NO_LOWER && before === NO_UPPER) {
      const blocks = this.#mirror.blocks(status)
      return blocks.sum(0, blocks.size)
    }
    const days = this.#mirror.days(status)
    let total = days.sum(days.lowerBound(dayFrom), days.lowerBound(dayBefore))
    if (from !== NO_LOWER && from < dayFrom * DAY_MS) {
      total += edge.get({ from, before: dayFrom * DAY_MS, status })?.n ?? 0
    }
    if (before !== NO_UPPER && dayBefore * DAY_MS < before) {
      total += edge.get({ from: dayBefore * DAY_MS, before, status })?.n ?? 0
    }
    return total
  }

  /** The bounds of the ids of the records with `status` on the days that [from, before) touches. */
  idBounds(status: string | undefined, from: number, before: number): IdBounds {
    const days = this.#mirror.days(status)
    const [first, end] = dayIndexes(days, from, before)
    let lo = Infinity
    let hi = -Infinity
    // Days with no record left keep stale bounds; skipping them keeps the bounds tight.
    for (let i = first; i < end; i++) {
      if (days.count(i) <= 0) continue
      lo = Math.min(lo, days.minId(i))
      hi = Math.max(hi, days.maxId(i))
    }
    return lo <= hi ? { lo, hi } : { lo: null, hi: null }
  }

  /**
   * A total (or what else a search learnt, `SqliteListSearch`), remembered until the database
   * changes: counting a common search prefix visits every match (65,000 for `ros` at a million
   * records, 3 ms), and the same lists come back page after page. `forgetIfChanged` forgets every remembered total as soon as anything was written: by
   * this connection (`total_changes()`, at once) or by another process (`data_version`, from the
   * next turn of the event loop, see `SqliteDataVersion`).
   */
  remembered<T>(key: string, count: () => T): T {
    let total = this.#totals.get(key) as T | undefined
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
      this.#epoch++
    }
  }

  /** Changes whenever the remembered totals are forgotten: what else is kept with them goes too. */
  get epoch(): number {
    return this.#epoch
  }
}

/** The indexes [first, end) of the days in `days` that [from, before) touches. */
export function dayIndexes(
  days: CountedKeys<number>,
  from: number,
  before: number,
): [number, number] {
  const dayFrom = from === NO_LOWER ? NO_LOWER : Math.floor(from / DAY_MS)
  const dayBefore = before === NO_UPPER ? NO_UPPER : Math.floor((before - 1) / DAY_MS) + 1
  return [days.lowerBound(dayFrom), days.lowerBound(dayBefore)]
}

/**
 * Whether the id bounds of the days at indexes [first, end) of `days` follow one another without
 * overlapping (records get ids in creation order, as they usually do), days without records
 * left aside.
 */
export function idsFollowDays(days: CountedKeys<number>, first: number, end: number): boolean {
  let previousMaxId = -Infinity
  for (let i = first; i < end; i++) {
    if (days.count(i) <= 0) continue
    if (previousMaxId >= days.minId(i)) return false
    previousMaxId = days.maxId(i)
  }
  return true
}
