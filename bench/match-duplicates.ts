/**
 * Ground truth for duplicate matching (D38): duplicates planted in seeded data, each a second
 * registration of a seeded person as a desk would make it. A duplicate starts from its original
 * and gets one to three of these changes, drawn by a seeded generator:
 *
 * - `typo`: one letter of a name word of four letters or more inserted, deleted, replaced or
 *   swapped with its neighbour;
 * - `swapped`: first and last names given the other way round;
 * - `email`: another e-mail address;
 * - `phone`: another phone number (only when the original has one);
 * - `diacritics`: the accents dropped (only when a name has some).
 *
 * A duplicate never repeats its original's fiscal code (the service refuses a fiscal code twice,
 * so a second registration cannot carry it), and keeps something that ties it to the person:
 * the original's e-mail, its phone, or its date of birth. Without any of these no rule could
 * tell, and a generator that made such records would measure the data, not the rules.
 */
import type { NewBeneficiary } from '../core/ports/beneficiary-store.js'
import type { BeneficiaryRecord } from '../core/beneficiary.js'
import { SeededRandom } from './seeded-random.js'

/** A kind of change a duplicate may get. */
export type DuplicateChange = 'typo' | 'swapped' | 'email' | 'phone' | 'diacritics'

const CHANGES: readonly DuplicateChange[] = ['typo', 'swapped', 'email', 'phone', 'diacritics']
const LETTERS = 'abcdefghilmnoprstuvz'
const MARKS = /\p{M}+/gu

/** A planted duplicate: the record to store, its original's id, and what was changed. */
export interface PlantedDuplicate {
  readonly originalId: number
  readonly record: NewBeneficiary
  readonly changes: readonly DuplicateChange[]
}

/**
 * Duplicates of `originals` (one each, in order), made by a generator seeded with `seed`:
 * the same originals and seed give the same duplicates.
 */
export function plantDuplicates(
  originals: readonly BeneficiaryRecord[],
  seed: number,
): PlantedDuplicate[] {
  const random = new SeededRandom(seed)
  return originals.map((original, n) => duplicateOf(original, random, n))
}

function duplicateOf(
  original: BeneficiaryRecord,
  random: SeededRandom,
  n: number,
): PlantedDuplicate {
  for (;;) {
    const count = 1 + Math.floor(random.next() * 3)
    const changes = new Set<DuplicateChange>()
    while (changes.size < count) changes.add(CHANGES[Math.floor(random.next() * CHANGES.length)]!)
    if (changes.has('phone') && original.phone === null) continue
    if (changes.has('diacritics') && !hasMarks(original)) continue
    if (changes.has('typo') && !hasLongWord(original)) continue
    const keepsEmail = !changes.has('email')
    const keepsPhone = !changes.has('phone') && original.phone !== null
    if (!keepsEmail && !keepsPhone && original.date_of_birth === null) continue
    return {
      originalId: original.id,
      record: apply(original, changes, random, n),
      changes: [...changes],
    }
  }
}

function apply(
  original: BeneficiaryRecord,
  changes: ReadonlySet<DuplicateChange>,
  random: SeededRandom,
  n: number,
): NewBeneficiary {
  let first = original.first_name
  let last = original.last_name
  if (changes.has('diacritics')) {
    first = stripMarks(first)
    last = stripMarks(last)
  }
  if (changes.has('typo')) {
    const inFirst =
      longWords(first).length > 0 && (longWords(last).length === 0 || random.next() < 0.5)
    if (inFirst) first = typo(first, random)
    else last = typo(last, random)
  }
  if (changes.has('swapped')) [first, last] = [last, first]
  const email = changes.has('email')
    ? `dup${n}.${Math.floor(random.next() * 1e6)}@another-mail.example`
    : original.email
  const phone = changes.has('phone')
    ? `+39345${String(Math.floor(random.next() * 1e7)).padStart(7, '0')}`
    : original.phone
  return {
    first_name: first,
    last_name: last,
    email,
    phone,
    date_of_birth: original.date_of_birth,
    fiscal_code: null,
    address: original.address,
    metadata: { source: 'duplicate' },
    status: 'pending',
    created_at: original.created_at + 1,
    updated_at: original.created_at + 1,
  }
}

function hasMarks(record: BeneficiaryRecord): boolean {
  return stripMarks(record.first_name + record.last_name) !== record.first_name + record.last_name
}

function stripMarks(name: string): string {
  return name.normalize('NFD').replace(MARKS, '').normalize('NFC')
}

function longWords(name: string): string[] {
  return name.split(/[^\p{L}]+/u).filter((word) => [...word].length >= 4)
}

function hasLongWord(record: BeneficiaryRecord): boolean {
  return longWords(record.first_name).length + longWords(record.last_name).length > 0
}

/** One edit in one word of four letters or more, past its first letter. */
function typo(name: string, random: SeededRandom): string {
  const words = longWords(name)
  const word = words[Math.floor(random.next() * words.length)]!
  const letters = [...word]
  const at = 1 + Math.floor(random.next() * (letters.length - 1))
  const letter = LETTERS[Math.floor(random.next() * LETTERS.length)]!
  const kind = Math.floor(random.next() * 4)
  if (kind === 0) letters.splice(at, 0, letter)
  else if (kind === 1) letters.splice(at, 1)
  else if (kind === 2) letters[at] = letters[at] === letter ? 'x' : letter
  else if (at < letters.length - 1)
    [letters[at], letters[at + 1]] = [letters[at + 1]!, letters[at]!]
  else [letters[at - 1], letters[at]] = [letters[at]!, letters[at - 1]!]
  return name.replace(word, letters.join(''))
}
