import type BetterSqlite3 from 'better-sqlite3'
import type {
  AccessLogEntry,
  AccessLogScan,
  AccessLogTable,
  AccessOperation,
  StoredAccessLogEntry,
} from '../../core/ports/access-log-store.js'
import type { Page } from '../../core/ports/beneficiary-store.js'
import type { HistoryPurge } from '../../core/ports/history-purge.js'
import { translateStorageFailure } from './sqlite-query.js'
import type { SqlStatement } from './threads/sqlite-writer-protocol.js'

// A whole batch in two statements, its entries as one JSON array of arrays: measured in
// process, two statements per entry cost more than the read they record.
const INSERT_ENTRIES = `INSERT INTO access_log
  (at, client_id, request_id, operation, purpose, beneficiary_ids)
  SELECT json_extract(e.value, '$[0]'), json_extract(e.value, '$[1]'),
    json_extract(e.value, '$[2]'), json_extract(e.value, '$[3]'),
    json_extract(e.value, '$[4]'), json_extract(e.value, '$[5]')
  FROM json_each(?) AS e`
// The entries not indexed yet are those after the last one indexed: every entry names at least
// one record, entries are only ever added after the others, and the purge takes the oldest.
const INSERT_RECORDS = `INSERT OR IGNORE INTO access_log_records (beneficiary_id, at, entry_id)
  SELECT j.value, a.at, a.id FROM access_log AS a, json_each(a.beneficiary_ids) AS j
  WHERE a.id > (SELECT coalesce(max(entry_id), 0) FROM access_log_records)`
const COLUMNS = 'a.id, a.at, a.client_id, a.request_id, a.operation, a.purpose, a.beneficiary_ids'

/** A row of `access_log`. */
interface AccessLogRow {
  readonly id: number
  readonly at: number
  readonly client_id: string
  readonly request_id: string
  readonly operation: string
  readonly purpose: string | null
  readonly beneficiary_ids: string
}

/**
 * The access log's table on SQLite (D35). A batch is one `BEGIN IMMEDIATE` transaction on the
 * storage's writer: the writer thread when it has one (the batch crosses to it as statements,
 * like the writes of clients and sessions), else the connection; reads run on the connection.
 */
export class SqliteAccessLogTable implements AccessLogTable {
  readonly #db: BetterSqlite3.Database
  readonly #assertOpen: () => void
  readonly #transaction: (statements: readonly SqlStatement[]) => number[] | Promise<number[]>
  readonly #page: BetterSqlite3.Statement<[number, number, number]>
  readonly #count: BetterSqlite3.Statement<[number]>
  readonly #oldest: BetterSqlite3.Statement<[number, number]>

  /**
   * @param transaction Runs statements in one transaction on the storage's writer
   *   (`SqliteAuthStatements.transaction`).
   */
  constructor(
    db: BetterSqlite3.Database,
    assertOpen: () => void,
    transaction: (statements: readonly SqlStatement[]) => number[] | Promise<number[]>,
  ) {
    this.#db = db
    this.#assertOpen = assertOpen
    this.#transaction = transaction
    this.#page = db.prepare(`SELECT ${COLUMNS} FROM access_log_records r
      JOIN access_log a ON a.id = r.entry_id
      WHERE r.beneficiary_id = ? ORDER BY r.at, r.entry_id LIMIT ? OFFSET ?`)
    this.#count = db.prepare('SELECT count(*) FROM access_log_records WHERE beneficiary_id = ?')
    this.#oldest = db.prepare('SELECT id FROM access_log WHERE at < ? ORDER BY at, id LIMIT ?')
  }

  async append(entries: readonly AccessLogEntry[]): Promise<void> {
    this.#assertOpen()
    if (entries.length === 0) return
    const rows = entries.map((entry) => [
      entry.at,
      entry.client_id,
      entry.request_id,
      entry.operation,
      entry.purpose,
      JSON.stringify(entry.beneficiary_ids),
    ])
    await this.#transaction([
      [INSERT_ENTRIES, [JSON.stringify(rows)]],
      [INSERT_RECORDS, []],
    ])
  }

  async forBeneficiary(
    beneficiaryId: number,
    offset: number,
    limit: number,
  ): Promise<Page<StoredAccessLogEntry>> {
    this.#assertOpen()
    try {
      const read = this.#db.transaction(() => ({
        items: (this.#page.all(beneficiaryId, limit, offset) as AccessLogRow[]).map(entryOf),
        total: this.#count.pluck().get(beneficiaryId) as number,
      }))
      return read.deferred()
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }

  async scan(query: AccessLogScan): Promise<readonly StoredAccessLogEntry[]> {
    this.#assertOpen()
    const where: string[] = []
    const values: unknown[] = []
    const by = query.beneficiaryId === undefined ? 'a' : 'r'
    const id = query.beneficiaryId === undefined ? 'a.id' : 'r.entry_id'
    if (query.beneficiaryId !== undefined) {
      where.push('r.beneficiary_id = ?')
      values.push(query.beneficiaryId)
    }
    if (query.clientId !== undefined) {
      where.push('a.client_id = ?')
      values.push(query.clientId)
    }
    if (query.from !== undefined) {
      where.push(`${by}.at >= ?`)
      values.push(query.from)
    }
    if (query.before !== undefined) {
      where.push(`${by}.at < ?`)
      values.push(query.before)
    }
    if (query.after !== undefined) {
      where.push(`(${by}.at, ${id}) > (?, ?)`)
      values.push(query.after.at, query.after.id)
    }
    const from =
      query.beneficiaryId === undefined
        ? 'access_log a'
        : 'access_log_records r JOIN access_log a ON a.id = r.entry_id'
    const text = `SELECT ${COLUMNS} FROM ${from}
      ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`}
      ORDER BY ${by}.at, ${id} LIMIT ?`
    try {
      return (this.#db.prepare(text).all(...values, query.limit) as AccessLogRow[]).map(entryOf)
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }

  async purge(before: number, limit: number): Promise<number> {
    this.#assertOpen()
    const ids = this.#oldest.pluck().all(before, limit) as number[]
    if (ids.length === 0) return 0
    const list = JSON.stringify(ids)
    await this.#transaction([
      ['DELETE FROM access_log_records WHERE entry_id IN (SELECT value FROM json_each(?))', [list]],
      ['DELETE FROM access_log WHERE id IN (SELECT value FROM json_each(?))', [list]],
    ])
    return ids.length
  }
}

/**
 * Retention of the history on SQLite (D37): one `BEGIN IMMEDIATE` transaction per batch on the
 * storage's writer, the oldest entries first through the index on `at`.
 */
export function sqliteHistoryPurge(
  assertOpen: () => void,
  transaction: (statements: readonly SqlStatement[]) => number[] | Promise<number[]>,
): HistoryPurge {
  return {
    async purge(before, limit) {
      assertOpen()
      const [deleted] = await transaction([
        [
          `DELETE FROM beneficiary_history WHERE id IN
            (SELECT id FROM beneficiary_history WHERE at < ? ORDER BY at LIMIT ?)`,
          [before, limit],
        ],
      ])
      return deleted ?? 0
    },
  }
}

function entryOf(row: AccessLogRow): StoredAccessLogEntry {
  return {
    id: row.id,
    at: row.at,
    client_id: row.client_id,
    request_id: row.request_id,
    operation: row.operation as AccessOperation,
    beneficiary_ids: JSON.parse(row.beneficiary_ids) as number[],
    purpose: row.purpose,
  }
}
