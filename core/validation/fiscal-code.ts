import type { FieldProblem } from '../errors.js'

// Omocodia: when two people would get the same code, digits are replaced, from the right, by
// these letters (L = 0 … V = 9). Any of the seven numeric positions may carry one.
const OMOCODIA_LETTERS = 'LMNPQRSTUV'
const DIGIT = `[0-9${OMOCODIA_LETTERS}]`
const SHAPE = new RegExp(`^[A-Z]{6}${DIGIT}{2}[ABCDEHLMPRST]${DIGIT}{2}[A-Z]${DIGIT}{3}[A-Z]$`)
const MONTH_LETTERS = 'ABCDEHLMPRST'
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

// The official check-character tables: characters in odd positions (1st, 3rd … 15th) are worth
// ODD_VALUES[index]; those in even positions are worth their index. Digits and letters share a
// table row: '0' counts as 'A', '1' as 'B', and so on.
const ODD_VALUES = [
  1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23,
]

function tableIndex(char: string): number {
  const code = char.charCodeAt(0)
  return code <= 57 ? code - 48 : code - 65
}

function numeric(chars: string): number {
  let value = 0
  for (const char of chars) {
    const omocodia = OMOCODIA_LETTERS.indexOf(char)
    value = value * 10 + (omocodia >= 0 ? omocodia : char.charCodeAt(0) - 48)
  }
  return value
}

/** The birth date a fiscal code encodes; `day` is 41–71 for women. */
interface EncodedBirth {
  readonly yearDigits: number
  readonly month: number
  readonly day: number
}

function encodedBirth(code: string): EncodedBirth | undefined {
  if (!SHAPE.test(code)) return undefined
  return {
    yearDigits: numeric(code.slice(6, 8)),
    month: MONTH_LETTERS.indexOf(code.charAt(8)) + 1,
    day: numeric(code.slice(9, 11)),
  }
}

/**
 * The check character (the 16th) of a codice fiscale whose first 15 characters are those of
 * `code`, by the official tables; characters past the 15th are ignored. `isFiscalCode` compares
 * it with the code's own; a generator of test data appends it to the 15 it made up.
 *
 * @param code - at least 15 characters, upper-case letters and digits, as a fiscal code has them
 *
 * @example
 * fiscalCodeCheckCharacter('RSSMRA85T10A562') // 'S'
 */
export function fiscalCodeCheckCharacter(code: string): string {
  let sum = 0
  for (let position = 0; position < 15; position += 1) {
    const index = tableIndex(code.charAt(position))
    sum += position % 2 === 0 ? (ODD_VALUES[index] as number) : index
  }
  return String.fromCharCode(65 + (sum % 26))
}

/**
 * True when `code` is a well-formed Italian codice fiscale (D8): 16 upper-case characters in the
 * official pattern (omocodia letters allowed in the seven numeric positions), a month letter, a
 * day of 1–31 (men) or 41–71 (women) that exists in that month, and the correct check character.
 * The caller upper-cases input first.
 *
 * @example
 * isFiscalCode('RSSMRA85T10A562S') // true
 */
export function isFiscalCode(code: string): boolean {
  const birth = encodedBirth(code)
  if (birth === undefined) return false
  const day = birth.day > 40 ? birth.day - 40 : birth.day
  if (day < 1 || day > (DAYS_IN_MONTH[birth.month - 1] as number)) return false
  return code.charAt(15) === fiscalCodeCheckCharacter(code)
}

/**
 * The problem with a fiscal code whose encoded birth date disagrees with `dateOfBirth` (D8):
 * the year's last two digits, the month letter and the day (or day + 40) must all match. The core
 * calls it after merging a PUT patch with the stored record, since either field may change alone.
 *
 * Returns `undefined` when they agree, and also when either value is malformed: that is reported
 * by the field's own validation.
 *
 * @param fiscalCode - an upper-case fiscal code, as stored
 * @param dateOfBirth - `YYYY-MM-DD`
 * @returns a problem naming `fiscal_code`, or `undefined`
 */
export function fiscalCodeBirthDateProblem(
  fiscalCode: string,
  dateOfBirth: string,
): FieldProblem | undefined {
  const birth = encodedBirth(fiscalCode)
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(dateOfBirth)
  if (birth === undefined || date === null) return undefined
  const [, year, month, day] = date.map(Number) as [number, number, number, number]
  const agrees =
    birth.yearDigits === year % 100 &&
    birth.month === month &&
    (birth.day === day || birth.day === day + 40)
  return agrees ? undefined : { field: 'fiscal_code', message: 'does not match date_of_birth' }
}
