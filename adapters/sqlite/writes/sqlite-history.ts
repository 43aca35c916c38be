import type BetterSqlite3 from 'better-sqlite3'
import type { HistoryEntry } from '../../../core/beneficiary.js'
import type { Page } from '../../../core/ports/beneficiary-store.js'
import { ENTRY_COLUMNS, entryOf, entryValues } from '../../relational/relational-history.js'
import { queryBuilder, slot, SqliteQuery } from '../sqlite-query.js'

/**
 * The history of the beneficiaries of `SqliteBeneficiaryStore` (D27), in `beneficiary_history`:
 * appended inside the transaction of the write it records, erased (not deleted) with the record.
 */
export class SqliteHistory {
  readonly #insert: SqliteQuery<never>
  readonly #erase: SqliteQuery<never>
  readonly #page: SqliteQuery<never>
  readonly #count: SqliteQuery<{ n: number }>
  readonly #all: SqliteQuery<never>

  constructor(db: BetterSqlite3.Database) {
    this.#insert = new SqliteQuery(
      db,
      queryBuilder.insertInto('beneficiary_history').values({
        beneficiary_id: slot<number>('beneficiary_id'),
        at: slot<number>('at'),
        action: slot<string>('action'),
        client_id: slot<string>('client_id'),
        request_id: slot<string>('request_id'),
        changes: slot<string>('changes'),
      }),
    )
    const history = queryBuilder
      .selectFrom('beneficiary_history')
      .where('beneficiary_id', '=', slot('id'))
    this.#erase = new SqliteQuery(
      db,
      queryBuilder
        .updateTable('beneficiary_history')
        .set({ changes: '[]' })
        .where('beneficiary_id', '=', slot('id')),
    )
    const entries = history.select(ENTRY_COLUMNS).orderBy('id')
    this.#page = new SqliteQuery(db, entries.limit(slot('limit')).offset(slot('offset')))
    this.#all = new SqliteQuery(db, entries)
    this.#count = new SqliteQuery(
      db,
      history.select((eb) => eb.fn.countAll<number>().as('n')),
    )
  }

  /** Appends `entry` to the history of the record `beneficiaryId`. */
  append(beneficiaryId: number, entry: HistoryEntry): void {
    this.#insert.run({ beneficiary_id: beneficiaryId, ...entryValues(entry) })
  }

  /** Empties the `changes` of every entry of the record (D27: a deleted record's data go). */
  erase(beneficiaryId: number): void {
    this.#erase.run({ id: beneficiaryId })
  }

  /** A page of the record's entries, oldest first, with their total. */
  page(beneficiaryId: number, offset: number, limit: number): Page<HistoryEntry> {
    const id = beneficiaryId
    const total = this.#count.get({ id })?.n ?? 0
    const items =
      total > offset ? this.#page.allValues({ id, limit, offset }).map((row) => entryOf(row)) : []
    return { items, total }
  }

  /** Every entry kept for the record, oldest first; `undefined` when there is none. */
  all(beneficiaryId: number): readonly HistoryEntry[] | undefined {
    const rows = this.#all.allValues({ id: beneficiaryId })
    return rows.length === 0 ? undefined : rows.map((row) => entryOf(row))
  }
}
