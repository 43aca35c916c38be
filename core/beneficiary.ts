/**
 * The beneficiary, defined once: the specification's table 2.1 as TypeBox schemas, from which
 * the request bodies, the three response shapes, their static types and the field lists that
 * the parsers, the change history and the adapters iterate all follow. A field is added here
 * (and in each adapter's column map, which fails to compile until it is). The statuses and the
 * lists of fields by shape are plain constants in `beneficiary-fields.ts`, re-exported here, so
 * that the adapters read them without loading TypeBox.
 *
 * Field names are the specification's; timestamps are epoch milliseconds in the stored record
 * and ISO 8601 UTC strings in the shapes the API returns.
 */
import Type from 'typebox'
import type { Static, TNull, TObject, TOptional, TSchema, TUnion } from 'typebox'
import {
  Address as AddressSchema,
  DateOfBirth,
  Email,
  FiscalCode,
  Metadata as MetadataSchema,
  PersonName,
  Phone,
  Nullable,
  Status,
  Timestamp,
} from './validation/beneficiary-schemas.js'

import { ASSIGNED_FIELDS, CREATED_FIELDS, LIST_ITEM_FIELDS } from './beneficiary-fields.js'

export {
  ASSIGNED_FIELDS,
  BENEFICIARY_STATUSES,
  CREATED_FIELDS,
  LIST_ITEM_FIELDS,
} from './beneficiary-fields.js'

/** A beneficiary's status (specification section 3). */
export type BeneficiaryStatus = Static<typeof Status>

/** Postal address (specification section 2.2); all four fields are required when present (D8). */
export type Address = Readonly<Static<typeof AddressSchema>>

/** Flat free-form metadata: at most 50 keys, scalar values (D8). */
export type Metadata = Readonly<Static<typeof MetadataSchema>>

/**
 * The detail shape (specification 2.1): every field, in the order of the specification's table.
 * `GET /beneficiaries/{id}`, PUT and status changes answer it.
 */
export const BeneficiaryDetail = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  first_name: PersonName,
  last_name: PersonName,
  email: Email,
  phone: Nullable(Phone),
  date_of_birth: Nullable(DateOfBirth),
  fiscal_code: Nullable(FiscalCode),
  address: Nullable(AddressSchema),
  status: Status,
  metadata: MetadataSchema,
  created_at: Timestamp,
  updated_at: Timestamp,
})

/** The detail shape (specification 2.1). */
export type BeneficiaryDetail = Readonly<Static<typeof BeneficiaryDetail>>

/** The list item shape (specification 2.1). */
export const BeneficiaryListItem = Type.Pick(BeneficiaryDetail, LIST_ITEM_FIELDS)
/** The list item shape (specification 2.1). */
export type BeneficiaryListItem = Readonly<Static<typeof BeneficiaryListItem>>

/** The create response shape (specification 2.1, 4.5). */
export const BeneficiaryCreated = Type.Pick(BeneficiaryDetail, CREATED_FIELDS)
/** The create response shape (specification 2.1, 4.5). */
export type BeneficiaryCreated = Readonly<Static<typeof BeneficiaryCreated>>

/** The fields a client may write (POST, PUT), as stored once validated and normalised. */
export const WritableFields = Type.Omit(BeneficiaryDetail, ASSIGNED_FIELDS)
/** The fields a client may write (POST, PUT), already validated and normalised. */
export type BeneficiaryFields = Readonly<Static<typeof WritableFields>>

/** A writable field's name. */
export type WritableField = keyof BeneficiaryFields

/** Names of the writable fields, in the order of the specification's table. */
export const WRITABLE_FIELDS = Object.freeze(
  Object.keys(WritableFields.properties) as WritableField[],
) as readonly WritableField[]

/** The fields a create must carry (D7); the others may be absent or `null`. */
export const REQUIRED_FIELDS = ['first_name', 'last_name', 'email'] as const

type OptionalField = Exclude<WritableField, (typeof REQUIRED_FIELDS)[number]>

/** What an optional field holds when a create leaves it out, or a body sends `null` (D7, D11). */
export const EMPTY_VALUES: { readonly [K in OptionalField]: BeneficiaryFields[K] } = Object.freeze({
  phone: null,
  date_of_birth: null,
  fiscal_code: null,
  address: null,
  metadata: Object.freeze({}),
})

const REQUIRED = new Set<string>(REQUIRED_FIELDS)

type WritableSchemas = (typeof WritableFields)['properties']
type RequiredField = (typeof REQUIRED_FIELDS)[number]
type OrNull<S extends TSchema> = S extends TUnion ? S : TUnion<[S, TNull]>

/**
 * The properties of a body, as `bodyProperties` builds them, for the static types: a required
 * field as it is (optional too in an update); an optional field also `null`, and optional.
 */
type BodyProperties<Create extends boolean> = {
  [K in keyof WritableSchemas]: K extends RequiredField
    ? Create extends true
      ? WritableSchemas[K]
      : TOptional<WritableSchemas[K]>
    : TOptional<OrNull<WritableSchemas[K]>>
}

// A body property: a required field as it is; an optional one may also be absent or null.
function bodyProperties<Create extends boolean>(create: Create): BodyProperties<Create> {
  const properties: Record<string, TSchema> = {}
  for (const field of WRITABLE_FIELDS) {
    const schema: TSchema = WritableFields.properties[field]
    const optional = !REQUIRED.has(field)
    const nullable = !optional || Type.IsUnion(schema) ? schema : Nullable(schema)
    properties[field] = create && !optional ? nullable : Type.Optional(nullable)
  }
  // The loop builds what the mapped type states; `test/core/typed-inputs.test.ts` checks both.
  return properties as BodyProperties<Create>
}

/**
 * Body of `POST /beneficiaries` (D7–D9): `first_name`, `last_name` and `email` are required; an
 * optional field that is absent or `null` is stored as `null` (`metadata` as `{}`).
 */
export const CreateBeneficiaryBody: TObject<BodyProperties<true>> = Type.Object(
  bodyProperties(true),
  { additionalProperties: false },
)

/**
 * What `create` takes (D7–D9), derived from the schema: a field name the service does not know
 * does not compile. The service still validates every value at run time (formats, lengths, the
 * fiscal code), so a body that compiles may still be refused with `validation_failed`.
 *
 * @example
 * const body: CreateBeneficiaryBody = { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.org' }
 */
export type CreateBeneficiaryBody = Static<typeof CreateBeneficiaryBody>

/**
 * Body of `PUT /beneficiaries/{id}` (D11): every field optional; `null` clears an optional field
 * (`metadata` becomes `{}`); `address` and `metadata` replace the whole object.
 */
export const UpdateBeneficiaryBody: TObject<BodyProperties<false>> = Type.Object(
  bodyProperties(false),
  { additionalProperties: false },
)

/** What `update` takes (D11), derived from the schema: every field optional, `null` clears one. */
export type UpdateBeneficiaryBody = Static<typeof UpdateBeneficiaryBody>

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

/** The columns a list page needs: the list item's fields. */
export type BeneficiarySummary = Pick<BeneficiaryRecord, (typeof LIST_ITEM_FIELDS)[number]>

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
