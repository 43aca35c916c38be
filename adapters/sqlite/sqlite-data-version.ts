import type BetterSqlite3 from 'better-sqlite3'

/**
 * `PRAGMA data_version` of one connection, read at most once per turn of the event loop. It
 * changes when another connection (the CLI, another server process) has committed; what this
 * connection commits does not change it. Memos that must give way to other processes' writes
 * compare it: one read per request cost 2–3 µs each, 5 % of a get. So another process's commit
 * is seen from the next turn, milliseconds later.
 */
export class SqliteDataVersion {
  readonly #statement: BetterSqlite3.Statement<[], number>
  #version = 0
  #readThisTurn = false
  readonly #nextTurn = (): void => {
    this.#readThisTurn = false
  }

  constructor(db: BetterSqlite3.Database) {
    this.#statement = db.prepare<[], number>('PRAGMA data_version').pluck()
  }

  /** The version as read at the first call of this turn of the event loop. */
  current(): number {
    if (!this.#readThisTurn) {
      this.#readThisTurn = true
      setImmediate(this.#nextTurn)
      this.#version = this.#statement.get()!
    }
    return this.#version
  }

  /**
   * Has the next `current()` read the version again, in this turn too: called when the writer
   * thread (`SqliteWriterThread`), another connection, has committed writes about to be
   * acknowledged, so that the reads that follow see them, not what a memo kept of before.
   */
  invalidate(): void {
    this.#readThisTurn = false
  }
}
