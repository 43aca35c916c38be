import type {
  AccessLogEntry,
  AccessLogScan,
  AccessLogTable,
  AccessOperation,
  StoredAccessLogEntry,
} from '../../core/ports/access-log-store.js'
import type { Page } from '../../core/ports/beneficiary-store.js'
import type { HistoryPurge } from '../../core/ports/history-purge.js'
import type { PostgresPool } from './postgres-driver.js'
import { translateStorageFailure } from './postgres-storage-failure.js'

/** A row as the reads select it: bigint columns arrive as text. */
interface AccessLogRow {
  readonly id: string
  readonly at: string
  readonly client_id: string
  readonly request_id: string
  readonly operation: string
  readonly purpose: string | null
  readonly beneficiary_ids: string
}

const COLUMNS = 'a.id, a.at, a.client_id, a.request_id, a.operation, a.purpose, a.beneficiary_ids'

/**
 * The access log's table on PostgreSQL (D35). A batch is one statement: the entries arrive as
 * arrays (`unnest`), and the rows per record are inserted from what the first INSERT returned,
 * so a batch is committed whole or not at all, in one round trip.
 */
export class PostgresAccessLogTable implements AccessLogTable {
  readonly #pool: PostgresPool
  readonly #assertOpen: () => void
  readonly #append: string
  readonly #purge: string
  readonly #log: string
  readonly #records: string
  /** Where the last purge stopped, in `(at, id)` order; everything before it is gone. */
  #purgedTo = { at: -Number.MAX_SAFE_INTEGER, id: 0 }

