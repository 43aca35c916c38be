import type {
  BeneficiaryFields,
  BeneficiaryRecord,
  BeneficiaryStatus,
  BeneficiarySummary,
  HistoryEntry,
  SortField,
} from '../beneficiary.js'

/** A filtered, sorted page request, already validated by the core (D15–D18). */
export interface ListQuery {
  /** Rows to skip: `(page - 1) * per_page`. */
  readonly offset: number
  /** Rows to return: `per_page`, 1–100. */
  readonly limit: number
  /** Only this status. */
  readonly status?: BeneficiaryStatus
  /** Only records created at or after this instant (epoch ms, inclusive). */
  readonly createdFrom?: number
  /** Only records created before this instant (epoch ms, exclusive). */
  readonly createdBefore?: number
  /**
   * Search terms from `searchTerms()`: lower-case, accent-free words. A record matches when every
   * term is a prefix of some word of its first or last name (as split by `searchTerms()`). An
   * empty array matches nothing (the query had no searchable characters).
   */
  readonly search?: readonly string[]
  /**
   * Sort key (D15). Names sort by their search words joined by one space (`searchTerms(name).join(' ')`),
   * then by the raw name, both by Unicode code point (SQLite's BINARY collation), then by id.
   * A descending sort is exactly the ascending order reversed, so ties fall to descending `id`.
   */
  readonly sort: SortField
  readonly descending: boolean
}

/** One page of results with the exact number of records matching the filters. */
export interface Page<T> {
  readonly items: readonly T[]
  /** Every record matching the filters, regardless of paging. */
  readonly total: number
}

/** A record to insert: the validated fields plus what the service assigns, except `id`. */
export interface NewBeneficiary extends BeneficiaryFields {
  readonly status: BeneficiaryStatus
  readonly created_at: number
  readonly updated_at: number
}

/** An Idempotency-Key to claim in the same transaction as a create (D22). */
export interface IdempotencyClaim {
  readonly clientId: string
  readonly key: string
  /** Hash of the normalised request body; the core compares it on replay. */
  readonly fingerprint: string
  /** The claim is ignored (and may be overwritten) once `now >= expiresAt`. */
  readonly expiresAt: number
  /** The current time, to tell live claims from expired ones. */
  readonly now: number
}

/** What `create` did. */
export type CreateOutcome =
  | { readonly kind: 'created'; readonly record: BeneficiaryRecord }
  | {
      /** A live claim with the same client and key existed: nothing was written. */
      readonly kind: 'claimed'
      readonly fingerprint: string
      readonly beneficiaryId: number
      /** `created_at` of the record the claim created (the claim outlives a delete of it). */
      readonly createdAt: number
    }

/** An access token as `SessionStore.isTokenActive` takes it: its `sid`, `jti` and `sub` claims. */
export interface TokenIdentity {
  readonly sessionId: string
  readonly jti: string
  /** `sub`: the client the session must belong to. */
  readonly clientId: string
}

/** What `BeneficiaryStore.getForToken` found. */
export type TokenRead =
  | { readonly active: false }
  | { readonly active: true; readonly record: BeneficiaryRecord | undefined }

/** What a compare-and-swap write did. */
export type WriteOutcome = 'done' | 'missing' | 'conflict'

/**
 * Storage of beneficiaries and their history. Every method that changes more than one row
 * (a record and its history entry, a create and its idempotency claim) does so atomically.
 *
 * Adapters translate driver failures into domain errors before they cross this port: a
 * violated fiscal-code uniqueness constraint becomes `ConflictError('fiscal_code')`.
 */
export interface BeneficiaryStore {
  /** The record with this id, or `undefined`. */
  get(id: number): Promise<BeneficiaryRecord | undefined>

  /**
   * Optional: `SessionStore.isTokenActive(token.sessionId, token.jti, token.clientId)` and `get(id)` answered
   * together, for a store whose every call is a round trip to a database server. When a store
   * has it, the core reads the one record a get or a change starts from with it, so that the
   * token's check costs no round trip of its own (D30 keeps the check in the database). The
   * answers are those of the two calls; `active: false` carries no record.
   */
  getForToken?(id: number, token: TokenIdentity): Promise<TokenRead>

  /** One page of summaries matching `query`, with the exact total count. */
  list(query: ListQuery): Promise<Page<BeneficiarySummary>>

  /**
   * Inserts a record and its `created` history entry, and claims `idempotency` if given, in one
   * transaction. When a live claim for the same client and key exists, writes nothing and
   * returns it (a live claim wins over the uniqueness check, so a replay is never a conflict).
   * Claims are not deleted with their record.
   * @throws ConflictError (`fiscal_code`) when the fiscal code is in use; nothing is written.
   */
  create(
    record: NewBeneficiary,
    entry: HistoryEntry,
    idempotency?: IdempotencyClaim,
  ): Promise<CreateOutcome>

  /**
   * Replaces the record `previous` with `next` (same `id`) and appends `entry`, in one
   * transaction, only if its stored version is still `previous.version` (`next.version` is
   * `previous.version + 1`). `previous` is the record as `get` returned it at that version: an
   * adapter may work out what changes from it, without reading the record again. Returns
   * `missing` when there is no such record and `conflict` when the version moved on.
   * @throws ConflictError (`fiscal_code`) when the new fiscal code is in use; nothing is written.
   */
  update(
    previous: BeneficiaryRecord,
    next: BeneficiaryRecord,
    entry: HistoryEntry,
  ): Promise<WriteOutcome>

  /**
   * Deletes the record, in one transaction with: erasing the personal values of its history
   * (every earlier entry keeps `at`, `action`, `client_id`, `request_id`, and its `changes`
   * become empty) and appending `entry` (D13, D27). With `expectedVersion`, deletes only if
   * the stored version still equals it.
   */
  remove(
    id: number,
    expectedVersion: number | undefined,
    entry: HistoryEntry,
  ): Promise<WriteOutcome>

  /** A page of the record's history, oldest first; `undefined` when the record does not exist. */
  history(id: number, offset: number, limit: number): Promise<Page<HistoryEntry> | undefined>
}
