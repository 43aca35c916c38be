import type { Page } from './beneficiary-store.js'

/**
 * The operation whose answer an access-log entry records (D35), spelt as the log shows it:
 * `status` is the status transition, `match` the duplicate search.
 */
export type AccessOperation = 'get' | 'list' | 'history' | 'update' | 'status' | 'export' | 'match'

/**
 * One answer that carried personal data (D35): who read which records, when, how and why. Ids
 * only, never a personal value: `purpose` is what the client said in `X-Purpose`.
 */
export interface AccessLogEntry {
  readonly at: number
  readonly client_id: string
  readonly request_id: string
  readonly operation: AccessOperation
  /** The ids of the records in the answer, in the answer's order. */
  readonly beneficiary_ids: readonly number[]
  readonly purpose: string | null
}

/** An entry as the store gives it back, with the id the store gave it. */
export interface StoredAccessLogEntry extends AccessLogEntry {
  readonly id: number
}

/** Where a scan of the log resumes: after this entry, in the order `(at, id)`. */
export interface AccessLogCursor {
  readonly at: number
  readonly id: number
}

/** A scan of the whole log, for an operator: every filter given must hold. */
export interface AccessLogScan {
  readonly beneficiaryId?: number
  readonly clientId?: string
  /** Entries at or after this instant. */
  readonly from?: number
  /** Entries before this instant. */
  readonly before?: number
  /** Entries after this one (the last of the previous batch). */
  readonly after?: AccessLogCursor
  readonly limit: number
}

/** What the store counted since it opened; for metrics. */
export interface AccessLogStats {
  /** Entries committed. */
  readonly written: number
  /** Entries recorded and not yet committed. */
  readonly pending: number
  /** Batches whose write failed (their entries stay pending and are written again). */
  readonly failedFlushes: number
  /** Requests that waited for room because `pending` reached its bound (back-pressure). */
  readonly waits: number
  /** Requests refused (503) after waiting too long for room: the storage took no batch. */
  readonly refused: number
}

/**
 * The table of the access log, as an adapter writes and reads it: every call is one statement
 * or one transaction. `BufferedAccessLog` (core) puts batching in front of it.
 */
export interface AccessLogTable {
  /** Inserts the entries and their per-record index in one transaction. */
  append(entries: readonly AccessLogEntry[]): Promise<void>
  /** The entries that name `beneficiaryId`, oldest first (`at`, then `id`), and how many there are. */
  forBeneficiary(
    beneficiaryId: number,
    offset: number,
    limit: number,
  ): Promise<Page<StoredAccessLogEntry>>
  /** Entries matching `query`, oldest first (`at`, then `id`), at most `query.limit`. */
  scan(query: AccessLogScan): Promise<readonly StoredAccessLogEntry[]>
  /** Deletes at most `limit` of the oldest entries older than `before`; how many it deleted. */
  purge(before: number, limit: number): Promise<number>
}

/**
 * The access log (D35): `record` is on the request's path and only queues; the entries reach
 * the table in batches off that path, at least every second. What a crash can lose is what
 * was queued and not yet committed: at most the last second of entries.
 */
export interface AccessLogStore extends Omit<AccessLogTable, 'append'> {
  /**
   * Queues `entry`. Returns `undefined`, or a promise when the queue is full (the storage
   * falls behind): the caller waits for room, so memory stays bounded and no entry is dropped;
   * the promise rejects with `StorageUnavailableError` when no room comes in time.
   */
  record(entry: AccessLogEntry): Promise<void> | undefined
  /** Commits everything queued so far. */
  flush(): Promise<void>
  /** Counters for metrics. */
  readonly stats: AccessLogStats
  /** Commits what is queued and stops the timer; `record` throws afterwards. */
  close(): Promise<void>
}
