import type { TValidationError } from 'typebox/error'
import type { Validator } from 'typebox/compile'
import { Settings } from 'typebox/system'
import type { FieldProblem } from '../errors.js'

// TypeBox stops collecting after `maxErrors` (8 by default, a guard against huge inputs). The
// values checked here were rebuilt from known fields only and metadata is capped at 50 keys
// before validation, so a few hundred errors is the most any request can produce.
const ERROR_CAPACITY = 1000

const TYPE_NAMES: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
}

const NO_PROBLEMS: readonly FieldProblem[] = []

/** Per-field messages for `pattern`, `format` and `enum` failures, keyed by dotted field path. */
export type FormatMessages = Readonly<Record<string, string>>

/** The errors of one value, found by its JSON pointer (keys may hold dots, never a bare `/`). */
interface Located {
  readonly segments: readonly string[]
  readonly errors: TValidationError[]
}

function segmentsOf(instancePath: string): string[] {
  return instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
}

function pointerOf(segments: readonly string[]): string {
  return segments
    .map((segment) => `/${segment.replaceAll('~', '~0').replaceAll('/', '~1')}`)
    .join('')
}

function valueAt(root: unknown, segments: readonly string[]): unknown {
  let value = root
  for (const segment of segments) value = (value as Readonly<Record<string, unknown>>)[segment]
  return value
}

// Only reached with at least one `type` error: a union whose branches fail otherwise leaves a
// more specific error, or errors on inner fields.
function typeMessage(errors: readonly TValidationError[], value: unknown): string {
  if (value === null) return 'must not be null'
  const names = errors.flatMap((error) =>
    error.keyword === 'type'
      ? [error.params.type].flat().map((type) => TYPE_NAMES[type] ?? type)
      : [],
  )
  const unique = [...new Set(names)]
  const last = unique.pop()
  return unique.length === 0 ? `must be ${last}` : `must be ${unique.join(', ')} or ${last}`
}

function describe(error: TValidationError, field: string, messages: FormatMessages): string {
  switch (error.keyword) {
    case 'required':
      return 'is required'
    case 'dependentRequired':
      return `is required when ${error.params.property} is given`
    case 'minLength':
      return error.params.limit === 1
        ? 'must not be empty'
        : `must be at least ${error.params.limit} characters`
    case 'maxLength':
      return `must be at most ${error.params.limit} characters`
    case 'minimum':
      return `must be at least ${error.params.limit}`
    case 'maximum':
      return `must be at most ${error.params.limit}`
    case 'enum':
      return messages[field] ?? `must be one of: ${error.params.allowedValues.join(', ')}`
    default:
      return messages[field] ?? 'is invalid'
  }
}

function collectErrors(validator: Validator, value: unknown): TValidationError[] {
  const previous = Settings.Get().maxErrors
  Settings.Set({ maxErrors: ERROR_CAPACITY })
  try {
    return validator.Errors(value)
  } finally {
    Settings.Set({ maxErrors: previous })
  }
}

/**
 * Validates `value` and turns every TypeBox error into one `{field, message}` per field, with
 * dotted paths (D10). Union noise is folded: a nullable field that fails gets the message of the
 * branch that applies, `must be a string or null` when no branch does, and an object whose
 * members fail is not reported itself. Messages never repeat the value.
 *
 * @param validator - a compiled schema
 * @param value - the normalised copy to check
 * @param messages - wording for `pattern`, `format` and `enum` failures by dotted field
 */
export function schemaProblems(
  validator: Validator,
  value: unknown,
  messages: FormatMessages = {},
): readonly FieldProblem[] {
  if (validator.Check(value)) return NO_PROBLEMS

  const located = new Map<string, Located>()
  const note = (segments: readonly string[], error: TValidationError): void => {
    const pointer = pointerOf(segments)
    const entry = located.get(pointer)
    if (entry === undefined) located.set(pointer, { segments, errors: [error] })
    else entry.errors.push(error)
  }
  for (const error of collectErrors(validator, value)) {
    const segments = segmentsOf(error.instancePath)
    // These two are reported on the object but are about a member: name the member.
    if (error.keyword === 'required') {
      for (const name of error.params.requiredProperties) note([...segments, name], error)
    } else if (error.keyword === 'dependentRequired') {
      for (const name of error.params.dependencies) note([...segments, name], error)
    } else {
      note(segments, error)
    }
  }

  const problems: FieldProblem[] = []
  for (const [pointer, { segments, errors }] of located) {
    const field = segments.join('.')
    const specific = errors.find((error) => error.keyword !== 'type' && error.keyword !== 'anyOf')
    if (specific !== undefined) {
      problems.push({ field, message: describe(specific, field, messages) })
      continue
    }
    // Only type/anyOf errors: either the value has the wrong type, or it is an object in a
    // nullable union whose members failed and are reported on their own.
    const inner = [...located.keys()].some((other) => other.startsWith(`${pointer}/`))
    if (!inner) problems.push({ field, message: typeMessage(errors, valueAt(value, segments)) })
  }
  return problems
}
