import type { BeneficiaryFields } from '../../core/beneficiary.js'
import { creationChanges } from '../../core/beneficiary-changes.js'
import { canonicalJson } from '../../core/canonical-json.js'
import type { Sha256 } from '../../core/crypto.js'
import {
  DomainError,
  IdempotencyKeyReusedError,
  StorageUnavailableError,
  ValidationError,
  type FieldProblem,
} from '../../core/errors.js'
import type { Clock } from '../../core/ports/clock.js'
import type { BeneficiaryStore } from '../../core/ports/beneficiary-store.js'
import { isoTime } from '../../core/time.js'
import { parseCreateInput } from '../../core/validation/index.js'
import { STATUS_BY_CODE } from '../error-status.js'
import type { ImportRow } from './import-rows.js'

/** The error body of a refused row: what a POST with the row's body would have been answered. */
export interface RowError {
  readonly error: string
  readonly message: string
  readonly code: number
  readonly details?: readonly FieldProblem[]
}

/**
 * What became of one row: `created` (this run created it), `existing` (an earlier run of the
 * same import created it: nothing was written), or `refused` with the error body a POST would
 * have had.
 */
export type RowOutcome =
  | { readonly row: number; readonly outcome: 'created' | 'existing'; readonly id: number }
  | { readonly row: number; readonly outcome: 'refused'; readonly error: RowError }

/** Who an import acts as, and the key its rows are claimed under. */
export interface ImportIdentity {
  /**
   * The import's own key: each row's create claims `row-N` under the client `import:<importId>`,
   * in the same transaction as the record, so that a second run of the import (after a crash, or
   * of the same file again) creates nothing a first run created.
   */
  readonly importId: string
  /** `client_id` of the history entries (D27). */
  readonly clientId: string
  /** `request_id` of the history entries. */
  readonly requestId: string
}

/** How long a row's claim is kept: an import run again within it creates nothing twice. */
export const IMPORT_CLAIM_DAYS = 90
const DAY_MS = 86_400_000

const BAD_REQUEST = 'bad_request'
const PAYLOAD_TOO_LARGE = 'payload_too_large'

/**
 * Creates the record of each row through the store's own create, as a POST does: the same
 * validation (D7–D10), the same record and `created` history entry (D27), and whatever else the
 * store writes with a create. Rows are created many at a time (`importBatch`): the SQLite
 * adapter commits the writes of one turn of the event loop in one transaction, and the
 * PostgreSQL adapter sends creates made together as one statement, so a batch of rows costs
 * about one transaction.
 */
export class RowImporter {
  readonly #store: BeneficiaryStore
  readonly #clock: Clock
  readonly #sha256: Sha256
  readonly #identity: ImportIdentity

  constructor(store: BeneficiaryStore, clock: Clock, sha256: Sha256, identity: ImportIdentity) {
    this.#store = store
    this.#clock = clock
    this.#sha256 = sha256
    this.#identity = identity
  }

  /**
   * The outcomes of `rows`, in their order, written together. Of rows with one fiscal code, the
   * first is written first, so that it is the one created and the later ones the ones refused,
   * as when the file is imported row by row.
   * @throws StorageUnavailableError when the storage fails: the import stops, and a run again
   *   resumes it.
   */
  async importBatch(rows: readonly ImportRow[]): Promise<RowOutcome[]> {
    const now = this.#clock.now()
    const outcomes: (RowOutcome | undefined)[] = []
    const waves: { index: number; create: Prepared }[][] = []
    const seen = new Map<string, number>()
    for (const row of rows) {
      const prepared = this.#prepare(row, now)
      if (!('fields' in prepared)) {
        outcomes.push(prepared)
        continue
      }
      const code = prepared.fields.fiscal_code
      const wave = code === null ? 0 : (seen.get(code) ?? 0)
      if (code !== null) seen.set(code, wave + 1)
      ;(waves[wave] ??= []).push({ index: outcomes.length, create: prepared })
      outcomes.push(undefined)
    }
    for (const wave of waves) {
      const written = await Promise.all(wave.map(({ create }) => this.#write(create, now)))
      wave.forEach(({ index }, n) => (outcomes[index] = written[n]))
    }
    return outcomes as RowOutcome[]
  }

  /** The outcome of one row. */
  importRow(row: ImportRow): Promise<RowOutcome> {
    const now = this.#clock.now()
    const prepared = this.#prepare(row, now)
    return 'fields' in prepared ? this.#write(prepared, now) : Promise.resolve(prepared)
  }

  /** The row validated as a POST body (D7–D10), or its outcome when it is refused. */
  #prepare(row: ImportRow, now: number): Prepared | RowOutcome {
    if ('problem' in row) {
      const { status, message } = row.problem
      return {
        row: row.row,
        outcome: 'refused',
        error: { error: status === 413 ? PAYLOAD_TOO_LARGE : BAD_REQUEST, message, code: status },
      }
    }
    try {
      return { row: row.row, fields: parseCreateInput(row.body, isoTime(now).slice(0, 10)) }
    } catch (error) {
      if (!(error instanceof DomainError)) throw error
      return { row: row.row, outcome: 'refused', error: rowError(error) }
    }
  }

  /** Creates the row's record, with its history entry and its claim, as a create does. */
  async #write({ row, fields }: Prepared, now: number): Promise<RowOutcome> {
    try {
      const fingerprint = await this.#sha256(canonicalJson(fields))
      const outcome = await this.#store.create(
        { ...fields, status: 'pending', created_at: now, updated_at: now },
        {
          at: now,
          action: 'created',
          client_id: this.#identity.clientId,
          request_id: this.#identity.requestId,
          changes: creationChanges(fields),
        },
        {
          clientId: `import:${this.#identity.importId}`,
          key: `row-${row}`,
          fingerprint,
          expiresAt: now + IMPORT_CLAIM_DAYS * DAY_MS,
          now,
        },
      )
      if (outcome.kind === 'created') return { row, outcome: 'created', id: outcome.record.id }
      if (outcome.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError()
      return { row, outcome: 'existing', id: outcome.beneficiaryId }
    } catch (error) {
      if (error instanceof StorageUnavailableError || !(error instanceof DomainError)) throw error
      return { row, outcome: 'refused', error: rowError(error) }
    }
  }
}

/** A row that passed validation, waiting to be written. */
interface Prepared {
  readonly row: number
  readonly fields: BeneficiaryFields
}

/** The error body a POST answering `error` would carry, without its request id. */
function rowError(error: DomainError): RowError {
  return {
    error: error.code,
    message: error.message,
    code: STATUS_BY_CODE[error.code],
    ...(error instanceof ValidationError && { details: error.details }),
  }
}
