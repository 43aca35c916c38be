/**
 * Import jobs (D39): a job with its file until it ends, its lease, its counts, and one outcome
 * per row for its report. `%s` is the schema, quoted.
 */
export const BULK_JOBS_STATEMENTS: readonly string[] = [
  `CREATE TABLE %s.import_jobs (
    id text PRIMARY KEY,
    client_id text NOT NULL,
    request_id text NOT NULL,
    format text NOT NULL CHECK (format IN ('csv', 'ndjson')),
    ignore_assigned boolean NOT NULL,
    file bytea NOT NULL,
    state text NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    rows bigint NOT NULL DEFAULT 0,
    created bigint NOT NULL DEFAULT 0,
    existing bigint NOT NULL DEFAULT 0,
    refused bigint NOT NULL DEFAULT 0,
    error text,
    lease_owner text,
    lease_until bigint,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    finished_at bigint
  )`,
  `CREATE INDEX import_jobs_waiting ON %s.import_jobs (created_at)
    WHERE state IN ('queued', 'running')`,
  `CREATE TABLE %s.import_job_outcomes (
    job_id text NOT NULL REFERENCES %s.import_jobs (id) ON DELETE CASCADE,
    row bigint NOT NULL,
    outcome text NOT NULL,
    PRIMARY KEY (job_id, row)
  )`,
]