  constructor(pool: PostgresPool, schema: string, assertOpen: () => void) {
    this.#pool = pool
    this.#assertOpen = assertOpen
    this.#log = `"${schema}".access_log`
    this.#records = `"${schema}".access_log_records`
    this.#append = `WITH e AS (
        INSERT INTO ${this.#log} (at, client_id, request_id, operation, purpose, beneficiary_ids)
        SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
        RETURNING id, at, beneficiary_ids
      )
      INSERT INTO ${this.#records} (beneficiary_id, at, entry_id)
      SELECT DISTINCT j.value::bigint, e.at, e.id
      FROM e CROSS JOIN LATERAL json_array_elements_text(e.beneficiary_ids::json) AS j(value)`
    // From where the last batch stopped: the index still holds the rows deleted before until
    // a vacuum, and starting from the oldest every time would step over all of them (measured:
    // a million entries purged at a slowing ~2,500 a second). Nothing expired is ever added
    // behind the cursor: new entries are stamped now, long after the retention's cut-off.
    this.#purge = `WITH old AS (
        SELECT id, at FROM ${this.#log}
        WHERE at < $1 AND at >= $3 AND (at, id) > ($3, $4) ORDER BY at, id LIMIT $2
      ), gone AS (
        DELETE FROM ${this.#records} WHERE entry_id IN (SELECT id FROM old)
      ), deleted AS (
        DELETE FROM ${this.#log} WHERE id IN (SELECT id FROM old) RETURNING id
      )
      SELECT (SELECT count(*) FROM deleted) AS n, last.at, last.id
      FROM (SELECT 1) AS one
      LEFT JOIN (SELECT at, id FROM old ORDER BY at DESC, id DESC LIMIT 1) AS last ON true`
  }

  async append(entries: readonly AccessLogEntry[]): Promise<void> {
    this.#assertOpen()
    if (entries.length === 0) return
    const columns: unknown[][] = [[], [], [], [], [], []]
    for (const entry of entries) {
      columns[0]!.push(entry.at)
      columns[1]!.push(entry.client_id)
      columns[2]!.push(entry.request_id)
      columns[3]!.push(entry.operation)
      columns[4]!.push(entry.purpose)
      columns[5]!.push(JSON.stringify(entry.beneficiary_ids))
    }
    await this.#query(this.#append, columns)
  }

  async forBeneficiary(
    beneficiaryId: number,
    offset: number,
    limit: number,
  ): Promise<Page<StoredAccessLogEntry>> {
    this.#assertOpen()
    // The total by a window over the whole set would read every row; two statements instead.
    const [rows, count] = await Promise.all([
      this.#query(
        `SELECT ${COLUMNS} FROM ${this.#records} r JOIN ${this.#log} a ON a.id = r.entry_id
          WHERE r.beneficiary_id = $1 ORDER BY r.at, r.entry_id LIMIT $2 OFFSET $3`,
        [beneficiaryId, limit, offset],
      ),
      this.#query(`SELECT count(*) AS n FROM ${this.#records} WHERE beneficiary_id = $1`, [
        beneficiaryId,
      ]),
    ])
    return {
      items: (rows as AccessLogRow[]).map(entryOf),
      total: Number((count[0] as { n: string }).n),
    }
  }

  async scan(query: AccessLogScan): Promise<readonly StoredAccessLogEntry[]> {
    this.#assertOpen()
    const where: string[] = []
    const values: unknown[] = []
    const by = query.beneficiaryId === undefined ? 'a' : 'r'
    const id = query.beneficiaryId === undefined ? 'a.id' : 'r.entry_id'
    const add = (condition: (n: number) => string, ...given: unknown[]): void => {
      values.push(...given)
      where.push(condition(values.length))
    }
    if (query.beneficiaryId !== undefined)
      add((n) => `r.beneficiary_id = $${n}`, query.beneficiaryId)
    if (query.clientId !== undefined) add((n) => `a.client_id = $${n}`, query.clientId)
    if (query.from !== undefined) add((n) => `${by}.at >= $${n}`, query.from)
    if (query.before !== undefined) add((n) => `${by}.at < $${n}`, query.before)
    if (query.after !== undefined) {
      add((n) => `(${by}.at, ${id}) > ($${n - 1}, $${n})`, query.after.at, query.after.id)
    }
    values.push(query.limit)
    const from =
      query.beneficiaryId === undefined
        ? `${this.#log} a`
        : `${this.#records} r JOIN ${this.#log} a ON a.id = r.entry_id`
    const rows = await this.#query(
      `SELECT ${COLUMNS} FROM ${from}
        ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`}
        ORDER BY ${by}.at, ${id} LIMIT $${values.length}`,
      values,
    )
    return (rows as AccessLogRow[]).map(entryOf)
  }

  async purge(before: number, limit: number): Promise<number> {
    this.#assertOpen()
    const { at, id } = this.#purgedTo
    const rows = await this.#query(this.#purge, [before, limit, at, id])
    const row = rows[0] as { n: string; at: string | null; id: string | null }
    if (row.at !== null && row.id !== null) {
      this.#purgedTo = { at: Number(row.at), id: Number(row.id) }
    }
    return Number(row.n)
  }

  async #query(text: string, values: unknown[]): Promise<unknown[]> {
    try {
      return (await this.#pool.query({ text, values })).rows
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }
}

/**
 * Retention of the history on PostgreSQL (D37): one statement per batch, oldest first, each
 * from where the last one stopped (as the access log's purge).
 */
export function postgresHistoryPurge(
  pool: PostgresPool,
  schema: string,
  assertOpen: () => void,
): HistoryPurge {
  const history = `"${schema}".beneficiary_history`
  const text = `WITH old AS (
      SELECT id, at FROM ${history} WHERE at < $1 AND at >= $3 AND (at, id) > ($3, $4) ORDER BY at, id LIMIT $2
    ), deleted AS (
      DELETE FROM ${history} WHERE id IN (SELECT id FROM old) RETURNING id
    )
    SELECT (SELECT count(*) FROM deleted) AS n, last.at, last.id
    FROM (SELECT 1) AS one
    LEFT JOIN (SELECT at, id FROM old ORDER BY at DESC, id DESC LIMIT 1) AS last ON true`
  let purgedTo = { at: -Number.MAX_SAFE_INTEGER, id: 0 }
  return {
    async purge(before, limit) {
      assertOpen()
      try {
        const values = [before, limit, purgedTo.at, purgedTo.id]
        const rows = (await pool.query({ text, values })).rows
        const row = rows[0] as { n: string; at: string | null; id: string | null }
        if (row.at !== null && row.id !== null) {
          purgedTo = { at: Number(row.at), id: Number(row.id) }
        }
        return Number(row.n)
      } catch (error) {
        throw translateStorageFailure(error)
      }
    },
  }
}

function entryOf(row: AccessLogRow): StoredAccessLogEntry {
  return {
    id: Number(row.id),
    at: Number(row.at),
    client_id: row.client_id,
    request_id: row.request_id,
    operation: row.operation as AccessOperation,
    beneficiary_ids: JSON.parse(row.beneficiary_ids) as number[],
    purpose: row.purpose,
  }
}
