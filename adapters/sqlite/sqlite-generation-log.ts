import type BetterSqlite3 from 'better-sqlite3'

/** A log of writes by generation that a connection's copy follows, and what each row holds. */
export type GenerationLogTable =
  | { readonly table: 'beneficiary_counter_log'; readonly column: 'changes' }
  | { readonly table: 'beneficiary_write_log'; readonly column: 'ids' }

/**
 * Reads a generation log (`beneficiary_counter_log`, `beneficiary_write_log`) for a copy that
 * follows it: the last generation, and the entries after the one the copy holds.
 *
 * The entries are read one generation at a time, by primary key, not as one range
 * (`generation > ?`): the log holds from none to a few thousand rows, and `ANALYZE` (after a seed,
 * or from `PRAGMA optimize`) may record it while nearly empty, after which SQLite plans the range
 * as a scan of the whole log and a sort. Each catch-up then read every row kept (48 µs for 1,659
 * rows of counter changes, two to three times that with the 4,096 kept), where a lookup by key
 * costs about 3 µs a generation whatever the statistics say.
 */
export class GenerationLog {
  readonly #latest: BetterSqlite3.Statement<[], number | null>
  readonly #entry: BetterSqlite3.Statement<[number], string>

  constructor(db: BetterSqlite3.Database, { table, column }: GenerationLogTable) {
    this.#latest = db.prepare<[], number | null>(`SELECT max(generation) FROM ${table}`).pluck()
    this.#entry = db
      .prepare<[number], string>(`SELECT ${column} FROM ${table} WHERE generation = ?`)
      .pluck()
  }

  /** The last generation logged, 0 when none is. */
  latest(): number {
    return this.#latest.get() ?? 0
  }

  /**
   * The entries of the generations after `held` up to `generation`, in order, or `undefined` when
   * the log no longer holds one of them (pruned: the copy must load anew).
   */
  since(held: number, generation: number): string[] | undefined {
    const entries: string[] = []
    for (let at = held + 1; at <= generation; at++) {
      const entry = this.#entry.get(at)
      if (entry === undefined) return undefined
      entries.push(entry)
    }
    return entries
  }
}
