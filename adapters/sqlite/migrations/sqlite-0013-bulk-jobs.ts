import { type Kysely, type Migration, sql } from 'kysely'

// Import jobs (D39): a job with its file until it ends, its lease, its counts, and one outcome
// per row for its report.
export const bulkJobs: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`CREATE TABLE import_jobs (
      id TEXT PRIMARY KEY,
      client_id TEXT NOT NULL,
      request_id TEXT NOT NULL,
      format TEXT NOT NULL CHECK (format IN ('csv', 'ndjson')),
      ignore_assigned INTEGER NOT NULL,
      file BLOB NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
      rows INTEGER NOT NULL DEFAULT 0,
      created INTEGER NOT NULL DEFAULT 0,
      existing INTEGER NOT NULL DEFAULT 0,
      refused INTEGER NOT NULL DEFAULT 0,
      error TEXT,
      lease_owner TEXT,
      lease_until INTEGER,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      finished_at INTEGER
    )`.execute(db)
    await sql`CREATE INDEX import_jobs_waiting ON import_jobs (created_at)
      WHERE state IN ('queued', 'running')`.execute(db)
    await sql`CREATE TABLE import_job_outcomes (
      job_id TEXT NOT NULL REFERENCES import_jobs (id) ON DELETE CASCADE,
      row INTEGER NOT NULL,
      outcome TEXT NOT NULL,
      PRIMARY KEY (job_id, row)
    ) WITHOUT ROWID`.execute(db)
  },
}
