import fc from 'fast-check'

// An Italian codice fiscale written from the rules of DM 23/12/1976 and the Agenzia delle
// Entrate's description, independently of core/validation/fiscal-code.ts: nothing here is
// imported from the product, so the two can be compared.

/** The person a code is computed for. */
export interface FiscalPerson {
  readonly surname: string
  readonly name: string
  readonly year: number
  readonly month: number
  readonly day: number
  readonly female: boolean
  /** The Belfiore code of the municipality (or Z + country) of birth: a letter and 3 digits. */
  readonly place: string
  /** How many numeric positions carry an omocodia letter, from the right (0–7). */
  readonly omocodia: number
}

const VOWELS = new Set(['A', 'E', 'I', 'O', 'U'])
const MONTHS = ['A', 'B', 'C', 'D', 'E', 'H', 'L', 'M', 'P', 'R', 'S', 'T']
/** Omocodia: the digit 0 becomes L, 1 becomes M, … 9 becomes V. */
export const OMOCODIA: Readonly<Record<string, string>> = {
  '0': 'L',
  '1': 'M',
  '2': 'N',
  '3': 'P',
  '4': 'Q',
  '5': 'R',
  '6': 'S',
  '7': 'T',
  '8': 'U',
  '9': 'V',
}
/** The seven numeric positions (0-based), in the order omocodia replaces them: right to left. */
export const NUMERIC_POSITIONS = [14, 13, 12, 10, 9, 7, 6] as const

// The official conversion table for characters in odd positions (1st, 3rd, … 15th).
const ODD: Readonly<Record<string, number>> = {
  '0': 1,
  '1': 0,
  '2': 5,
  '3': 7,
  '4': 9,
  '5': 13,
  '6': 15,
  '7': 17,
  '8': 19,
  '9': 21,
  A: 1,
  B: 0,
  C: 5,
  D: 7,
  E: 9,
  F: 13,
  G: 15,
  H: 17,
  I: 19,
  J: 21,
  K: 2,
  L: 4,
  M: 18,
  N: 20,
  O: 11,
  P: 3,
  Q: 6,
  R: 8,
  S: 12,
  T: 14,
  U: 16,
  V: 10,
  W: 22,
  X: 25,
  Y: 24,
  Z: 23,
}

// And for characters in even positions (2nd, 4th, … 14th): digits are worth themselves, letters
// their rank from A = 0.
function evenValue(char: string): number {
  return /[0-9]/.test(char) ? Number(char) : char.charCodeAt(0) - 'A'.charCodeAt(0)
}

/** The check character of the first 15 characters of a code. */
export function checkCharacter(first15: string): string {
  let sum = 0
  for (let i = 0; i < 15; i++) {
    const char = first15.charAt(i)
    // Position i + 1 is odd when i is even.
    sum += i % 2 === 0 ? (ODD[char] as number) : evenValue(char)
  }
  return String.fromCharCode('A'.charCodeAt(0) + (sum % 26))
}

function lettersOf(text: string): { consonants: string[]; vowels: string[] } {
  const letters = [
    ...text
      .normalize('NFD')
      .replace(/\p{M}/gu, '')
      .toUpperCase()
      .replace(/[^A-Z]/g, ''),
  ]
  return {
    consonants: letters.filter((letter) => !VOWELS.has(letter)),
    vowels: letters.filter((letter) => VOWELS.has(letter)),
  }
}

/** Three letters for the surname: consonants, then vowels, then X. */
export function surnameCode(surname: string): string {
  const { consonants, vowels } = lettersOf(surname)
  return [...consonants, ...vowels, 'X', 'X', 'X'].slice(0, 3).join('')
}

/** Three letters for the name: the 1st, 3rd and 4th consonant when there are four or more. */
export function nameCode(name: string): string {
  const { consonants, vowels } = lettersOf(name)
  if (consonants.length >= 4) return `${consonants[0]}${consonants[2]}${consonants[3]}`
  return [...consonants, ...vowels, 'X', 'X', 'X'].slice(0, 3).join('')
}

function twoDigits(value: number): string {
  return String(value).padStart(2, '0')
}

