import type { BeneficiaryRecord } from '../../core/beneficiary.js'
import type { BulkStore, SnapshotFilter } from '../../core/ports/bulk-store.js'
import { RECORD_COLUMNS, recordOf } from './postgres-beneficiary-columns.js'
import { TYPES, type PostgresPool, type PostgresPoolClient } from './postgres-driver.js'
import { translateStorageFailure } from './postgres-storage-failure.js'

/**
 * Exports on PostgreSQL: one connection of the pool for the whole export, in a `REPEATABLE READ
 * READ ONLY` transaction (one snapshot for every page), reading a cursor `FETCH` by `FETCH`, so
 * that the server keeps the result and the process holds one page. No statement timeout
 * applies within the transaction: a slow reader holds the connection (and the snapshot, which
 * keeps VACUUM from removing rows dead since) as long as it reads.
 */
export class PostgresBulkStore implements BulkStore {
  readonly #pool: PostgresPool
  readonly #schema: string
  readonly #assertOpen: () => void

  constructor(pool: PostgresPool, schema: string, assertOpen: () => void) {
    this.#pool = pool
    this.#schema = schema
    this.#assertOpen = assertOpen
  }

  async *snapshot(
    filter: SnapshotFilter,
    pageSize: number,
  ): AsyncGenerator<readonly BeneficiaryRecord[]> {
    this.#assertOpen()
    const conditions: string[] = []
    const values: unknown[] = []
    if (filter.status !== undefined) {
      values.push(filter.status)
      conditions.push(`status = $${values.length}`)
    }
    if (filter.createdFrom !== undefined) {
      values.push(filter.createdFrom)
      conditions.push(`created_at >= $${values.length}`)
    }
    if (filter.createdBefore !== undefined) {
      values.push(filter.createdBefore)
      conditions.push(`created_at < $${values.length}`)
    }
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`
    const columns = RECORD_COLUMNS.map((column) =>
      column === 'metadata' ? 'metadata::text' : column,
    ).join(', ')
    let client: PostgresPoolClient
    try {
      client = await this.#pool.connect()
    } catch (error) {
      throw translateStorageFailure(error)
    }
    let failed: Error | undefined
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
      await client.query('SET LOCAL statement_timeout = 0')
      await client.query('SET LOCAL idle_in_transaction_session_timeout = 0')
      await client.query({
        text: `DECLARE bulk_export NO SCROLL CURSOR FOR SELECT ${columns} FROM "${this.#schema}".beneficiaries ${where} ORDER BY id`,
        values,
      })
      for (;;) {
        const result = await client.query({
          text: `FETCH ${pageSize} FROM bulk_export`,
          rowMode: 'array',
          types: TYPES,
        })
        const rows = result.rows as unknown[][]
        if (rows.length === 0) break
        yield rows.map(recordOf)
        if (rows.length < pageSize) break
      }
      await client.query('COMMIT')
    } catch (error) {
      failed = error instanceof Error ? error : new Error(String(error))
      throw translateStorageFailure(error)
    } finally {
      // Left early (the reader went away) or failed: the transaction ends with the connection's
      // return, rolled back; a connection that failed is not returned to the pool.
      if (failed === undefined) {
        try {
          await client.query('ROLLBACK')
          client.release()
        } catch (error) {
          client.release(error instanceof Error ? error : true)
        }
      } else {
        client.release(failed)
      }
    }
  }
}
