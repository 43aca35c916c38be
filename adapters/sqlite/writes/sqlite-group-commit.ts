import type BetterSqlite3 from 'better-sqlite3'
import { translateStorageFailure } from '../sqlite-query.js'

/** Work merged over a group's writes, done once per group (see `SqliteGroupCommit.finishEach`). */
export interface GroupFinisher {
  /** Runs the merged statements; called after the deferred ones, before COMMIT. */
  finish(): void
  /** Forgets what the group's writes gave it: the group failed. */
  discard(): void
}

interface Job {
  readonly work: () => unknown
  readonly resolve: (value: unknown) => void
  readonly reject: (error: unknown) => void
}

/** Told about every group once it committed (`committed`) or failed as a whole. */
export type GroupCommitListener = (size: number, committed: boolean) => void

type Outcome =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown }

/**
 * Group commit: the writes that arrive in one turn of the event loop share one `BEGIN IMMEDIATE`
 * transaction, and so one fsync under `synchronous=FULL`, instead of one each. Every write runs
 * in a savepoint of its own (better-sqlite3 turns a transaction function called inside a
 * transaction into a savepoint), so a write that fails, such as a fiscal code already taken,
 * rolls back alone. Every promise settles only after COMMIT returned: a write is acknowledged
 * only once it is durable, and none is acknowledged if the commit fails. When the group cannot
 * begin or commit (a lock held past the busy timeout, a full disk, a read-only file), every
 * write of the group fails with the domain's `StorageUnavailableError` and nothing is written.
 *
 * A write can `defer` statements to the end of its group: they run after every write of the group
 * and before COMMIT, and are dropped with the write if it fails. FTS5 writes its pending terms to
 * disk as a new segment at every savepoint, so its inserts are deferred: one segment per group
 * instead of one per write, and far less merging (see `SqliteBeneficiaryStore`). Writes that
 * add to the same rows, such as the list counters, merge them in a `GroupFinisher`, which
 * writes once per group after the deferred statements.
 */
export class SqliteGroupCommit {
  readonly #db: BetterSqlite3.Database
  readonly #begin: BetterSqlite3.Statement
  readonly #commit: BetterSqlite3.Statement
  readonly #rollback: BetterSqlite3.Statement
  readonly #flushLater = (): void => this.flush()
  readonly #finishers: GroupFinisher[] = []
  #queue: Job[] = []
  #listener: GroupCommitListener | undefined
  /** The statements deferred by the writes of the group being written; `undefined` between groups. */
  #deferred: (() => void)[] | undefined

  constructor(db: BetterSqlite3.Database) {
    this.#db = db
    this.#begin = db.prepare('BEGIN IMMEDIATE')
    this.#commit = db.prepare('COMMIT')
    this.#rollback = db.prepare('ROLLBACK')
  }

  /** Runs `work` (synchronous SQLite statements) in the next group; resolves once committed. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // After the I/O of this turn: every request read in it gets into the same group.
      if (this.#queue.length === 0) setImmediate(this.#flushLater)
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject })
    })
  }

  /**
   * Runs `write` after the other writes of the current group, in the order deferred, before the
   * group commits; dropped if the write deferring it fails. If it throws, the whole group fails
   * (inside a transaction the caller opened on the connection, the caller must roll it back).
   *
   * @throws TypeError when called outside a write of a group.
   */
  defer(write: () => void): void {
    if (this.#deferred === undefined) throw new TypeError('defer() is for writes run by a group')
    this.#deferred.push(write)
  }

  /**
   * Has every group run `finisher.finish()` after its deferred statements and before COMMIT (if
   * it throws, the whole group fails), and `finisher.discard()` when the group fails.
   */
  finishEach(finisher: GroupFinisher): void {
    this.#finishers.push(finisher)
  }

  /** Has `listener` told the size of every group, and whether it committed; replaces the last. */
  observe(listener: GroupCommitListener): void {
    this.#listener = listener
  }

  /** Commits the pending group now (a no-op when there is none); `close()` calls it first. */
  flush(): void {
    const jobs = this.#queue
    if (jobs.length === 0) return
    this.#queue = []
    let outcomes: Outcome[]
    try {
      outcomes = this.#inOneTransaction(jobs)
    } catch (error) {
      const failure = translateStorageFailure(error)
      for (const job of jobs) job.reject(failure)
      this.#tell(jobs.length, false)
      return
    }
    jobs.forEach((job, i) => {
      const outcome = outcomes[i]!
      if (outcome.ok) job.resolve(outcome.value)
      else job.reject(translateStorageFailure(outcome.error))
    })
    this.#tell(jobs.length, true)
  }

  #tell(size: number, committed: boolean): void {
    try {
      this.#listener?.(size, committed)
    } catch {
      // An observer's fault is not the writes': they are settled already.
    }
  }

  #inOneTransaction(jobs: readonly Job[]): Outcome[] {
    // A caller that opened a transaction on its own connection keeps it: the writes become
    // savepoints in it, and are durable when the caller commits, as before group commit.
    const own = !this.#db.inTransaction
    if (own) this.#begin.run()
    const deferred: (() => void)[] = []
    this.#deferred = deferred
    try {
      const outcomes = jobs.map((job): Outcome => {
        const mark = deferred.length
        try {
          return { ok: true, value: job.work() }
        } catch (error) {
          deferred.length = mark
          // On a full disk or an I/O error SQLite may roll the whole transaction back: the
          // writes before this one are gone, and the next ones must not commit on their own.
          if (own && !this.#db.inTransaction) throw error
          return { ok: false, error }
        }
      })
      this.#deferred = undefined
      for (const write of deferred) write()
      for (const finisher of this.#finishers) finisher.finish()
      if (own) this.#commit.run()
      return outcomes
    } catch (error) {
      for (const finisher of this.#finishers) finisher.discard()
      if (own && this.#db.inTransaction) this.#rollback.run()
      throw error
    } finally {
      this.#deferred = undefined
    }
  }
}
