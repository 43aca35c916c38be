import {
  EMPTY_VALUES,
  WRITABLE_FIELDS,
  type BeneficiaryFields,
  type BeneficiaryRecord,
  type BeneficiaryStatus,
  type FieldChange,
} from './beneficiary.js'
import { canonicalJson } from './canonical-json.js'
import { InvalidTransitionError, ValidationError } from './errors.js'
import {
  fiscalCodeBirthDateProblem,
  type BeneficiaryPatch,
  type StatusInput,
} from './validation/index.js'

/** A decided change: the record as it should become, and what changed for the history (D27). */
export interface Decision {
  readonly next: BeneficiaryRecord
  readonly changes: readonly FieldChange[]
}

/** Where each status may move (D14); nothing moves a beneficiary back to `pending`. */
const TRANSITIONS: Readonly<Record<BeneficiaryStatus, readonly BeneficiaryStatus[]>> = {
  pending: ['active', 'inactive'],
  active: ['inactive'],
  inactive: ['active'],
}

/**
 * The record after a partial update (D11): the patch's fields replace the current ones.
 * @throws ValidationError when the merged fiscal code and date of birth disagree (D8)
 */
export function decideUpdate(current: BeneficiaryRecord, patch: BeneficiaryPatch): Decision {
  const next: Record<string, unknown> = { ...current }
  for (const field of WRITABLE_FIELDS) {
    if (patch[field] !== undefined) next[field] = patch[field]
  }
  const record = next as unknown as BeneficiaryRecord
  // Each part was checked alone when the body named both; a patch naming one meets the other here.
  if (
    record.fiscal_code !== null &&
    record.date_of_birth !== null &&
    (patch.fiscal_code !== undefined || patch.date_of_birth !== undefined)
  ) {
    const problem = fiscalCodeBirthDateProblem(record.fiscal_code, record.date_of_birth)
    if (problem !== undefined) throw new ValidationError([problem])
  }
  return { next: record, changes: changesBetween(current, record) }
}

/**
 * The record after a status change (D14); asking for the current status changes nothing.
 * @throws InvalidTransitionError for a move the state machine does not allow
 */
export function decideStatusChange(current: BeneficiaryRecord, input: StatusInput): Decision {
  // Nothing moves a beneficiary back to pending, not even from pending (D14).
  if (input.status === 'pending') throw new InvalidTransitionError(current.status, input.status)
  if (input.status === current.status) return { next: current, changes: [] }
  if (!TRANSITIONS[current.status].includes(input.status)) {
    throw new InvalidTransitionError(current.status, input.status)
  }
  const changes: FieldChange[] = [{ field: 'status', old: current.status, new: input.status }]
  if (input.reason !== undefined) changes.push({ field: 'reason', old: null, new: input.reason })
  return { next: { ...current, status: input.status }, changes }
}

/** The history's changes of a create: every field set, then the status it starts in (D27). */
export function creationChanges(fields: BeneficiaryFields): FieldChange[] {
  return [...changesBetween(undefined, fields), { field: 'status', old: null, new: 'pending' }]
}

/** The writable fields that differ, with old and new values (D27); `before` absent for a create. */
function changesBetween(
  before: BeneficiaryFields | undefined,
  after: BeneficiaryFields,
): FieldChange[] {
  const changes: FieldChange[] = []
  for (const field of WRITABLE_FIELDS) {
    const old = before === undefined ? emptyValue(field) : before[field]
    const value = after[field]
    if (!sameValue(old, value)) changes.push({ field, old, new: value })
  }
  return changes
}

/** Equal field values: strings and `null` as they are, `address` and `metadata` by their JSON. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  return canonicalJson(a) === canonicalJson(b)
}

/** What a field held before a create: its empty value (a required field: nothing, `null`). */
function emptyValue(field: keyof BeneficiaryFields): unknown {
  return (EMPTY_VALUES as Readonly<Record<string, unknown>>)[field] ?? null
}
