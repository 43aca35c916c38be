import type { BeneficiaryRecord } from '../../../core/beneficiary.js'
import type BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import { DAY_MS } from '../../../core/time.js'
import { queryBuilder, slot, SqliteQuery } from '../sqlite-query.js'

/** Ids per row of `beneficiary_block_counts`, whose key is `id >> 10`. */
export const BLOCK_SIZE = 1024
/** Ids per bucket of `beneficiary_name_key_counts`, whose `block` is `id >> 15`. */
export const NAME_BLOCK_SIZE = 32_768

/** The fields of a record the counters look at. */
export interface Counted {
  readonly id: number
  readonly status: string
  readonly created_at: number
  readonly updated_at: number
  readonly sort_first: string
  readonly sort_last: string
  readonly first_name: string
  readonly last_name: string
}

/** The counter tables, as `SqliteCounterMirror` keeps them. */
export type CounterKind = 'day' | 'block' | 'updated' | 'first' | 'last'

/** What one flush did to one counter row. */
export interface CounterChange {
  readonly kind: CounterKind
  /** The row's key columns: `status` and the table's own (`day`, `block`, `sort_key`...). */
  readonly key: Readonly<Record<string, string | number>>
  /** Records counted in minus records counted out. */
  readonly n: number
  /** The id bounds of the records counted in; `Infinity` and `-Infinity` when none was. */
  readonly minId: number
  readonly maxId: number
}

/** Every this many generations, a flush deletes the log's entries older than {@link LOG_KEPT}. */
const LOG_PRUNE_EVERY = 256
/** Generations of the counter log kept: a copy further behind loads the counters anew. */
export const LOG_KEPT = 4_096
/**
 * Changes a log row holds at most; a flush with more (a bulk seed: 24,000 at a million records)
 * logs `null` instead, and a copy that reads it loads the counters anew.
 */
const MAX_LOGGED_CHANGES = 2_000

/** The key columns of `beneficiary_name_key_counts`, its primary key's order. */
const NAME_KEY_COLUMNS = ['name', 'block', 'status', 'sort_key', 'raw_name'] as const

const NAME_KEYS = [
  ['first', 'sort_first', 'first_name'],
  ['last', 'sort_last', 'last_name'],
] as const

/** The statements of one counter table: an upsert that adds, and an update that subtracts. */
interface CounterTable {
  /** Binds the key's columns, `n` (signed) and, for the day counts, `min_id` and `max_id`. */
  readonly add: SqliteQuery<never>
  /** Binds the key's columns and `n`, the number to take away. */
  readonly subtract: SqliteQuery<never>
}

/** What the writes since the last flush did to one counter row. */
interface Pending extends CounterChange {
  readonly table: CounterTable
  n: number
  minId: number
  maxId: number
}

/**
 * Keeps the counter tables of migration `0002_list_counters` in step with `beneficiaries`:
 * records per status and creation day (with id bounds), per status and block of ids, per
 * status and update day, and per status and name bucket (sort key, raw name, block of ids). The
 * total of a status is its blocks' sum: `beneficiary_status_counts`, which kept it apart, is
 * gone with migration 0005.
 *
 * `add`, `remove` and `replace` only tally; `flush` writes the tally with one statement per
 * counter row it touched, inside the caller's transaction. A group of writes flushes once
 * before it commits: twenty-five creates of one day touch about twenty counter rows, where
 * counting each create on its own ran six statements for it (a tenth of a create's cost).
 * A write that fails must not be tallied (the store tallies from its deferred statements,
 * which are dropped with a failed write); `discard` forgets the tally of a failed group.
 *
 * Every flush also appends what it changed to `beneficiary_counter_log`, under the next
 * generation, in the same transaction: from it, every connection's copy of the counters
 * (`SqliteCounterMirror`) follows every writer's changes, in this process or another.
 */
export class SqliteCounters {
  readonly #day: CounterTable
  readonly #block: CounterTable
  readonly #updated: CounterTable
  readonly #name: CounterTable
  readonly #log: BetterSqlite3.Statement<[string], number>
  readonly #prune: BetterSqlite3.Statement<[number]>
  readonly #deleteEmptyName: SqliteQuery<never>
  #pending = new Map<string, Pending>()
  /** Whether a write since the last flush erased a record (`erase`). */
  #erasing = false

