import type BetterSqlite3 from 'better-sqlite3'
import { dropStat4Samples } from '../sqlite-pragmas.js'

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
 * `grew(n)` counts created records; each time their number doubles since the last refresh, it
 * runs `ANALYZE` on the writing connection, inside the write's own transaction, then drops the
 * STAT4 samples as the storage always does (`dropStat4Samples`). A database of N records is so
 * analysed about log₂(N) times in all, each time in a fraction of a second (0.8 s in all for the
 * 300,000-record import above).
 */
export class SqliteStatistics {
  readonly #db: BetterSqlite3.Database
  /** Records counted at the last refresh, or in the table when the connection opened. */
  #base: number
  #grown = 0

  constructor(db: BetterSqlite3.Database) {
    this.#db = db
    const highest = db.prepare('SELECT max(id) FROM beneficiaries').pluck().get() as number | null
    this.#base = highest ?? 0
  }

  /** Counts `n` created records; refreshes the statistics when they have doubled. */
  grew(n: number): void {
    this.#grown += n
    if (this.#grown < Math.max(FIRST_REFRESH_AT, this.#base)) return
    this.#base += this.#grown
    this.#grown = 0
    this.#db.exec('ANALYZE')
    dropStat4Samples(this.#db)
  }
}
