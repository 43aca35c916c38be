import type { ImportJob } from '../../core/ports/import-job-store.js'

/** The columns of `import_jobs` a job is read from, its file aside: a {@link ImportJobRow}. */
export const IMPORT_JOB_COLUMNS = `id, client_id, request_id, format, ignore_assigned, state, rows, created,
  existing, refused, error, created_at, updated_at, finished_at`

/** A row of {@link IMPORT_JOB_COLUMNS}. */
export interface ImportJobRow {
  id: string
  client_id: string
  request_id: string
  format: 'csv' | 'ndjson'
  /** 0 or 1 on SQLite, which has no boolean; a boolean on PostgreSQL. */
  ignore_assigned: number | boolean
  state: ImportJob['state']
  rows: number
  created: number
  existing: number
  refused: number
  error: string | null
  created_at: number
  updated_at: number
  finished_at: number | null
}

/** The job a row of {@link IMPORT_JOB_COLUMNS} holds. */
export function importJobOf(row: ImportJobRow): ImportJob {
  return {
    id: row.id,
    clientId: row.client_id,
    requestId: row.request_id,
    format: row.format,
    ignoreAssigned: row.ignore_assigned === true || row.ignore_assigned === 1,
    state: row.state,
    counts: { rows: row.rows, created: row.created, existing: row.existing, refused: row.refused },
    error: row.error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
  }
}
