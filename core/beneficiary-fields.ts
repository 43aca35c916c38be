/**
 * The beneficiary's statuses and field lists as plain constants, with no schema library behind
 * them: the storage adapters read them, and the SQLite adapter's writer thread loads the adapter
 * in a V8 isolate of its own, where importing TypeBox (through `beneficiary.ts`, which builds
 * the schemas from these lists and re-exports them) took 235 ms of its 500 ms start on a slow
 * machine. The lists are the specification's table 2.1, checked against the schemas' types.
 */
import type { BeneficiaryDetail } from './beneficiary.js'

/** Every status (specification section 3), in a fixed order. */
export const BENEFICIARY_STATUSES = ['active', 'inactive', 'pending'] as const

/** The fields the service assigns; a body may not set them (D9). The rest are writable. */
export const ASSIGNED_FIELDS = ['id', 'status', 'created_at', 'updated_at'] as const

/** The specification's column "In list item". */
export const LIST_ITEM_FIELDS = [
  'id',
  'first_name',
  'last_name',
  'email',
  'phone',
  'status',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof BeneficiaryDetail)[]

/** The specification's column "In create response". */
export const CREATED_FIELDS = [
  'id',
  'first_name',
  'last_name',
  'email',
  'status',
  'created_at',
] as const satisfies readonly (keyof BeneficiaryDetail)[]
