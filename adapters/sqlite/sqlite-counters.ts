import type BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import { queryBuilder, slot, SqliteQuery } from './sqlite-query.js'

/** Milliseconds per row of `beneficiary_day_counts`: one UTC day. */
export const DAY_MS = 86_400_000
/** Ids per row of `beneficiary_block_counts`, whose key is `id >> 10`. */
export const BLOCK_SIZE = 1024

/** The fields of a record the counters look at. */
export interface Counted {
  readonly id: number
  readonly status: string
  readonly created_at: number
}

interface DayTally {
  status: string
  day: number
  n: number
  minId: number
  maxId: number
}

/**
 * Keeps `beneficiary_day_counts` and `beneficiary_block_counts` in step with `beneficiaries`.
 * Callers run it inside the transaction of the write it counts.
 */
export class SqliteCounters {
  readonly #addDay: SqliteQuery<never>
  readonly #addBlock: SqliteQuery<never>
  readonly #removeDay: SqliteQuery<never>
  readonly #removeBlock: SqliteQuery<never>

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
  }

  /** Counts a record in. */
  add(record: Counted): void {
    const { id, status } = record
    const day = Math.floor(record.created_at / DAY_MS)
    this.#addDay.run({ status, day, n: 1, min_id: id, max_id: id })
    this.#addBlock.run({ status, block: Math.floor(id / BLOCK_SIZE), n: 1 })
  }

  /** Counts a record out. */
  remove(record: Counted): void {
    const { id, status } = record
    this.#removeDay.run({ status, day: Math.floor(record.created_at / DAY_MS) })
    this.#removeBlock.run({ status, block: Math.floor(id / BLOCK_SIZE) })
  }

  /** Adds many records at once: `count` them, then `flush` (the bulk seeder's path). */
  batch(): { count(record: Counted): void; flush(): void } {
    const days = new Map<string, DayTally>()
    const blocks = new Map<string, { status: string; block: number; n: number }>()
    return {
      count: (record) => {
        const day = Math.floor(record.created_at / DAY_MS)
        const dayKey = `${record.status}:${day}`
        const tally = days.get(dayKey)
        if (tally === undefined) {
          days.set(dayKey, { status: record.status, day, n: 1, minId: record.id, maxId: record.id })
        } else {
          tally.n += 1
          tally.minId = Math.min(tally.minId, record.id)
          tally.maxId = Math.max(tally.maxId, record.id)
        }
        const block = Math.floor(record.id / BLOCK_SIZE)
        const blockKey = `${record.status}:${block}`
        const blockTally = blocks.get(blockKey)
        if (blockTally === undefined) blocks.set(blockKey, { status: record.status, block, n: 1 })
        else blockTally.n += 1
      },
      flush: () => {
        for (const { status, day, n, minId, maxId } of days.values()) {
          this.#addDay.run({ status, day, n, min_id: minId, max_id: maxId })
        }
        for (const { status, block, n } of blocks.values()) this.#addBlock.run({ status, block, n })
        days.clear()
        blocks.clear()
      },
    }
  }
}
