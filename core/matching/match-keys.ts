import { parsePhoneNumberFromString } from 'libphonenumber-js/min'
import { searchTerms } from '../search-terms.js'

/**
 * The region a phone number written without `+` is read in: the service registers people with
 * Italian fiscal codes, so a national number is an Italian one (`3331234567` is `+393331234567`).
 */
export const DEFAULT_PHONE_REGION = 'IT'

/** The e-mail address as matching compares it: trimmed and lower-cased. */
export function emailMatchKey(email: string): string {
  return email.trim().toLowerCase()
}

/**
 * The phone number in E.164 (`+393331234567`), parsed with libphonenumber-js (its `min`
 * metadata: enough to parse and format every region), a national number read as Italian;
 * `undefined` when it is not a possible number anywhere.
 */
export function phoneMatchKey(phone: string): string | undefined {
  const parsed = parsePhoneNumberFromString(phone, DEFAULT_PHONE_REGION)
  if (parsed === undefined || !parsed.isPossible()) return undefined
  return parsed.number
}

/**
 * The full name as matching compares it: the words of `searchTerms()` of the first name, then of
 * the last, joined by single spaces (`"Nicolò D'Angelo"` is `nicolo d angelo`).
 */
export function nameMatchKey(firstName: string, lastName: string): string {
  return [...searchTerms(firstName), ...searchTerms(lastName)].join(' ')
}

/** The match keys of a record, as every storage adapter stores them. */
export interface StoredMatchKeys {
  readonly email_key: string
  readonly phone_key: string | null
  readonly name_key: string
}

/** The keys a storage adapter keeps for a record, in step with every write of it. */
export function storedMatchKeys(record: {
  readonly first_name: string
  readonly last_name: string
  readonly email: string
  readonly phone: string | null
}): StoredMatchKeys {
  return {
    email_key: emailMatchKey(record.email),
    phone_key: record.phone === null ? null : (phoneMatchKey(record.phone) ?? null),
    name_key: nameMatchKey(record.first_name, record.last_name),
  }
}

/**
 * The date with day and month swapped (`1985-03-10` gives `1985-10-03`), when that is another
 * real date; else `undefined`.
 */
export function swappedDate(date: string): string | undefined {
  const year = Number(date.slice(0, 4))
  const month = Number(date.slice(5, 7))
  const day = Number(date.slice(8, 10))
  if (day === month || day > 12) return undefined
  const swapped = `${date.slice(0, 4)}-${date.slice(8, 10)}-${date.slice(5, 7)}`
  const check = new Date(Date.UTC(year, day - 1, month))
  return check.getUTCMonth() === day - 1 && check.getUTCDate() === month ? swapped : undefined
}

/** The trigrams of a folded name, as `pg_trgm` takes them: each word as `"  word "`. */
export function nameTrigrams(name: string): Set<string> {
  const grams = new Set<string>()
  for (const word of name.split(' ')) {
    if (word === '') continue
    const padded = `  ${word} `
    for (let i = 0; i + 3 <= padded.length; i++) grams.add(padded.slice(i, i + 3))
  }
  return grams
}

/** Shared trigrams over all trigrams of the two sets (`pg_trgm`'s `similarity`), 0–1. */
export function trigramSimilarity(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let shared = 0
  for (const gram of a) if (b.has(gram)) shared++
  const all = a.size + b.size - shared
  return all === 0 ? 0 : shared / all
}
