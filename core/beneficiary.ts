/**
 * The beneficiary resource as the core and its storage ports see it. Field names are the
 * specification's (section 2.1); timestamps are epoch milliseconds here and become ISO 8601 UTC
 * strings only in the shapes the API returns (see `shapes.ts`).
 */

/** A beneficiary's status (specification section 3). */
export type BeneficiaryStatus = 'active' | 'inactive' | 'pending'

/** Every status, in a fixed order. */
export const BENEFICIARY_STATUSES: readonly BeneficiaryStatus[] = ['active', 'inactive', 'pending']

/** Postal address (specification section 2.2); all four fields are required when present (D8). */
export interface Address {
  readonly street: string
  readonly city: string
  readonly postal_code: string
  /** ISO 3166-1 alpha-2, upper case. */
  readonly country: string
}

/** Flat free-form metadata: at most 50 keys, scalar values (D8). */
export type Metadata = Readonly<Record<string, string | number | boolean>>

/** The fields a client may write (POST, PUT), already validated and normalised. */
export interface BeneficiaryFields {
  readonly first_name: string
  readonly last_name: string
  readonly email: string
  readonly phone: string | null
  readonly date_of_birth: string | null
  readonly fiscal_code: string | null
  readonly address: Address | null
  readonly metadata: Metadata
}

/** Names of the writable fields, in the order of the specification's table. */
export const WRITABLE_FIELDS = [
  'first_name',
  'last_name',
  'email',
  'phone',
  'date_of_birth',
  'fiscal_code',
  'address',
  'metadata',
] as const satisfies readonly (keyof BeneficiaryFields)[]

/** A stored beneficiary: the writable fields plus what the service assigns. */
export interface BeneficiaryRecord extends BeneficiaryFields {
  readonly id: number
  readonly status: BeneficiaryStatus
  /** Epoch milliseconds. */
  readonly created_at: number
  /** Epoch milliseconds. */
  readonly updated_at: number
  /** Starts at 1 and grows by one with every change; the ETag is derived from it (D23). */
  readonly version: number
}

/** The columns a list page needs (specification 2.1, "In list item"). */
export type BeneficiarySummary = Pick<
  BeneficiaryRecord,
  'id' | 'first_name' | 'last_name' | 'email' | 'phone' | 'status' | 'created_at' | 'updated_at'
>

/** Fields that may be sorted on (D15). */
export type SortField = 'id' | 'created_at' | 'updated_at' | 'last_name' | 'first_name'

/** What a change did, as recorded in the history (D27). */
export type HistoryAction = 'created' | 'updated' | 'status_changed' | 'deleted'

/** One changed field in a history entry. */
export interface FieldChange {
  readonly field: string
  readonly old: unknown
  readonly new: unknown
}

/** One entry in a beneficiary's history (D27). */
export interface HistoryEntry {
  /** Epoch milliseconds. */
  readonly at: number
  readonly action: HistoryAction
  readonly client_id: string
  readonly request_id: string
  readonly changes: readonly FieldChange[]
}
