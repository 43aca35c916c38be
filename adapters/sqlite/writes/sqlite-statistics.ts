import type BetterSqlite3 from 'better-sqlite3'
import { dropStat4Samples } from '../sqlite-pragmas.js'
import type { SqliteGroupCommit } from './sqlite-group-commit.js'

/** Records created before the first refresh: below it, any plan is fast. */
const FIRST_REFRESH_AT = 1_000

/**
 * Keeps the query planner's statistics (`sqlite_stat1`) in step with a table that grows. SQLite
 * gathers them only when told (`ANALYZE`); the storage does it when it opens and closes, but a
 * database that starts empty and fills in one run (an import, a new deployment's first weeks)
 * would keep the statistics of an empty database, and with them plans that slow every write as
 * the tables grow: an import of 300,000 records into an empty file ran at 3,600 records a second
 * at first and 2,000 at the end, and at 5,000 throughout once the statistics followed.
 *
 * `created()` counts a created record (call it from a deferred statement, so that a failed write
 * is not counted); each time their number doubles since the last refresh, the group's finisher
 * runs `ANALYZE` on the writing connection, inside the group's own transaction, then drops the
 * STAT4 samples as the storage always does (`dropStat4Samples`). A database of N records is so
 * analysed about log₂(N) times in all, each time in a fraction of a second (0.8 s in all for the
 * 300,000-record import above).
 */
export class SqliteStatistics {
  readonly #db: BetterSqlite3.Database
  /** Records counted at the last refresh, or in the table when the connection opened. */
  #base: number
  /** Records created since the last refresh, by the groups finished. */
  #grown = 0
  /** Records created by the current group, not yet finished. */
  #pending = 0

  /** Finishes every group of `group` by refreshing the statistics when the records have doubled. */
  constructor(db: BetterSqlite3.Database, group: SqliteGroupCommit) {
    this.#db = db
    const highest = db.prepare('SELECT max(id) FROM beneficiaries').pluck().get() as number | null
    this.#base = highest ?? 0
    group.finishEach({ finish: () => this.#refreshIfDoubled(), discard: () => (this.#pending = 0) })
  }

  /** Counts a record created by the current group. */
  created(): void {
    this.#pending++
  }

  #refreshIfDoubled(): void {
    this.#grown += this.#pending
    this.#pending = 0
    if (this.#grown < Math.max(FIRST_REFRESH_AT, this.#base)) return
    this.#base += this.#grown
    this.#grown = 0
    this.#db.exec('ANALYZE')
    dropStat4Samples(this.#db)
  }
}
