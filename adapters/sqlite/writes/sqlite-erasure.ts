import type BetterSqlite3 from 'better-sqlite3'
import type { CheckpointOutcome } from '../threads/sqlite-checkpoint-schedule.js'

/**
 * Milliseconds from a delete's commit to the first try to empty the WAL, and between tries:
 * the deletes of one burst share a checkpoint, and what they erased leaves the WAL within a
 * few tenths of a second, unless another connection keeps reading an older snapshot.
 */
export const WAL_ERASURE_DELAY_MS = 100

/**
 * Takes what a delete erased out of the WAL too (D27). `secure_delete` zeroes the record's
 * bytes in the pages the delete writes, but the WAL still holds the earlier versions of those
 * pages (the record's create and updates) until it is written over. After a delete commits,
 * `erased()` has the connection that wrote it run `PRAGMA wal_checkpoint(TRUNCATE)`: every page
 * goes into the database file and the WAL is cut to zero bytes. The checkpoint never waits
 * (`busy_timeout` 0 for its duration, so the event loop of an inline writer is not held): while
 * another connection reads or checkpoints, it is tried again `WAL_ERASURE_DELAY_MS` later,
 * until it succeeds or the connection closes (whose last close removes the WAL anyway).
 */
export class SqliteErasure {
  readonly #db: BetterSqlite3.Database
  #timer: NodeJS.Timeout | undefined

  constructor(db: BetterSqlite3.Database) {
    this.#db = db
  }

  /** Called once a delete has committed: the WAL is emptied soon. */
  erased(): void {
    if (this.#db.memory || this.#timer !== undefined) return
    this.#timer = setTimeout(() => this.#truncate(), WAL_ERASURE_DELAY_MS).unref()
  }

  #truncate(): void {
    this.#timer = undefined
    const db = this.#db
    if (!db.open) return
    let done = false
    const busyTimeout = Number(db.pragma('busy_timeout', { simple: true }))
    try {
      db.pragma('busy_timeout = 0')
      const outcome = (db.pragma('wal_checkpoint(TRUNCATE)') as CheckpointOutcome[])[0]
      done = outcome !== undefined && outcome.busy === 0 && outcome.log === 0
    } catch {
      // A lock held elsewhere, a full disk: tried again below.
    } finally {
      db.pragma(`busy_timeout = ${busyTimeout}`)
    }
    if (!done) this.#timer = setTimeout(() => this.#truncate(), WAL_ERASURE_DELAY_MS).unref()
  }
}
