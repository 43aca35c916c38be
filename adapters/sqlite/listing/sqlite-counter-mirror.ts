import type BetterSqlite3 from 'better-sqlite3'
import { byCodePoint, byNumber, CountedKeys } from './sqlite-counted-keys.js'
import { type CounterChange, parseCounterChanges } from '../writes/sqlite-counters.js'

/** A bucket of a name order: sort key, raw name, block of ids (`id >> 15`). */
export type NameBucket = readonly [sortKey: string, rawName: string, block: number]

const byNameBucket = (a: NameBucket, b: NameBucket): number =>
  byCodePoint(a[0], b[0]) || byCodePoint(a[1], b[1]) || a[2] - b[2]

/** One counter table: its counts per status, and of every status together. */
export class StatusCounts<K> {
  readonly #compare: (a: K, b: K) => number
  readonly #all: CountedKeys<K>
  readonly #byStatus = new Map<string, CountedKeys<K>>()

  constructor(compare: (a: K, b: K) => number) {
    this.#compare = compare
    this.#all = new CountedKeys(compare)
  }

  /** The counts of `status`, or of every status when undefined. */
  of(status: string | undefined): CountedKeys<K> {
    if (status === undefined) return this.#all
    let keys = this.#byStatus.get(status)
    if (keys === undefined) {
      keys = new CountedKeys(this.#compare)
      this.#byStatus.set(status, keys)
    }
    return keys
  }

  add(status: string, key: K, n: number, minId?: number, maxId?: number): void {
    this.of(status).add(key, n, minId, maxId)
    this.#all.add(key, n, minId, maxId)
  }
}

/**
 * This connection's copy of the list counters (`SqliteCounters`): the running sums that find
 * where a deep page starts and what a date range totals, in microseconds, where SQLite summed a
 * few thousand counter rows per request (0.8 ms). It follows the file through the counter log,
 * to which every write of the counters, by any connection or process, appends its changes in
 * the same transaction: before a listing reads it, the copy applies the generations it has not
 * seen, read in the listing's snapshot, and only loads the counters anew when the log no longer
 * holds them all (a copy more than `LOG_KEPT` generations behind, or after a bulk seed).
 */
export class SqliteCounterMirror {
  readonly #log: CounterLog
  readonly #loads: Readonly<Record<'day' | 'block' | 'updated' | 'name', BetterSqlite3.Statement>>
  #days = new StatusCounts<number>(byNumber)
  #blocks = new StatusCounts<number>(byNumber)
  #updated = new StatusCounts<number>(byNumber)
  #first = new StatusCounts<NameBucket>(byNameBucket)
  #last = new StatusCounts<NameBucket>(byNameBucket)
  /** The generation the copy holds; -1 before the first load. */
  #held = -1

  constructor(db: BetterSqlite3.Database) {
    this.#log = new CounterLog(db)
    const load = (sql: string) => db.prepare(sql).raw()
    this.#loads = {
      day: load(
        'SELECT status, day, n, min_id, max_id FROM beneficiary_day_counts WHERE n > 0 ORDER BY day',
      ),
      block: load(
        'SELECT status, block, n FROM beneficiary_block_counts WHERE n > 0 ORDER BY block',
      ),
      updated: load(
        'SELECT status, day, n FROM beneficiary_updated_counts WHERE n > 0 ORDER BY day',
      ),
      name: load(
        `SELECT name, status, sort_key, raw_name, block, n FROM beneficiary_name_key_counts
          WHERE n > 0 ORDER BY name, sort_key, raw_name, block`,
      ),
    }
  }

  /**
   * Brings the copy to the counters this connection reads now; called inside the snapshot of
   * the listing that reads the copy.
   */
  refresh(): void {
    const generation = this.#log.latest()
    if (generation === this.#held) return
    if (this.#held >= 0 && generation > this.#held && this.#catchUp(generation)) return
    this.#load(generation)
  }

  /**
   * Applies the log's generations after the one held, up to `generation`; false, and the copy is
   * to be loaded anew, when the log no longer holds them all or holds one too large to log. A
   * generation applied before that is harmless: the load replaces everything.
   */
  #catchUp(generation: number): boolean {
    const entries = this.#log.since(this.#held, generation)
    if (entries === undefined) return false
    for (const text of entries) {
      const changes = parseCounterChanges(text)
      if (changes === undefined) return false
      for (const change of changes) this.#apply(change)
    }
    this.#held = generation
    return true
  }

  /** Records per creation day (UTC, `created_at / DAY_MS`), with the ids' bounds. */
  days(status: string | undefined): CountedKeys<number> {
    return this.#days.of(status)
  }

  /** Records per block of 1024 ids. */
  blocks(status: string | undefined): CountedKeys<number> {
    return this.#blocks.of(status)
  }

  /** Records per update day. */
  updated(status: string | undefined): CountedKeys<number> {
    return this.#updated.of(status)
  }

  /** Records per bucket of the order of a name sort. */
  names(name: 'first' | 'last', status: string | undefined): CountedKeys<NameBucket> {
    return (name === 'first' ? this.#first : this.#last).of(status)
  }

  #apply({ kind, key, n, minId, maxId }: CounterChange): void {
    const status = String(key.status)
    switch (kind) {
      case 'day':
        this.#days.add(status, Number(key.day), n, minId, maxId)
        break
      case 'block':
        this.#blocks.add(status, Number(key.block), n)
        break
      case 'updated':
        this.#updated.add(status, Number(key.day), n)
        break
      case 'first':
      case 'last':
        ;(kind === 'first' ? this.#first : this.#last).add(
          status,
          [String(key.sort_key), String(key.raw_name), Number(key.block)],
          n,
        )
        break
    }
  }

  #load(generation: number): void {
    this.#days = new StatusCounts(byNumber)
    this.#blocks = new StatusCounts(byNumber)
    this.#updated = new StatusCounts(byNumber)
    this.#first = new StatusCounts(byNameBucket)
    this.#last = new StatusCounts(byNameBucket)
    for (const [status, day, n, minId, maxId] of this.#loads.day.all() as number[][]) {
      this.#days.add(String(status), day!, n!, minId, maxId)
    }
    for (const [status, block, n] of this.#loads.block.all() as number[][]) {
      this.#blocks.add(String(status), block!, n!)
    }
    for (const [status, day, n] of this.#loads.updated.all() as number[][]) {
      this.#updated.add(String(status), day!, n!)
    }
    for (const row of this.#loads.name.all() as [
      string,
      string,
      string,
      string,
      number,
      number,
    ][]) {
      const [name, status, sortKey, rawName, block, n] = row
      ;(name === 'first' ? this.#first : this.#last).add(status, [sortKey, rawName, block], n)
    }
    this.#held = generation
  }
}

/**
 * Reads the counter log for the copy: the last generation, and the entries after the one the
 * copy holds. The entries are read one generation at a time, by primary key, not as one range
 * (`generation > ?`): `ANALYZE` may record the log while nearly empty, after which SQLite plans
 * the range as a scan of the whole log and a sort (48 µs for 1,659 rows, against about 3 µs a
 * generation by key).
 */
class CounterLog {
  readonly #latest: BetterSqlite3.Statement<[], number | null>
  readonly #entry: BetterSqlite3.Statement<[number], string>

  constructor(db: BetterSqlite3.Database) {
    this.#latest = db
      .prepare<[], number | null>('SELECT max(generation) FROM beneficiary_counter_log')
      .pluck()
    this.#entry = db
      .prepare<[number], string>('SELECT changes FROM beneficiary_counter_log WHERE generation = ?')
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
