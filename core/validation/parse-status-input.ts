import { Compile } from 'typebox/compile'
import type { BeneficiaryStatus } from '../beneficiary.js'
import { StatusBody } from './beneficiary-schemas.js'
import { normaliseText } from './normalise-text.js'
import { requireObjectBody } from './plain-object.js'
import { ProblemList } from './problem-list.js'
import { schemaProblems } from './schema-problems.js'

/** A validated status change request (D14). */
export interface StatusInput {
  /** May be `pending`: the core refuses it with `invalid_transition`, not as a validation error. */
  readonly status: BeneficiaryStatus
  /** Trimmed, 1–500 characters; absent when the body had none or only spaces. */
  readonly reason?: string
}

const validator = Compile(StatusBody)
const FIELDS = new Set(Object.keys(StatusBody.properties))

/**
 * Validates the body of `POST /beneficiaries/{id}/status` (D14): `status` is one of `active`,
 * `inactive`, `pending`; `reason` an optional string of at most 500 characters.
 *
 * @throws BadRequestError `bad_request` when the body is not a JSON object (D12)
 * @throws ValidationError `validation_failed` for a missing or unknown status, a bad reason or
 *   an unknown field (D9, D10)
 */
export function parseStatusInput(body: unknown): StatusInput {
  const fields = requireObjectBody(body)
  const problems = new ProblemList()
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(fields)) {
    const value = fields[key]
    if (value === undefined) continue
    if (FIELDS.has(key)) copy[key] = normaliseText(value, key, problems)
    else problems.add(key, 'is not a known field')
  }
  problems.addAll(schemaProblems(validator, copy))
  problems.throwIfAny()
  const status = copy.status as BeneficiaryStatus
  const reason = copy.reason as string | undefined
  return reason === undefined || reason === '' ? { status } : { status, reason }
}