  constructor(db: BetterSqlite3.Database) {
    this.#day = {
      add: new SqliteQuery(
        db,
        queryBuilder
          .insertInto('beneficiary_day_counts')
          .values({
            status: slot('status'),
            day: slot('day'),
            n: slot('n'),
            min_id: slot('min_id'),
            max_id: slot('max_id'),
          })
          .onConflict((oc) =>
            oc.columns(['status', 'day']).doUpdateSet((eb) => ({
              n: sql<number>`${eb.ref('beneficiary_day_counts.n')} + ${eb.ref('excluded.n')}`,
              min_id: sql<number>`min(${eb.ref('beneficiary_day_counts.min_id')}, ${eb.ref('excluded.min_id')})`,
              max_id: sql<number>`max(${eb.ref('beneficiary_day_counts.max_id')}, ${eb.ref('excluded.max_id')})`,
            })),
          ),
      ),
      // The id bounds of a day stay as they are: still bounds, if looser.
      subtract: new SqliteQuery(
        db,
        queryBuilder
          .updateTable('beneficiary_day_counts')
          .set((eb) => ({ n: eb('n', '-', slot('n')) }))
          .where('status', '=', slot('status'))
          .where('day', '=', slot('day')),
      ),
    }
    this.#block = counterTable(db, 'beneficiary_block_counts', ['status', 'block'])
    this.#updated = counterTable(db, 'beneficiary_updated_counts', ['status', 'day'])
    this.#name = counterTable(db, 'beneficiary_name_key_counts', NAME_KEY_COLUMNS)
    this.#log = db
      .prepare<[string], number>(
        'INSERT INTO beneficiary_counter_log (changes) VALUES (?) RETURNING generation',
      )
      .pluck()
    this.#prune = db.prepare<[number]>('DELETE FROM beneficiary_counter_log WHERE generation <= ?')
    this.#deleteEmptyName = new SqliteQuery(
      db,
      NAME_KEY_COLUMNS.reduce(
        (query, column) => query.where(column, '=', slot(column)),
        queryBuilder.deleteFrom('beneficiary_name_key_counts').where('n', '=', 0),
      ),
    )
  }

  /** Counts a record in. */
  add(record: Counted): void {
    this.#count(record, 1)
  }

  /** Counts a record out. */
  remove(record: Counted): void {
    this.#count(record, -1)
  }

  /**
   * Counts a deleted record out and erases its names from the counters, as its history is erased
   * (D27): a name counter left at zero is deleted, and the flush logs a marker instead of the
   * changes and deletes the log's older rows, which may hold the names (every copy of the
   * counters then loads them anew: deletes are rare).
   */
  erase(record: Counted): void {
    this.#count(record, -1)
    this.#erasing = true
  }

  /**
   * Recounts a changed record in the counters whose key changed. Every counter is keyed by the
   * status, so a new status recounts it everywhere; otherwise only the counters of what moved
   * (most updates only move `updated_at` to another day).
   */
  replace(before: Counted, after: Counted): void {
    if (before.status !== after.status) {
      this.remove(before)
      this.add(after)
      return
    }
    const { id, status } = after
    const created = dayOf(after.created_at)
    if (dayOf(before.created_at) !== created) {
      this.#tally(this.#day, 'day', { status, day: dayOf(before.created_at) }, -1, id)
      this.#tally(this.#day, 'day', { status, day: created }, 1, id)
    }
    const updated = dayOf(after.updated_at)
    if (dayOf(before.updated_at) !== updated) {
      this.#tally(this.#updated, 'updated', { status, day: dayOf(before.updated_at) }, -1, id)
      this.#tally(this.#updated, 'updated', { status, day: updated }, 1, id)
    }
    for (const [name, key, raw] of NAME_KEYS) {
      if (before[key] !== after[key] || before[raw] !== after[raw]) {
        this.#tally(this.#name, name, nameKey(name, before, key, raw), -1, id)
        this.#tally(this.#name, name, nameKey(name, after, key, raw), 1, id)
      }
    }
  }

  /**
   * Writes the tally since the last flush, one statement per counter row, and starts a new one
   * (also when a statement fails: the caller's transaction then fails with it).
   */
  flush(): void {
    const pending = this.#pending
    if (pending.size === 0) return
    this.#pending = new Map()
    for (const { kind, table, key, n, minId, maxId } of pending.values()) {
      if (minId <= maxId) table.add.run({ ...key, n, min_id: minId, max_id: maxId })
      else if (n !== 0) table.subtract.run({ ...key, n: -n })
      // A name no record has any more is not kept: the counters hold no name of the erased.
      if (n < 0 && (kind === 'first' || kind === 'last')) this.#deleteEmptyName.run(key)
    }
    const changes = [...pending.values()].map(toLogEntry)
    const erasing = this.#erasing
    this.#erasing = false
    const logged = erasing || changes.length > MAX_LOGGED_CHANGES ? null : changes
    const generation = this.#log.get(JSON.stringify(logged))!
    if (erasing) this.#prune.run(generation - 1)
    else if (generation % LOG_PRUNE_EVERY === 0) this.#prune.run(generation - LOG_KEPT)
  }

  /** Forgets the tally since the last flush: the writes it counted did not happen. */
  discard(): void {
    this.#pending = new Map()
    this.#erasing = false
  }

  #count(record: Counted, sign: 1 | -1): void {
    const { id, status } = record
    this.#tally(this.#day, 'day', { status, day: dayOf(record.created_at) }, sign, id)
    this.#tally(this.#block, 'block', { status, block: Math.floor(id / BLOCK_SIZE) }, sign, id)
    this.#tally(this.#updated, 'updated', { status, day: dayOf(record.updated_at) }, sign, id)
    for (const [name, key, raw] of NAME_KEYS) {
      this.#tally(this.#name, name, nameKey(name, record, key, raw), sign, id)
    }
  }

  #tally(
    table: CounterTable,
    kind: CounterKind,
    key: Pending['key'],
    sign: 1 | -1,
    id: number,
  ): void {
    const name = `${kind}\u0000${Object.values(key).join('\u0000')}`
    let pending = this.#pending.get(name)
    if (pending === undefined) {
      pending = { kind, table, key, n: 0, minId: Infinity, maxId: -Infinity }
      this.#pending.set(name, pending)
    }
    pending.n += sign
    if (sign > 0) {
      pending.minId = Math.min(pending.minId, id)
      pending.maxId = Math.max(pending.maxId, id)
    }
  }
}

