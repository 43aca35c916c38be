/** Where an import job stands (D39). */
export type ImportJobState = 'queued' | 'running' | 'done' | 'failed'

/** How many rows of a job have an outcome, by outcome. */
export interface ImportJobCounts {
  readonly rows: number
  readonly created: number
  readonly existing: number
  readonly refused: number
}

/** An import job as stored (its file aside). */
export interface ImportJob {
  /** Random, URL-safe: the job's id and the import id its rows are claimed under. */
  readonly id: string
  /** The client that started it: the only one that may read it, and the history's `client_id`. */
  readonly clientId: string
  /** The request that started it: the history's `request_id` of every record it creates. */
  readonly requestId: string
  readonly format: 'csv' | 'ndjson'
  readonly ignoreAssigned: boolean
  readonly state: ImportJobState
  readonly counts: ImportJobCounts
  /** Why a `failed` job stopped (never personal data); `null` otherwise. */
  readonly error: string | null
  /** Epoch milliseconds. */
  readonly createdAt: number
  readonly updatedAt: number
  readonly finishedAt: number | null
}

/** A job to store, with the file it imports. */
export interface NewImportJob {
  readonly id: string
  readonly clientId: string
  readonly requestId: string
  readonly format: 'csv' | 'ndjson'
  readonly ignoreAssigned: boolean
  readonly file: Uint8Array
  readonly createdAt: number
}

/** A job an instance holds the lease of, with its file. */
export interface LeasedImportJob {
  readonly job: ImportJob
  readonly file: Uint8Array
}

/** One row's outcome, as the job's report keeps it: its row and its JSON line. */
export interface StoredOutcome {
  readonly row: number
  readonly json: string
}

/**
 * Import jobs (D39), kept with the storage so that they survive a restart and run on exactly
 * one instance of several sharing a database: an instance takes a job by its lease, renews it
 * with every batch, and another may take it over only once the lease ran out.
 */
export interface ImportJobStore {
  /** Stores a new job, `queued`. */
  create(job: NewImportJob): Promise<ImportJob>
  /** The job, or `undefined`. */
  get(id: string): Promise<ImportJob | undefined>
  /** A page of the job's outcomes by row, and how many it has. */
  outcomes(
    id: string,
    offset: number,
    limit: number,
  ): Promise<{ readonly items: readonly StoredOutcome[]; readonly total: number }>
  /**
   * Leases the oldest job that is `queued`, or `running` with a lease that ran out (its
   * instance stopped), to `owner` until `now + leaseMs`, and marks it `running`. Of callers at
   * once, one gets a given job.
   */
  lease(owner: string, now: number, leaseMs: number): Promise<LeasedImportJob | undefined>
  /**
   * Adds a batch's outcomes (replacing any of the same rows) and sets the counts, renewing the
   * lease, in one transaction; `false`, writing nothing, when `owner` no longer holds the lease.
   */
  progress(
    id: string,
    owner: string,
    outcomes: readonly StoredOutcome[],
    counts: ImportJobCounts,
    now: number,
    leaseMs: number,
  ): Promise<boolean>
  /** Ends the job (`done` or `failed`), dropping its file; `false` when `owner` lost the lease. */
  finish(
    id: string,
    owner: string,
    state: 'done' | 'failed',
    error: string | null,
    now: number,
  ): Promise<boolean>
}
