import type BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import { queryBuilder, slot, SqliteQuery } from './sqlite-query.js'

/** Milliseconds per row of the day counters: one UTC day. */
export const DAY_MS = 86_400_000
/** Ids per row of `beneficiary_block_counts`, whose key is `id >> 10`. */
export const BLOCK_SIZE = 1024

/** The fields of a record the counters look at. */
export interface Counted {
  readonly id: number
  readonly status: string
  readonly created_at: number
  readonly updated_at: number
  readonly sort_first: string
  readonly sort_last: string
}

/** The key of `beneficiary_name_counts`: the first two characters (code points) of a sort key. */
export function namePrefix(sortKey: string): string {
  const [first = '', second = ''] = sortKey
  return first + second
}

const NAME_KEYS = [
  ['first', 'sort_first'],
  ['last', 'sort_last'],
] as const

interface Tally {
  readonly values: Record<string, string | number>
  n: number
  minId: number
  maxId: number
}

/**
 * Keeps the counter tables of migration `0002_list_counters` in step with `beneficiaries`:
 * records per status and creation day (with id bounds), per status and block of ids, per
 * status and update day, and per status and name prefix. Callers run it inside the
 * transaction of the write it counts.
 */
export class SqliteCounters {
  readonly #addDay: SqliteQuery<never>
  readonly #addBlock: SqliteQuery<never>
  readonly #addUpdated: SqliteQuery<never>
  readonly #addName: SqliteQuery<never>
  readonly #removeDay: SqliteQuery<never>
  readonly #removeBlock: SqliteQuery<never>
  readonly #removeUpdated: SqliteQuery<never>
  readonly #removeName: SqliteQuery<never>
  readonly #addStatus: SqliteQuery<never>

