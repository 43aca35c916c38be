import assert from 'node:assert/strict'
import { ValidationError } from '../../../core/errors.js'
import type { FieldProblem } from '../../../core/errors.js'

/** Runs `fn`, asserts it throws `validation_failed`, and returns the details. */
export function problemsOf(fn: () => unknown): readonly FieldProblem[] {
  try {
    fn()
  } catch (error) {
    assert.ok(error instanceof ValidationError, `expected a ValidationError, got ${String(error)}`)
    assert.equal(error.code, 'validation_failed')
    return error.details
  }
  assert.fail('expected a ValidationError')
}

/** The sorted field names of the problems `fn` throws. */
export function fieldsOf(fn: () => unknown): string[] {
  return problemsOf(fn)
    .map((problem) => problem.field)
    .sort()
}

// Odd-position values of the official table, listed in order of value: 'B' (and '1') is worth
// 0, 'A' (and '0') 1, 'K' 2 … Written independently of the table in the module under test.
const BY_ODD_VALUE = 'BAKPLCQDREVOSFTGUHMINJWZYX'

/** Appends the check character to the first 15 characters of a codice fiscale. */
export function withCheckCharacter(first15: string): string {
  let sum = 0
  ;[...first15].forEach((char, index) => {
    const letter = /[0-9]/.test(char) ? String.fromCharCode(65 + Number(char)) : char
    const even = letter.charCodeAt(0) - 65
    sum += index % 2 === 0 ? BY_ODD_VALUE.indexOf(letter) : even
  })
  return first15 + String.fromCharCode(65 + (sum % 26))
}
