import { sql, type RawBuilder } from 'kysely'
import type { HistoryEntry } from '../../core/beneficiary.js'
import type { Page } from '../../core/ports/beneficiary-store.js'
import { ENTRY_COLUMNS as COLUMNS, entryOf } from '../relational/relational-history.js'
import { table } from './postgres-counters.js'
import { PostgresQuery, slot, type Queryable } from './postgres-query.js'

/**
 * An INSERT of the entry whose slots `entryValues` (`relational-history.ts`) gives into the
 * history of the record in the CTE `source` (column `id`), for a statement that writes the
 * record: the entry is appended in the same transaction as the change (D27), and only if the
 * change happened.
 */
export function appendEntry(schema: string, source: string): RawBuilder<unknown> {
  return sql`INSERT INTO ${table(schema, 'beneficiary_history')}
      (beneficiary_id, at, action, client_id, request_id, changes)
    SELECT id, ${slot('at')}, ${slot('action')}, ${slot('client_id')}, ${slot('request_id')},
      ${slot('changes')}::json
    FROM ${sql.table(source)}`
}

/**
 * An UPDATE that empties the `changes` of every entry of the record in the CTE `source`: a
 * deleted record's personal values go; who changed what and when stays (D13, D27).
 */
export function eraseEntries(schema: string, source: string): RawBuilder<unknown> {
  return sql`UPDATE ${table(schema, 'beneficiary_history')} SET changes = '[]'
    WHERE beneficiary_id = (SELECT id FROM ${sql.table(source)})`
}

const ENTRY_COLUMNS = sql.raw(COLUMNS.join(', '))

/**
 * The reads of the history of `BeneficiaryStore` (D27): a page with its total, and every entry
 * kept, for audits.
 */
export class PostgresHistory {
  readonly #page: PostgresQuery
  readonly #all: PostgresQuery

  constructor(schema: string) {
    const history = table(schema, 'beneficiary_history')
    // One round trip: whether the record exists, how many entries it has, and the page.
    this.#page = new PostgresQuery(sql`
      SELECT e.present, e.total, h.at, h.action, h.client_id, h.request_id, h.changes
      FROM (SELECT
          EXISTS (SELECT 1 FROM ${table(schema, 'beneficiaries')} WHERE id = ${slot('id')})
            AS present,
          (SELECT count(*) FROM ${history} WHERE beneficiary_id = ${slot('id')}) AS total
        ) e
      LEFT JOIN LATERAL (
        SELECT ${ENTRY_COLUMNS} FROM ${history}
        WHERE beneficiary_id = ${slot('id')} AND e.present
        ORDER BY id LIMIT ${slot('limit')} OFFSET ${slot('offset')}
      ) h ON true`)
    this.#all = new PostgresQuery(sql`
      SELECT ${ENTRY_COLUMNS} FROM ${history} WHERE beneficiary_id = ${slot('id')} ORDER BY id`)
  }

  /** A page of the record's entries, oldest first, with their total; `undefined` without it. */
  async page(
    db: Queryable,
    beneficiaryId: number,
    offset: number,
    limit: number,
  ): Promise<Page<HistoryEntry> | undefined> {
    const rows = await this.#page.arrays(db, { id: beneficiaryId, limit, offset })
    const first = rows[0]
    if (first === undefined || first[0] !== true) return undefined
    const items = rows.filter((row) => row[2] !== null).map((row) => entryOf(row, 2))
    return { items, total: first[1] as number }
  }

  /** Every entry kept for the record, oldest first; `undefined` when there is none. */
  async all(db: Queryable, beneficiaryId: number): Promise<readonly HistoryEntry[] | undefined> {
    const rows = await this.#all.arrays(db, { id: beneficiaryId })
    return rows.length === 0 ? undefined : rows.map((row) => entryOf(row))
  }
}