/** The statements of a counter table keyed by `keys` and counting in `n` (all but the days'). */
function counterTable(
  db: BetterSqlite3.Database,
  table: 'beneficiary_block_counts' | 'beneficiary_updated_counts' | 'beneficiary_name_key_counts',
  keys: readonly string[],
): CounterTable {
  const values: Record<string, never> = { n: slot('n') }
  for (const key of keys) values[key] = slot(key)
  const subtract = keys.reduce(
    (query, key) => query.where(key as never, '=', slot(key)),
    queryBuilder.updateTable(table).set((eb) => ({ n: eb('n', '-', slot('n')) })),
  )
  return {
    add: new SqliteQuery(
      db,
      queryBuilder
        .insertInto(table)
        .values(values as never)
        .onConflict((oc) => oc.columns(keys as never).doUpdateSet({ n: sql`n + excluded.n` })),
    ),
    subtract: new SqliteQuery(db, subtract),
  }
}

/** The key columns of each counter table, in the order a log entry lists their values. */
const KEY_COLUMNS: Readonly<Record<CounterKind, readonly string[]>> = {
  day: ['status', 'day'],
  block: ['status', 'block'],
  updated: ['status', 'day'],
  first: NAME_KEY_COLUMNS,
  last: NAME_KEY_COLUMNS,
}

/**
 * A change as the log keeps it, an array (a group of creates writes about fifty, and a log row
 * that fits in one page costs its commit one page of WAL): the kind, the number, the id bounds
 * (null when nothing was counted in: JSON has no infinities), then the key's values.
 */
function toLogEntry({ kind, key, n, minId, maxId }: CounterChange): unknown[] {
  const bound = (id: number) => (Number.isFinite(id) ? id : null)
  return [kind, n, bound(minId), bound(maxId), ...KEY_COLUMNS[kind].map((column) => key[column])]
}

/**
 * The ids of one generation of the write log, as `flush` wrote them; `undefined` for a flush that
 * wrote too many to log, after which the keys must be read anew.
 */
export function parseWrittenIds(text: string): number[] | undefined {
  return (JSON.parse(text) as number[] | null) ?? undefined
}

/** A change as `toLogEntry` wrote it. */
type LogEntry = [CounterKind, number, number | null, number | null, ...(string | number)[]]

/**
 * The changes of one generation of the log, as `flush` wrote them; `undefined` for a flush too
 * large to log, after which the counters must be read anew.
 */
export function parseCounterChanges(text: string): CounterChange[] | undefined {
  const entries = JSON.parse(text) as LogEntry[] | null
  return entries?.map(([kind, n, minId, maxId, ...values]) => ({
    kind,
    n,
    minId: minId ?? Infinity,
    maxId: maxId ?? -Infinity,
    key: Object.fromEntries(KEY_COLUMNS[kind].map((column, i) => [column, values[i]!])),
  }))
}

/** The key of a record's row in `beneficiary_name_key_counts` for one name. */
function nameKey(
  name: 'first' | 'last',
  record: Counted,
  key: 'sort_first' | 'sort_last',
  raw: 'first_name' | 'last_name',
): Pending['key'] {
  return {
    name,
    status: record.status,
    sort_key: record[key],
    raw_name: record[raw],
    block: Math.floor(record.id / NAME_BLOCK_SIZE),
  }
}

function dayOf(time: number): number {
  return Math.floor(time / DAY_MS)
}

/** What the list counters look at in a record with these sort keys. */
export function countedOf(
  record: BeneficiaryRecord,
  keys: Pick<Counted, 'sort_first' | 'sort_last'>,
): Counted {
  return {
    id: record.id,
    status: record.status,
    created_at: record.created_at,
    updated_at: record.updated_at,
    sort_first: keys.sort_first,
    sort_last: keys.sort_last,
    first_name: record.first_name,
    last_name: record.last_name,
  }
}
