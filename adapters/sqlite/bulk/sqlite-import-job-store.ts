import type Database from 'better-sqlite3'
import type {
  ImportJob,
  ImportJobCounts,
  ImportJobStore,
  LeasedImportJob,
  NewImportJob,
  StoredOutcome,
} from '../../../core/ports/import-job-store.js'
import {
  IMPORT_JOB_COLUMNS,
  importJobOf,
  type ImportJobRow,
} from '../../relational/relational-import-jobs.js'
import { translateStorageFailure } from '../sqlite-query.js'

/**
 * Import jobs on SQLite. Each call is one statement or one `BEGIN IMMEDIATE` transaction on the
 * storage's connection; a lease is one `UPDATE … RETURNING`, which SQLite runs under its write
 * lock, so two processes on one file never take the same job.
 */
export class SqliteImportJobStore implements ImportJobStore {
  readonly #db: Database.Database
  readonly #assertOpen: () => void

  constructor(db: Database.Database, assertOpen: () => void) {
    this.#db = db
    this.#assertOpen = assertOpen
  }

  async create(job: NewImportJob): Promise<ImportJob> {
    this.#run(() =>
      this.#db
        .prepare(
          `INSERT INTO import_jobs (id, client_id, request_id, format, ignore_assigned, file, state,
            created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?)`,
        )
        .run(
          job.id,
          job.clientId,
          job.requestId,
          job.format,
          job.ignoreAssigned ? 1 : 0,
          Buffer.from(job.file.buffer, job.file.byteOffset, job.file.byteLength),
          job.createdAt,
          job.createdAt,
        ),
    )
    return (await this.get(job.id))!
  }

  async get(id: string): Promise<ImportJob | undefined> {
    const row = this.#run(
      () =>
        this.#db.prepare(`SELECT ${IMPORT_JOB_COLUMNS} FROM import_jobs WHERE id = ?`).get(id) as
          ImportJobRow | undefined,
    )
    return row === undefined ? undefined : importJobOf(row)
  }

  async outcomes(
    id: string,
    offset: number,
    limit: number,
  ): Promise<{ items: StoredOutcome[]; total: number }> {
    return this.#run(() => {
      const items = this.#db
        .prepare(
          'SELECT row, outcome AS json FROM import_job_outcomes WHERE job_id = ? ORDER BY row LIMIT ? OFFSET ?',
        )
        .all(id, limit, offset) as StoredOutcome[]
      const { n } = this.#db
        .prepare('SELECT count(*) AS n FROM import_job_outcomes WHERE job_id = ?')
        .get(id) as { n: number }
      return { items, total: n }
    })
  }

  async lease(owner: string, now: number, leaseMs: number): Promise<LeasedImportJob | undefined> {
    const row = this.#run(
      () =>
        this.#db
          .prepare(
            `UPDATE import_jobs SET state = 'running', lease_owner = ?, lease_until = ?, updated_at = ?
            WHERE id = (SELECT id FROM import_jobs WHERE state IN ('queued', 'running')
              AND (lease_until IS NULL OR lease_until <= ?) ORDER BY created_at, id LIMIT 1)
            RETURNING ${IMPORT_JOB_COLUMNS}, file`,
          )
          .get(owner, now + leaseMs, now, now) as (ImportJobRow & { file: Buffer }) | undefined,
    )
    if (row === undefined) return undefined
    return { job: importJobOf(row), file: row.file }
  }

  async progress(
    id: string,
    owner: string,
    outcomes: readonly StoredOutcome[],
    counts: ImportJobCounts,
    now: number,
    leaseMs: number,
  ): Promise<boolean> {
    const db = this.#db
    return this.#run(() =>
      db
        .transaction(() => {
          const renewed = db
            .prepare(
              `UPDATE import_jobs SET lease_until = ?, updated_at = ?, rows = ?, created = ?,
              existing = ?, refused = ? WHERE id = ? AND lease_owner = ? AND state = 'running'`,
            )
            .run(
              now + leaseMs,
              now,
              counts.rows,
              counts.created,
              counts.existing,
              counts.refused,
              id,
              owner,
            )
          if (renewed.changes === 0) return false
          const insert = db.prepare(
            'INSERT OR REPLACE INTO import_job_outcomes (job_id, row, outcome) VALUES (?, ?, ?)',
          )
          for (const outcome of outcomes) insert.run(id, outcome.row, outcome.json)
          return true
        })
        .immediate(),
    )
  }

  async finish(
    id: string,
    owner: string,
    state: 'done' | 'failed',
    error: string | null,
    now: number,
  ): Promise<boolean> {
    const result = this.#run(() =>
      this.#db
        .prepare(
          `UPDATE import_jobs SET state = ?, error = ?, file = x'', lease_owner = NULL,
            lease_until = NULL, updated_at = ?, finished_at = ?
          WHERE id = ? AND lease_owner = ? AND state = 'running'`,
        )
        .run(state, error, now, now, id, owner),
    )
    return result.changes > 0
  }

  #run<T>(work: () => T): T {
    this.#assertOpen()
    try {
      return work()
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }
}
