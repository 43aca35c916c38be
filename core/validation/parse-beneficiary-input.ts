import { Compile } from 'typebox/compile'
import type { Validator } from 'typebox/compile'
import { IsDate } from 'typebox/format'
import {
  ASSIGNED_FIELDS,
  CreateBeneficiaryBody,
  EMPTY_VALUES,
  UpdateBeneficiaryBody,
  WRITABLE_FIELDS,
  type BeneficiaryFields,
} from '../beneficiary.js'
import { Address, RESERVED_KEYS } from './beneficiary-schemas.js'
import { fiscalCodeBirthDateProblem } from './fiscal-code.js'
import {
  hasControlCharacters,
  hasHiddenCharacters,
  normaliseName,
  normaliseText,
} from './normalise-text.js'
import { isPlainObject, requireObjectBody } from './plain-object.js'
import { ProblemList } from './problem-list.js'
import { schemaProblems } from './schema-problems.js'
import type { FormatMessages } from './schema-problems.js'

/** A partial update (D11): only the fields the body named; `null` has become the cleared value. */
export type BeneficiaryPatch = { readonly [K in keyof BeneficiaryFields]?: BeneficiaryFields[K] }

type Fields = Record<string, unknown>

const createValidator = Compile(CreateBeneficiaryBody)
const updateValidator = Compile(UpdateBeneficiaryBody)

const WRITABLE = new Set<string>(WRITABLE_FIELDS)
const READ_ONLY = new Set<string>(ASSIGNED_FIELDS)
const RESERVED = new Set<string>(RESERVED_KEYS)
const ADDRESS_FIELDS = Object.keys(Address.properties)
const ADDRESS_FIELD_SET = new Set(ADDRESS_FIELDS)
const MAX_METADATA_KEYS = 50
const MAX_METADATA_KEY_LENGTH = 64
const EARLIEST_BIRTH_DATE = '1900-01-01'
const PHONE_SEPARATORS = /[\s().-]/g

const MESSAGES: FormatMessages = {
  email: 'is not a valid e-mail address',
  phone: 'must be 6 to 15 digits, optionally after a +',
  date_of_birth: 'must be a real calendar date written YYYY-MM-DD',
  fiscal_code: 'is not a valid Italian fiscal code',
  'address.postal_code': 'may contain only letters, digits, spaces and hyphens',
  'address.country': 'is not an assigned ISO 3166-1 alpha-2 country code',
}

// An own `__proto__` key made by JSON.parse must stay a plain property: defining it, rather than
// assigning it, never touches a prototype. Every caller has refused that name already (it is
// neither a field nor an address part, and it is reserved in metadata); the check stays so that
// this holds on its own. Any other name is assigned: defining each property cost a create more
// than its JSON parse.
function define(target: Fields, key: string, value: unknown): void {
  if (key !== '__proto__') {
    target[key] = value
    return
  }
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  })
}

// The copy takes the schema's key order, whatever the body's: stored and returned alike.
function normaliseAddress(value: unknown, problems: ProblemList): unknown {
  if (!isPlainObject(value)) return value
  for (const key of Object.keys(value)) {
    if (!ADDRESS_FIELD_SET.has(key)) problems.add(`address.${key}`, 'is not a known field')
  }
  const copy: Fields = {}
  for (const key of ADDRESS_FIELDS) {
    if (!Object.hasOwn(value, key)) continue
    const text = normaliseText(value[key], `address.${key}`, problems)
    copy[key] = key === 'country' && typeof text === 'string' ? text.toUpperCase() : text
  }
  return copy
}

function normaliseMetadata(value: unknown, problems: ProblemList): unknown {
  if (!isPlainObject(value)) return value
  const keys = Object.keys(value)
  // Checking values past the limit would only let a large body buy a large error list.
  if (keys.length > MAX_METADATA_KEYS) {
    problems.add('metadata', `must have at most ${MAX_METADATA_KEYS} keys`)
    return undefined
  }
  const copy: Fields = {}
  for (const key of keys) {
    const field = `metadata.${key}`
    const length = [...key].length
    if (RESERVED.has(key)) problems.add(field, 'is a reserved name')
    else if (length === 0 || length > MAX_METADATA_KEY_LENGTH) {
      problems.add('metadata', `keys must be 1 to ${MAX_METADATA_KEY_LENGTH} characters`)
    } else if (hasControlCharacters(key)) {
      problems.add('metadata', 'keys must not contain control characters')
    } else if (hasHiddenCharacters(key)) {
      problems.add('metadata', 'keys must not contain invisible or formatting characters')
    } else define(copy, key, normaliseText(value[key], field, problems))
  }
  return copy
}