/** The code of `person`, omocodia applied, with its check character. */
export function fiscalCode(person: FiscalPerson): string {
  const chars = [
    ...surnameCode(person.surname),
    ...nameCode(person.name),
    ...twoDigits(person.year % 100),
    MONTHS[person.month - 1] as string,
    ...twoDigits(person.day + (person.female ? 40 : 0)),
    ...person.place,
  ]
  for (const position of NUMERIC_POSITIONS.slice(0, person.omocodia)) {
    chars[position] = OMOCODIA[chars[position] as string] as string
  }
  const first15 = chars.join('')
  return first15 + checkCharacter(first15)
}

/** `YYYY-MM-DD` of a person's birth. */
export function birthDateOf(person: FiscalPerson): string {
  return `${person.year}-${twoDigits(person.month)}-${twoDigits(person.day)}`
}

/** Days in a month of a given year (Gregorian). */
export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate()
}

/**
 * The characters each position of a code may hold: letters for the names, the month, the place's
 * letter and the check character; digits or omocodia letters for the seven numeric positions;
 * only the twelve month letters for the month.
 */
export function allowedAt(position: number): string {
  if ((NUMERIC_POSITIONS as readonly number[]).includes(position)) return '0123456789LMNPQRSTUV'
  if (position === 8) return MONTHS.join('')
  return 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'
}

/**
 * An independent validity check, to compare with the product's on near-valid strings: the
 * pattern, a month letter, a day of 1–31 or 41–71 that exists in that month (29 February is
 * allowed whatever the year: the code does not say the century), and the check character.
 */
export function isWellFormedCode(code: string): boolean {
  if (code.length !== 16) return false
  for (let i = 0; i < 16; i++) {
    if (!allowedAt(i).includes(code.charAt(i))) return false
  }
  const digit = (char: string): string => {
    const entry = Object.entries(OMOCODIA).find(([, letter]) => letter === char)
    return entry === undefined ? char : entry[0]
  }
  const month = MONTHS.indexOf(code.charAt(8)) + 1
  const encodedDay = Number(digit(code.charAt(9)) + digit(code.charAt(10)))
  const day = encodedDay > 40 ? encodedDay - 40 : encodedDay
  // A leap year (2000) gives February its 29th day.
  if (day < 1 || day > daysInMonth(2000, month)) return false
  return code.charAt(15) === checkCharacter(code.slice(0, 15))
}

const PLACE_LETTERS = 'ABCDEFGHILMZ'

/** A name-like string of Latin letters, sometimes with accents, apostrophes and spaces. */
export function nameArbitrary(maxWords = 3): fc.Arbitrary<string> {
  const letter = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZÀÈÉÌÒÙÄÖÜÇÑ')
  const word = fc
    .array(letter, { minLength: 1, maxLength: 12 })
    .map((letters) => letters.map((l, i) => (i === 0 ? l : l.toLowerCase())).join(''))
  return fc
    .tuple(
      fc.array(word, { minLength: 1, maxLength: maxWords }),
      fc.constantFrom(' ', ' ', "'", '-'),
    )
    .map(([words, separator]) => words.join(separator))
}

/** A person born between 1900-01-01 and `latest` (`YYYY-MM-DD`), with or without omocodia. */
export function personArbitrary(latest: string): fc.Arbitrary<FiscalPerson> {
  const last = Date.parse(`${latest}T00:00:00Z`)
  const first = Date.UTC(1900, 0, 1)
  return fc
    .record({
      surname: nameArbitrary(),
      name: nameArbitrary(2),
      birth: fc.integer({ min: 0, max: Math.floor((last - first) / 86_400_000) }),
      female: fc.boolean(),
      placeLetter: fc.constantFrom(...PLACE_LETTERS),
      placeNumber: fc.integer({ min: 1, max: 999 }),
      omocodia: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 7 })),
    })
    .map(({ surname, name, birth, female, placeLetter, placeNumber, omocodia }) => {
      const date = new Date(first + birth * 86_400_000)
      return {
        surname,
        name,
        year: date.getUTCFullYear(),
        month: date.getUTCMonth() + 1,
        day: date.getUTCDate(),
        female,
        place: `${placeLetter}${String(placeNumber).padStart(3, '0')}`,
        omocodia,
      }
    })
}
