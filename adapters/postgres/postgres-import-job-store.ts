import type {
  ImportJob,
  ImportJobCounts,
  ImportJobStore,
  LeasedImportJob,
  NewImportJob,
  StoredOutcome,
} from '../../core/ports/import-job-store.js'
import {
  IMPORT_JOB_COLUMNS,
  importJobOf,
  type ImportJobRow,
} from '../relational/relational-import-jobs.js'
import { TYPES, type PostgresPool } from './postgres-driver.js'
import { translateStorageFailure } from './postgres-storage-failure.js'

/**
 * Import jobs on PostgreSQL. A lease takes the oldest waiting job with `FOR UPDATE SKIP LOCKED`,
 * so instances asking at once each get a different job or none, never the same one; progress
 * and its outcomes are one statement, which writes only while the caller still holds the lease.
 */
export class PostgresImportJobStore implements ImportJobStore {
  readonly #pool: PostgresPool
  readonly #jobs: string
  readonly #outcomes: string
  readonly #assertOpen: () => void

  constructor(pool: PostgresPool, schema: string, assertOpen: () => void) {
    this.#pool = pool
    this.#jobs = `"${schema}".import_jobs`
    this.#outcomes = `"${schema}".import_job_outcomes`
    this.#assertOpen = assertOpen
  }

  async create(job: NewImportJob): Promise<ImportJob> {
    const rows = await this.#query<ImportJobRow>(
      `INSERT INTO ${this.#jobs} (id, client_id, request_id, format, ignore_assigned, file, state,
        created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $7)
      RETURNING ${IMPORT_JOB_COLUMNS}`,
      [
        job.id,
        job.clientId,
        job.requestId,
        job.format,
        job.ignoreAssigned,
        Buffer.from(job.file.buffer, job.file.byteOffset, job.file.byteLength),
        job.createdAt,
      ],
    )
    return importJobOf(rows[0]!)
  }

  async get(id: string): Promise<ImportJob | undefined> {
    const rows = await this.#query<ImportJobRow>(
      `SELECT ${IMPORT_JOB_COLUMNS} FROM ${this.#jobs} WHERE id = $1`,
      [id],
    )
    return rows[0] === undefined ? undefined : importJobOf(rows[0])
  }

  async outcomes(
    id: string,
    offset: number,
    limit: number,
  ): Promise<{ items: StoredOutcome[]; total: number }> {
    const items = await this.#query<StoredOutcome>(
      `SELECT row, outcome AS json FROM ${this.#outcomes} WHERE job_id = $1
      ORDER BY row LIMIT $2 OFFSET $3`,
      [id, limit, offset],
    )
    const total = await this.#query<{ n: number }>(
      `SELECT count(*) AS n FROM ${this.#outcomes} WHERE job_id = $1`,
      [id],
    )
    return { items, total: total[0]!.n }
  }

  async lease(owner: string, now: number, leaseMs: number): Promise<LeasedImportJob | undefined> {
    // bytea travels as hex text: the adapter's parsers leave every type they do not know as text.
    const rows = await this.#query<ImportJobRow & { file: string }>(
      `UPDATE ${this.#jobs} SET state = 'running', lease_owner = $1, lease_until = $2, updated_at = $3
      WHERE id = (SELECT id FROM ${this.#jobs} WHERE state IN ('queued', 'running')
        AND (lease_until IS NULL OR lease_until <= $3) ORDER BY created_at, id LIMIT 1
        FOR UPDATE SKIP LOCKED)
      RETURNING ${IMPORT_JOB_COLUMNS}, encode(file, 'hex') AS file`,
      [owner, now + leaseMs, now],
    )
    const row = rows[0]
    if (row === undefined) return undefined
    return { job: importJobOf(row), file: Buffer.from(row.file, 'hex') }
  }

  async progress(
    id: string,
    owner: string,
    outcomes: readonly StoredOutcome[],
    counts: ImportJobCounts,
    now: number,
    leaseMs: number,
  ): Promise<boolean> {
    const rows = await this.#query<{ id: string }>(
      `WITH job AS (
        UPDATE ${this.#jobs} SET lease_until = $3, updated_at = $4, rows = $5, created = $6,
          existing = $7, refused = $8
        WHERE id = $1 AND lease_owner = $2 AND state = 'running' RETURNING id),
      written AS (
        INSERT INTO ${this.#outcomes} (job_id, row, outcome)
        SELECT job.id, o.row, o.outcome FROM job
        CROSS JOIN json_to_recordset($9::json) AS o(row bigint, outcome text)
        ON CONFLICT (job_id, row) DO UPDATE SET outcome = excluded.outcome)
      SELECT id FROM job`,
      [
        id,
        owner,
        now + leaseMs,
        now,
        counts.rows,
        counts.created,
        counts.existing,
        counts.refused,
        JSON.stringify(outcomes.map(({ row, json }) => ({ row, outcome: json }))),
      ],
    )
    return rows.length > 0
  }

  async finish(
    id: string,
    owner: string,
    state: 'done' | 'failed',
    error: string | null,
    now: number,
  ): Promise<boolean> {
    const rows = await this.#query<{ id: string }>(
      `UPDATE ${this.#jobs} SET state = $3, error = $4, file = '', lease_owner = NULL,
        lease_until = NULL, updated_at = $5, finished_at = $5
      WHERE id = $1 AND lease_owner = $2 AND state = 'running' RETURNING id`,
      [id, owner, state, error, now],
    )
    return rows.length > 0
  }

  async #query<R>(text: string, values: unknown[]): Promise<R[]> {
    this.#assertOpen()
    try {
      const result = await this.#pool.query({ text, values, types: TYPES })
      return result.rows as R[]
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }
}
