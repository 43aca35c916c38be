import Database from 'better-sqlite3'
import type { BeneficiaryRecord } from '../../../core/beneficiary.js'
import type { BulkStore, SnapshotFilter } from '../../../core/ports/bulk-store.js'
import { RECORD_COLUMNS, recordOf } from '../../relational/relational-beneficiary-columns.js'
import { translateStorageFailure } from '../sqlite-query.js'

/** How long the export's connection waits for a lock (a checkpoint that truncates the WAL). */
const BUSY_TIMEOUT_MS = 5_000

/**
 * Exports on SQLite: a connection of the export's own, read-only, holds one read transaction
 * over every page, so that all of them come from the snapshot its first read saw (WAL mode lets
 * writers go on meanwhile; the WAL grows past its checkpoint until the export ends). Pages are
 * read by id (`id > last ORDER BY id LIMIT n`), each one statement, so nothing stays open on the
 * connection between pages. An in-memory database, which no other connection can open, is read
 * on its own connection, page by page, without that isolation.
 */
export class SqliteBulkStore implements BulkStore {
  readonly #db: Database.Database
  readonly #assertOpen: () => void

  constructor(db: Database.Database, assertOpen: () => void) {
    this.#db = db
    this.#assertOpen = assertOpen
  }

  async *snapshot(
    filter: SnapshotFilter,
    pageSize: number,
  ): AsyncGenerator<readonly BeneficiaryRecord[]> {
    this.#assertOpen()
    const own = !this.#db.memory
    let reader: Database.Database
    try {
      reader = own ? new Database(this.#db.name, { readonly: true, fileMustExist: true }) : this.#db
    } catch (error) {
      throw translateStorageFailure(error)
    }
    const conditions = ['id > @last']
    const values: Record<string, unknown> = { limit: pageSize }
    if (filter.status !== undefined) {
      conditions.push('status = @status')
      values['status'] = filter.status
    }
    if (filter.createdFrom !== undefined) {
      conditions.push('created_at >= @createdFrom')
      values['createdFrom'] = filter.createdFrom
    }
    if (filter.createdBefore !== undefined) {
      conditions.push('created_at < @createdBefore')
      values['createdBefore'] = filter.createdBefore
    }
    let open = false
    try {
      if (own) {
        reader.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`)
        reader.prepare('BEGIN').run()
        open = true
      }
      const page = reader
        .prepare(
          `SELECT ${RECORD_COLUMNS.join(', ')} FROM beneficiaries WHERE ${conditions.join(' AND ')} ORDER BY id LIMIT @limit`,
        )
        .raw(true)
      let last = 0
      for (;;) {
        let rows: unknown[][]
        try {
          rows = page.all({ ...values, last }) as unknown[][]
        } catch (error) {
          throw translateStorageFailure(error)
        }
        if (rows.length === 0) return
        last = rows[rows.length - 1]![0] as number
        yield rows.map(recordOf)
        if (rows.length < pageSize) return
      }
    } finally {
      if (own) {
        if (open && reader.inTransaction) reader.prepare('COMMIT').run()
        reader.close()
      }
    }
  }
}