function normaliseField(key: string, value: unknown, problems: ProblemList): unknown {
  switch (key) {
    case 'address':
      return normaliseAddress(value, problems)
    case 'metadata':
      return normaliseMetadata(value, problems)
    case 'phone': {
      const text = normaliseText(value, key, problems)
      return typeof text === 'string' ? text.replace(PHONE_SEPARATORS, '') : text
    }
    case 'first_name':
    case 'last_name':
      return normaliseName(value, key, problems)
    case 'fiscal_code': {
      const text = normaliseText(value, key, problems)
      return typeof text === 'string' ? text.toUpperCase() : text
    }
    default:
      return normaliseText(value, key, problems)
  }
}

// Builds a copy holding only the writable fields, normalised; every other name becomes a problem
// here (D9), so the schema sees nothing unknown and the copy is small however large the body.
function normaliseBody(body: Readonly<Fields>, problems: ProblemList): Fields {
  const copy: Fields = {}
  for (const key of Object.keys(body)) {
    const value = body[key]
    if (value === undefined) continue
    if (!WRITABLE.has(key)) {
      problems.add(key, READ_ONLY.has(key) ? 'is read-only' : 'is not a known field')
      continue
    }
    const normalised = normaliseField(key, value, problems)
    if (normalised !== undefined) define(copy, key, normalised)
  }
  return copy
}

function checkDates(copy: Fields, today: string, problems: ProblemList): void {
  const { date_of_birth: birth, fiscal_code: code } = copy
  if (typeof birth !== 'string' || problems.has('date_of_birth')) return
  if (birth < EARLIEST_BIRTH_DATE) {
    problems.add('date_of_birth', `must not be before ${EARLIEST_BIRTH_DATE}`)
  } else if (birth > today) {
    problems.add('date_of_birth', 'must not be in the future')
  } else if (typeof code === 'string' && !problems.has('fiscal_code')) {
    const problem = fiscalCodeBirthDateProblem(code, birth)
    if (problem !== undefined) problems.add(problem.field, problem.message)
  }
}

function validate(body: unknown, today: string, validator: Validator): Fields {
  if (!IsDate(today)) throw new TypeError('today must be a date written YYYY-MM-DD')
  const problems = new ProblemList()
  const copy = normaliseBody(requireObjectBody(body), problems)
  problems.addAll(schemaProblems(validator, copy, MESSAGES))
  checkDates(copy, today, problems)
  problems.throwIfAny()
  return copy
}

/**
 * Validates and normalises the body of `POST /beneficiaries` (D7–D10). Strings are trimmed and
 * NFC-normalised, `phone` is compacted, `fiscal_code` and `address.country` are upper-cased.
 * Optional fields that are absent or `null` become `null`; `metadata` becomes `{}`.
 *
 * @param body - the parsed JSON body
 * @param today - the current UTC date, `YYYY-MM-DD`, from the core's clock: `date_of_birth` may
 *   not be later
 * @throws BadRequestError `bad_request` when the body is not a JSON object (D12)
 * @throws ValidationError `validation_failed` listing every problem, one per field, with dotted
 *   paths such as `address.country` (D10); unknown and read-only fields included (D9)
 * @throws TypeError when `today` is not a date
 *
 * @example
 * const fields = parseCreateInput(
 *   { first_name: 'Mario', last_name: 'Rossi', email: 'mario@example.it' },
 *   '2025-01-31',
 * )
 * fields.phone // null
 */
export function parseCreateInput(body: unknown, today: string): BeneficiaryFields {
  const copy = validate(body, today, createValidator)
  const fields: Fields = {}
  // Required fields are in the copy once validated; an optional one absent or null is empty.
  for (const field of WRITABLE_FIELDS) fields[field] = copy[field] ?? emptyValue(field)
  return fields as unknown as BeneficiaryFields
}

/**
 * Validates and normalises the body of `PUT /beneficiaries/{id}` (D11): the same rules as
 * {@link parseCreateInput}, every field optional. `null` clears an optional field (`metadata`
 * becomes `{}`); `null` for `first_name`, `last_name` or `email` is a problem. The result holds
 * only the fields the body named. When both `fiscal_code` and `date_of_birth` are in the body
 * they must agree; the core checks the merged record with {@link fiscalCodeBirthDateProblem}.
 *
 * @throws BadRequestError `bad_request` when the body is not a JSON object (D12)
 * @throws ValidationError `validation_failed` listing every problem (D9, D10)
 * @throws TypeError when `today` is not a date
 */
export function parseUpdateInput(body: unknown, today: string): BeneficiaryPatch {
  const copy = validate(body, today, updateValidator)
  const patch: Fields = {}
  for (const field of WRITABLE_FIELDS) {
    if (Object.hasOwn(copy, field)) patch[field] = copy[field] ?? emptyValue(field)
  }
  return patch as BeneficiaryPatch
}

function emptyValue(field: string): unknown {
  return (EMPTY_VALUES as Readonly<Record<string, unknown>>)[field]
}