  constructor(db: BetterSqlite3.Database) {
    this.#addDay = new SqliteQuery(
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
    )
    this.#addBlock = new SqliteQuery(
      db,
      queryBuilder
        .insertInto('beneficiary_block_counts')
        .values({ status: slot('status'), block: slot('block'), n: slot('n') })
        .onConflict((oc) =>
          oc.columns(['status', 'block']).doUpdateSet((eb) => ({
            n: sql<number>`${eb.ref('beneficiary_block_counts.n')} + ${eb.ref('excluded.n')}`,
          })),
        ),
    )
    this.#addUpdated = new SqliteQuery(
      db,
      queryBuilder
        .insertInto('beneficiary_updated_counts')
        .values({ status: slot('status'), day: slot('day'), n: slot('n') })
        .onConflict((oc) =>
          oc.columns(['status', 'day']).doUpdateSet((eb) => ({
            n: sql<number>`${eb.ref('beneficiary_updated_counts.n')} + ${eb.ref('excluded.n')}`,
          })),
        ),
    )
    this.#addName = new SqliteQuery(
      db,
      queryBuilder
        .insertInto('beneficiary_name_counts')
        .values({
          name: slot('name'),
          status: slot('status'),
          prefix: slot('prefix'),
          n: slot('n'),
        })
        .onConflict((oc) =>
          oc.columns(['name', 'status', 'prefix']).doUpdateSet((eb) => ({
            n: sql<number>`${eb.ref('beneficiary_name_counts.n')} + ${eb.ref('excluded.n')}`,
          })),
        ),
    )
    this.#addStatus = new SqliteQuery(
      db,
      queryBuilder
        .insertInto('beneficiary_status_counts')
        .values({ status: slot('status'), n: slot('n') })
        .onConflict((oc) =>
          oc.column('status').doUpdateSet((eb) => ({
            n: sql<number>`${eb.ref('beneficiary_status_counts.n')} + ${eb.ref('excluded.n')}`,
          })),
        ),
    )
    // The id bounds of a day stay as they are: still bounds, if looser.
    this.#removeDay = new SqliteQuery(
      db,
      queryBuilder
        .updateTable('beneficiary_day_counts')
        .set((eb) => ({ n: eb('n', '-', 1) }))
        .where('status', '=', slot('status'))
        .where('day', '=', slot('day')),
    )
    this.#removeBlock = new SqliteQuery(
      db,
      queryBuilder
        .updateTable('beneficiary_block_counts')
        .set((eb) => ({ n: eb('n', '-', 1) }))
        .where('status', '=', slot('status'))
        .where('block', '=', slot('block')),
    )
    this.#removeUpdated = new SqliteQuery(
      db,
      queryBuilder
        .updateTable('beneficiary_updated_counts')
        .set((eb) => ({ n: eb('n', '-', 1) }))
        .where('status', '=', slot('status'))
        .where('day', '=', slot('day')),
    )
    this.#removeName = new SqliteQuery(
      db,
      queryBuilder
        .updateTable('beneficiary_name_counts')
        .set((eb) => ({ n: eb('n', '-', 1) }))
        .where('name', '=', slot('name'))
        .where('status', '=', slot('status'))
        .where('prefix', '=', slot('prefix')),
    )
  }

  /** Counts a record in. */
  add(record: Counted): void {
    const { id, status } = record
    this.#addDay.run({ status, day: dayOf(record.created_at), n: 1, min_id: id, max_id: id })
    this.#addBlock.run({ status, block: Math.floor(id / BLOCK_SIZE), n: 1 })
    this.#addUpdated.run({ status, day: dayOf(record.updated_at), n: 1 })
    this.#addName.run({ name: 'first', status, prefix: namePrefix(record.sort_first), n: 1 })
    this.#addName.run({ name: 'last', status, prefix: namePrefix(record.sort_last), n: 1 })
    this.#addStatus.run({ status, n: 1 })
  }

  /** Counts a record out. */
  remove(record: Counted): void {
    const { id, status } = record
    this.#removeDay.run({ status, day: dayOf(record.created_at) })
    this.#removeBlock.run({ status, block: Math.floor(id / BLOCK_SIZE) })
    this.#removeUpdated.run({ status, day: dayOf(record.updated_at) })
    this.#removeName.run({ name: 'first', status, prefix: namePrefix(record.sort_first) })
    this.#removeName.run({ name: 'last', status, prefix: namePrefix(record.sort_last) })
    this.#addStatus.run({ status, n: -1 })
  }

  /**
   * Recounts a changed record in the counters whose key changed. Every counter is keyed by the
   * status, so a new status recounts it everywhere; otherwise only the counters of what moved
   * (most updates only move `updated_at` to another day: 2 statements instead of 12).
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
      this.#removeDay.run({ status, day: dayOf(before.created_at) })
      this.#addDay.run({ status, day: created, n: 1, min_id: id, max_id: id })
    }
    const updated = dayOf(after.updated_at)
    if (dayOf(before.updated_at) !== updated) {
      this.#removeUpdated.run({ status, day: dayOf(before.updated_at) })
      this.#addUpdated.run({ status, day: updated, n: 1 })
    }
    for (const [name, key] of NAME_KEYS) {
      const prefix = namePrefix(after[key])
      if (namePrefix(before[key]) !== prefix) {
        this.#removeName.run({ name, status, prefix: namePrefix(before[key]) })
        this.#addName.run({ name, status, prefix, n: 1 })
      }
    }
  }

  /** Adds many records at once: `count` them, then `flush` (the bulk seeder's path). */
  batch(): { count(record: Counted): void; flush(): void } {
    const tallies = new Map<string, { query: SqliteQuery<never>; tally: Tally }>()
    const tally = (query: SqliteQuery<never>, key: string, values: Tally['values'], id: number) => {
      const found = tallies.get(key)
      if (found === undefined) {
        tallies.set(key, { query, tally: { values, n: 1, minId: id, maxId: id } })
      } else {
        found.tally.n += 1
        found.tally.minId = Math.min(found.tally.minId, id)
        found.tally.maxId = Math.max(found.tally.maxId, id)
      }
    }
    return {
      count: (record) => {
        const { id, status } = record
        const day = dayOf(record.created_at)
        const block = Math.floor(id / BLOCK_SIZE)
        const updated = dayOf(record.updated_at)
        const first = namePrefix(record.sort_first)
        const last = namePrefix(record.sort_last)
        tally(this.#addDay, `d:${status}:${day}`, { status, day }, id)
        tally(this.#addBlock, `b:${status}:${block}`, { status, block }, id)
        tally(this.#addUpdated, `u:${status}:${updated}`, { status, day: updated }, id)
        tally(this.#addName, `f:${status}:${first}`, { name: 'first', status, prefix: first }, id)
        tally(this.#addName, `l:${status}:${last}`, { name: 'last', status, prefix: last }, id)
        tally(this.#addStatus, `s:${status}`, { status }, id)
      },
      flush: () => {
        for (const { query, tally } of tallies.values()) {
          query.run({ ...tally.values, n: tally.n, min_id: tally.minId, max_id: tally.maxId })
        }
        tallies.clear()
      },
    }
  }
}

function dayOf(time: number): number {
  return Math.floor(time / DAY_MS)
}
